// `npm run backup -- <file>`: a consistent copy of the database while the service runs (SQLite's online
// backup API), in one file. Stored files (knowledge originals, audio) are plain files under the data dir: copy those
// too. The trigram index's file (cairn-trigrams.db, src/knowledge/trigrams.ts) is derived from the passages and is
// not copied: the first start after a restore makes it again. The outbox file (cairn-outbox.db: webhook messages and
// delivery records, src/db/outbox-file.ts) is copied into the same file, as tables the first start after a restore
// moves back into an outbox file of their own (whatever outbox file it finds there is replaced).
import Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'
import { ConfigError, loadConfig } from '../config.js'
import { hasMovedTables, MOVED_TABLES, outboxFile } from '../db/outbox-file.js'

// the copy holds password hashes and sealed secrets: readable by this user only, as the data dir
process.umask(0o077)
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
const sidecars = (file: string) => [`${file}-wal`, `${file}-shm`, `${file}-journal`]
/**
 * each file in one step: SQLite starts a backup over when another connection writes its source between two steps,
 * and the service writes the outbox file every few tens of milliseconds (a step reads under a read transaction of
 * the WAL, which writers do not wait for)
 */
const whole = { progress: () => 0x7fffffff }
/** the outbox file's copy, until its rows are in the target */
const outboxCopy = `${target}.outbox`
const db = new Database(source, { fileMustExist: true })
db.pragma('busy_timeout = 5000')
try {
  const started = Date.now()
  // the outbox file first: every message's event is then in the main file's copy, and the events it had not expanded
  // yet are expanded after a restore (copied the other way round, events written between the two copies would be
  // taken for expanded)
  const outboxSource = outboxFile(source)
  let outboxPages = 0
  if (fs.existsSync(outboxSource)) {
    const outbox = new Database(outboxSource, { fileMustExist: true })
    try {
      outbox.pragma('busy_timeout = 5000')
      outboxPages = (await outbox.backup(outboxCopy, whole)).totalPages
    } finally {
      outbox.close()
    }
  }
  const { totalPages } = await db.backup(target, whole)
  // the copy is a single self-contained file: rollback journal, so no -wal/-shm appear beside it (the
  // service switches a restored copy back to WAL when it opens it)
  const check = new Database(target)
  let integrity: unknown
  try {
    check.pragma('journal_mode = DELETE')
    // a main file that still has moved tables (a move a crash cut short) has the outbox's rows already
    if (outboxPages > 0 && !hasMovedTables(check)) {
      check.prepare('ATTACH DATABASE ? AS outbox').run(outboxCopy)
      check.transaction(() => {
        for (const [table, from] of MOVED_TABLES) check.exec(`CREATE TABLE ${table} AS SELECT * FROM outbox.${from}`)
      })()
      check.exec('DETACH DATABASE outbox')
    }
    integrity = check.pragma('integrity_check', { simple: true })
  } finally {
    check.close()
  }
  for (const extra of sidecars(target)) fs.rmSync(extra, { force: true })
  if (integrity !== 'ok') throw new Error(`the copy failed its integrity check: ${String(integrity)}`)
  console.error(`backed up ${source} to ${target}: ${totalPages + outboxPages} pages in ${Date.now() - started} ms`)
} catch (err) {
  for (const f of [target, ...sidecars(target)]) fs.rmSync(f, { force: true })
  console.error(`backup failed: ${(err as Error).message}`)
  process.exitCode = 1
} finally {
  db.close()
  for (const f of [outboxCopy, ...sidecars(outboxCopy)]) fs.rmSync(f, { force: true })
}
