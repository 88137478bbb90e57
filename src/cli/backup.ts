// `npm run backup -- <file>`: a consistent copy of the database while the service runs (SQLite's online
// backup API). Stored files (knowledge originals, audio) are plain files under the data dir: copy those too.
import Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'
import { loadConfig } from '../config.js'

const target = process.argv[2]
if (!target) {
  console.error('usage: npm run backup -- <file>')
  process.exit(2)
}
const config = loadConfig()
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
  const check = new Database(target, { readonly: true })
  const integrity = check.pragma('integrity_check', { simple: true })
  check.close()
  if (integrity !== 'ok') throw new Error(`the copy failed its integrity check: ${String(integrity)}`)
  console.error(`backed up ${source} to ${target}: ${totalPages} pages in ${Date.now() - started} ms`)
} catch (err) {
  fs.rmSync(target, { force: true })
  console.error(`backup failed: ${(err as Error).message}`)
  process.exitCode = 1
} finally {
  db.close()
}
