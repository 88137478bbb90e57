// `npm run backup -- <file>`: a consistent copy of the database while the service runs (SQLite's online
// backup API). Stored files (knowledge originals, audio) are plain files under the data dir: copy those too.
// The trigram index's file (cairn-trigrams.db, src/knowledge/trigrams.ts) is derived from the passages and is not
// copied: the first start after a restore makes it again.
import Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'
import { ConfigError, loadConfig } from '../config.js'

const target = process.argv[2]
if (!target) {
  console.error('usage: npm run backup -- <file>')
  process.exit(2)
}
let config
try {
  config = loadConfig()
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(`cannot back up: ${err.problems.join('; ')}`)
  process.exit(1)
}
const source = path.join(config.dataDir, 'cairn.db')
if (!fs.existsSync(source)) {
  console.error(`no database at ${source} (CAIRN_DATA_DIR=${config.dataDir})`)
  process.exit(1)
}
if (fs.existsSync(target)) {
  console.error(`${target} exists: refusing to overwrite`)
  process.exit(1)
}
const db = new Database(source, { fileMustExist: true })
db.pragma('busy_timeout = 5000')
try {
  const started = Date.now()
  const { totalPages } = await db.backup(target)
  // the copy is a single self-contained file: rollback journal, so no -wal/-shm appear beside it (the
  // service switches a restored copy back to WAL when it opens it)
  const check = new Database(target)
  check.pragma('journal_mode = DELETE')
  const integrity = check.pragma('integrity_check', { simple: true })
  check.close()
  for (const extra of [`${target}-wal`, `${target}-shm`, `${target}-journal`]) fs.rmSync(extra, { force: true })
  if (integrity !== 'ok') throw new Error(`the copy failed its integrity check: ${String(integrity)}`)
  console.error(`backed up ${source} to ${target}: ${totalPages} pages in ${Date.now() - started} ms`)
} catch (err) {
  for (const f of [target, `${target}-wal`, `${target}-shm`, `${target}-journal`]) fs.rmSync(f, { force: true })
  console.error(`backup failed: ${(err as Error).message}`)
  process.exitCode = 1
} finally {
  db.close()
}
