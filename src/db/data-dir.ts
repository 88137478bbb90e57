import fs from 'node:fs'
import path from 'node:path'

export const DIR_MODE = 0o700
export const FILE_MODE = 0o600

/**
 * The data directory holds password hashes, signing secrets and every stored file: only the service's
 * user may read it. Creates it 0700, and brings an existing tree to 0700 (directories) and 0600 (files,
 * the database's -wal and -shm included). Returns what was changed, for the log.
 */
export function secureDataDir(dir: string): string[] {
  const changed: string[] = []
  fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE })
  const fix = (p: string, mode: number) => {
    const st = fs.lstatSync(p)
    if (st.isSymbolicLink()) return
    const current = st.mode & 0o777
    if (current === mode) return
    fs.chmodSync(p, mode)
    changed.push(`${p}: ${current.toString(8).padStart(4, '0')} -> ${mode.toString(8).padStart(4, '0')}`)
  }
  const walk = (d: string) => {
    fix(d, DIR_MODE)
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name)
      if (entry.isDirectory()) walk(p)
      else if (entry.isFile()) fix(p, FILE_MODE)
    }
  }
  walk(dir)
  return changed
}

/**
 * Files and directories the process creates from now on get no group or other rights (the database's
 * -wal/-shm take the database file's mode; stored uploads, extracted text and audio take this mask).
 */
export function restrictNewFiles() {
  process.umask(0o077)
}
