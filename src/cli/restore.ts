// `npm run restore -- <file>`: puts a backup archive made by `npm run backup` (src/cli/backup.ts) into an empty data
// dir, after checking it: the manifest, the database copy's integrity, every file it names. Nothing is written to
// the data dir until the whole archive has been checked; a failed restore leaves the data dir as it was.
import Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'
import * as tar from 'tar'
import { ARCHIVE_FORMAT, commandStart, KEY_FILES, MANIFEST, safeEntry, unheldFiles, type Manifest } from './archive.js'

const { file: source, config } = commandStart(
  'npm run restore -- <file>   (into an empty CAIRN_DATA_DIR; stop Cairn first)', 'restore')
const dataDir = config.dataDir
if (!fs.existsSync(source)) {
  console.error(`restore failed: ${source} does not exist`)
  process.exit(1)
}
fs.mkdirSync(dataDir, { recursive: true })
const present = fs.readdirSync(dataDir).filter((name) => !name.startsWith('.'))
if (present.length > 0) {
  console.error(`restore failed: ${dataDir} is not empty (${present.slice(0, 5).join(', ')}` +
    `${present.length > 5 ? ', …' : ''}): restore into an empty data dir, or move its contents away first`)
  process.exit(1)
}

const staging = path.join(dataDir, `.restore-${process.pid}`)
fs.mkdirSync(staging)
try {
  const started = Date.now()
  const refused: string[] = []
  await tar.extract({
    file: source, cwd: staging, strict: true,
    filter: (entry) => {
      const ok = safeEntry(entry)
      if (!ok) refused.push(entry)
      return ok
    }
  })
  if (refused.length > 0) throw new Error(`the archive names paths outside the data dir: ${refused.join(', ')}`)
  const manifestFile = path.join(staging, MANIFEST)
  if (!fs.existsSync(manifestFile)) throw new Error(`not a Cairn backup (no ${MANIFEST} in it)`)
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest
  if (manifest.format !== ARCHIVE_FORMAT) {
    throw new Error(`a backup of format ${String(manifest.format)}: this version reads format ${ARCHIVE_FORMAT}`)
  }
  const missing = [manifest.database, ...manifest.files].filter((f) => !safeEntry(f) ||
    !fs.existsSync(path.join(staging, f)))
  if (missing.length > 0) {
    throw new Error(`the archive lacks ${missing.length} of its files: ${missing.slice(0, 5).join(', ')}`)
  }
  const db = new Database(path.join(staging, manifest.database), { fileMustExist: true })
  let integrity: unknown
  try {
    integrity = db.pragma('integrity_check', { simple: true })
  } finally {
    db.close()
  }
  if (integrity !== 'ok') throw new Error(`the database copy fails its integrity check: ${String(integrity)}`)
  // not a reason to refuse (what the archive holds is restored), but said: the backup was of a data dir missing files
  const unheld = await unheldFiles(path.join(staging, manifest.database), staging)

  // checked: move everything into place (renames within one file system)
  for (const rel of [...manifest.files, manifest.database]) {
    const to = path.join(dataDir, rel === manifest.database ? 'cairn.db' : rel)
    fs.mkdirSync(path.dirname(to), { recursive: true })
    fs.renameSync(path.join(staging, rel), to)
    if (KEY_FILES.includes(rel) || rel === manifest.database) fs.chmodSync(to, 0o600)
  }
  const keys = KEY_FILES.filter((k) => manifest.files.includes(k))
  console.error(`restored ${source} into ${dataDir}: the database of ${manifest.created_at}, ` +
    `${manifest.files.length - keys.length} stored files and ${keys.length} key files, in ${Date.now() - started} ms`)
  if (keys.length < KEY_FILES.length) {
    console.error(`note: the backup has no ${KEY_FILES.filter((k) => !keys.includes(k)).join(', ')} ` +
      '(made anew at start: without jwt-secret everyone signs in again, without webhook-key each webhook\'s ' +
      'secret must be rotated)')
  }
  if (unheld) console.error(`note: ${unheld}: the data dir this backup was made from had already lost them`)
} catch (err) {
  // nothing was moved unless every check passed; a failure while moving leaves what moved, named here
  console.error(`restore failed: ${(err as Error).message}`)
  process.exitCode = 1
} finally {
  fs.rmSync(staging, { recursive: true, force: true })
}
