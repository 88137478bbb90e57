// What a backup archive holds and how it is read back: shared by `npm run backup` and `npm run restore`.
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { ConfigError, loadConfig, type Config } from '../config.js'
import { findMissingStoredFiles } from '../startup/stored-files.js'

/**
 * The start of both commands: files readable by this user only (an archive holds password hashes and sealed
 * secrets), the file argument, and the configuration; a usage line (exit 2) or the configuration's problems (exit 1)
 * otherwise.
 */
export function commandStart(usage: string, verb: string): { file: string; config: Config } {
  process.umask(0o077)
  const file = process.argv[2]
  if (!file) {
    console.error(`usage: ${usage}`)
    process.exit(2)
  }
  try {
    return { file, config: loadConfig() }
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    console.error(`cannot ${verb}: ${err.problems.join('; ')}`)
    process.exit(1)
  }
}

/** The archive's first entry: what it holds, for `restore` to check before it writes anything. */
export const MANIFEST = 'cairn-backup.json'
export const ARCHIVE_FORMAT = 1

export interface Manifest {
  format: number
  created_at: string
  /** the database copy's name inside the archive */
  database: string
  /** every other file, relative to the data dir (stored files and the key files) */
  files: string[]
  bytes: number
}

/** The key files of the data dir (src/kept-secret.ts): without them, sessions, webhook secrets and throttles reset. */
export const KEY_FILES = ['jwt-secret', 'webhook-key', 'login-throttle-key']
/** Folders of stored files: knowledge originals and extracted text, voice-note audio. */
export const STORED_DIRS = [path.join('knowledge', 'originals'), path.join('knowledge', 'text'),
  path.join('voice', 'audio')]

/**
 * The files of the data dir that a backup carries besides the database, relative to it: the key files and the
 * stored files. Not carried: the database files (copied consistently instead), the trigram index (rebuilt at
 * start), uploads and transcriptions in flight, and anything else an operator keeps there (earlier backups too).
 */
export function dataFiles(dataDir: string): string[] {
  const out = KEY_FILES.filter((name) => fs.statSync(path.join(dataDir, name), { throwIfNoEntry: false })?.isFile())
  const walk = (rel: string) => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(path.join(dataDir, rel), { withFileTypes: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
      throw err
    }
    for (const entry of entries) {
      const child = path.join(rel, entry.name)
      if (entry.isDirectory()) walk(child)
      else if (entry.isFile()) out.push(child)
    }
  }
  for (const dir of STORED_DIRS) walk(dir)
  return out.sort()
}

/** true when a path from an archive stays inside the directory it is extracted to */
export function safeEntry(name: string): boolean {
  const normal = path.posix.normalize(name.replace(/\\/g, '/'))
  return normal !== '' && !normal.startsWith('/') && !normal.startsWith('../') && normal !== '..'
}

/**
 * The stored files a database copy names that `dir` (the data dir laid out as an archive holds it) lacks, in words,
 * or undefined when it holds every one: a backup of a data dir that had lost files says so, and so does a restore.
 */
export async function unheldFiles(databaseFile: string, dir: string): Promise<string | undefined> {
  const db = new Database(databaseFile, { readonly: true, fileMustExist: true })
  try {
    let m
    try {
      m = await findMissingStoredFiles(drizzle(db), dir)
    } catch (err) {
      return `the stored files could not be checked (${(err as Error).message})`
    }
    if (m.documents === 0 && m.audio === 0) return undefined
    const parts = [m.documents > 0 ? `${m.documents} document${m.documents === 1 ? '' : 's'}` : '',
      m.audio > 0 ? `${m.audio} uploaded audio file${m.audio === 1 ? '' : 's'}` : ''].filter(Boolean)
    return `the database names stored files that are not there: ${parts.join(' and ')} (e.g. ` +
      `${[...m.examples.documents, ...m.examples.audio].slice(0, 3).join(', ')}); their downloads answer 410 ` +
      'STORED_FILE_MISSING'
  } finally {
    db.close()
  }
}
