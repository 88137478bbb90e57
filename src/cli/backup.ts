// `npm run backup -- <file>`: one archive (tar; gzip-compressed when the name ends in .gz or .tgz) holding everything
// a restore needs, taken while the service runs: a consistent copy of the database (SQLite's online backup API), the
// stored files (knowledge originals and extracted text, voice-note audio) and the key files (jwt-secret,
// webhook-key, login-throttle-key). `npm run restore -- <file>` (src/cli/restore.ts) checks it and restores it into
// an empty data dir. The trigram index's file (cairn-trigrams.db, src/knowledge/trigram-file.ts) is derived from the
// passages and is not copied: the first start after a restore makes it again. The outbox file (cairn-outbox.db:
// webhook messages and delivery records, src/db/outbox-file.ts) is copied into the database's copy, as tables the
// first start after a restore moves back into an outbox file of their own.
//
// The database is copied first, then the files: a file stored after the copy is simply not named by it, and one a
// deletion removed in between is reported, not silently left out.
import Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'
import { hasMovedTables, MOVED_TABLES, outboxFile } from '../db/outbox-file.js'
import * as tar from 'tar'
import { ARCHIVE_FORMAT, commandStart, dataFiles, MANIFEST, unheldFiles, type Manifest } from './archive.js'

const { file: target, config } = commandStart('npm run backup -- <file>', 'back up')
const source = path.join(config.dataDir, 'cairn.db')
if (!fs.existsSync(source)) {
  console.error(`no database at ${source} (CAIRN_DATA_DIR=${config.dataDir})`)
  process.exit(1)
}
if (fs.existsSync(target)) {
  console.error(`${target} exists: refusing to overwrite`)
  process.exit(1)
}
const archive = path.resolve(target)
fs.mkdirSync(path.dirname(archive), { recursive: true })
// the database's copy and links to the files are gathered in a hidden folder of the data dir (the same file
// system, so the files are hard links, not copies), then written into the archive in one go
const staging = path.join(config.dataDir, `.backup-${process.pid}`)
fs.rmSync(staging, { recursive: true, force: true })
fs.mkdirSync(staging)
const databaseCopy = path.join(staging, 'cairn.db')
const sidecars = (file: string) => [`${file}-wal`, `${file}-shm`, `${file}-journal`]
/**
 * each file in one step: SQLite starts a backup over when another connection writes its source between two steps,
 * and the service writes the outbox file every few tens of milliseconds (a step reads under a read transaction of
 * the WAL, which writers do not wait for)
 */
const whole = { progress: () => 0x7fffffff }
/** the outbox file's copy, until its rows are in the target */
const outboxCopy = `${databaseCopy}.outbox`
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
  const { totalPages } = await db.backup(databaseCopy, whole)
  // the copy is a single self-contained file: rollback journal, so no -wal/-shm appear beside it (the
  // service switches a restored copy back to WAL when it opens it)
  const check = new Database(databaseCopy)
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
  for (const extra of sidecars(databaseCopy)) fs.rmSync(extra, { force: true })
  if (integrity !== 'ok') throw new Error(`the copy failed its integrity check: ${String(integrity)}`)
  const { files, gone, bytes } = linkFiles(config.dataDir, staging)
  // rows whose files the data dir had already lost (a deletion while the backup ran is counted in `gone`)
  const unheld = await unheldFiles(databaseCopy, staging)
  const manifest: Manifest = { format: ARCHIVE_FORMAT, created_at: new Date().toISOString(), database: 'cairn.db',
    files, bytes: bytes + fs.statSync(databaseCopy).size }
  fs.writeFileSync(path.join(staging, MANIFEST), JSON.stringify(manifest, null, 2) + '\n')
  await tar.create({ file: archive, cwd: staging, portable: true, gzip: /\.(t?gz)$/.test(archive) },
    [MANIFEST, 'cairn.db', ...files])
  console.error(`backed up ${config.dataDir} to ${target}: the database (${totalPages + outboxPages} pages) and ` +
    `${files.length} files, ${(manifest.bytes / 1048576).toFixed(1)} MB, in ${Date.now() - started} ms` +
    (gone.length > 0 ? `; ${gone.length} files were deleted while the backup ran and are not in it` : ''))
  if (unheld) console.error(`note: ${unheld}, in this data dir and after a restore of this backup`)
} catch (err) {
  fs.rmSync(archive, { force: true })
  console.error(`backup failed: ${(err as Error).message}`)
  process.exitCode = 1
} finally {
  db.close()
  fs.rmSync(staging, { recursive: true, force: true })
}

/** Hard links (copies across file systems) of the data dir's files in `into`, with the same relative paths. */
function linkFiles(dataDir: string, into: string) {
  const files: string[] = []
  const gone: string[] = []
  let bytes = 0
  for (const rel of dataFiles(dataDir)) {
    const from = path.join(dataDir, rel)
    const to = path.join(into, rel)
    fs.mkdirSync(path.dirname(to), { recursive: true })
    try {
      try {
        fs.linkSync(from, to)
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code
        if (code !== 'EXDEV' && code !== 'EPERM') throw err
        fs.copyFileSync(from, to)
      }
      bytes += fs.statSync(to).size
      files.push(rel)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      gone.push(rel)
    }
  }
  return { files, gone, bytes }
}
