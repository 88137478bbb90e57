import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

/**
 * A random secret generated once and kept in a file of the data dir (0600, the dir 0700): the JWT secret when none
 * is configured, the webhook secrets' key. Several processes starting at once agree on the first one written.
 */
export function keptSecret(dataDir: string, name: string): string {
  const file = path.join(dataDir, name)
  try {
    return fs.readFileSync(file, 'utf8').trim()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const secret = randomBytes(32).toString('base64url')
  try {
    fs.writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' })
    return secret
  } catch (err) {
    // another process created it first: use theirs
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim()
    throw err
  }
}
