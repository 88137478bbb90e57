import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { openDatabase } from '../../src/db/index.js'
import { tempDir } from '../helper.js'

const size = (f: string) => fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0

function fill(db: ReturnType<typeof openDatabase>, megabytes: number) {
  db.sqlite.exec('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body BLOB)')
  const insert = db.sqlite.prepare('INSERT INTO filler (body) VALUES (?)')
  for (let i =
    0; i < megabytes; i++) db.sqlite.transaction(() => {
    for (let j = 0; j < 16; j++) insert.run(Buffer.alloc(65_536,
      i + j))
  }).immediate()
}

t.test('commits only append to the write-ahead log: they never checkpoint on the event loop', async (t) => {
  const file = path.join(tempDir(t), 'cairn.db')
  const db = openDatabase(file, { checkpointer: { everyMs: 600_000 } })
  t.teardown(() => db.close())
  t.equal(db.sqlite.pragma('wal_autocheckpoint', { simple: true }), 0, 'automatic checkpoints are off')
  const before = size(file)
  fill(db, 8)
  t.ok(size(`${file}-wal`) > 8 << 20, 'the commits appended 8 MB to the WAL')
  t.ok(size(file) < before + (1 << 20), 'and did not copy it into the database file (SQLite would have, past 4 MB)')
})

t.test('the thread copies the log into the database file, and the writer then reuses the log ' +
  'from its start', async (t) => {
  const file = path.join(tempDir(t), 'cairn.db')
  const db = openDatabase(file, { checkpointer: { everyMs: 50 } })
  t.teardown(() => db.close())
  const before = size(file)
  fill(db, 8)
  for (let i = 0; i < 200 && size(file) < before + (8 << 20); i++) await sleep(50)
  t.ok(size(file) >= before + (8 << 20), 'the pages reached the database file')
  // a write after a finished checkpoint starts the log over: its header gets new salt values
  const salt = () => {
    const fd = fs.openSync(`${file}-wal`, 'r')
    const header = Buffer.alloc(8)
    fs.readSync(fd, header, 0, 8, 16)
    fs.closeSync(fd)
    return header.toString('hex')
  }
  const before8 = salt()
  const tiny = db.sqlite.prepare('INSERT INTO filler (body) VALUES (x\'00\')')
  let restarted = false
  for (let i = 0; i < 200 && !restarted; i++) {
    await sleep(50)
    tiny.run()
    restarted = salt() !== before8
  }
  t.ok(restarted, 'the writer started the log over')
  const wal = size(`${file}-wal`)
  fill(db, 2)
  t.ok(size(`${file}-wal`) <= wal, 'and reuses it: the file did not grow')
})

t.test('closing stops the thread and truncates the log', async (t) => {
  const file = path.join(tempDir(t), 'cairn.db')
  const db = openDatabase(file, { checkpointer: { everyMs: 60_000 } })
  fill(db, 2)
  t.ok(size(`${file}-wal`) > 0)
  await db.close()
  t.equal(db.sqlite.open, false)
  t.equal(size(`${file}-wal`), 0, 'nothing left in the WAL')
  await db.close()
  t.pass('closing twice is harmless')
})

t.test('a thread that cannot start hands checkpoints back to the connection', async (t) => {
  const file = path.join(tempDir(t), 'cairn.db')
  const errors: Error[] = []
  const db = openDatabase(file,
    { checkpointer: { driver: path.join(tempDir(t), 'no-such-driver.js'), onError: (err) => errors.push(err) } })
  t.teardown(() => db.close())
  for (let i = 0; i < 100 && errors.length === 0; i++) await sleep(20)
  await sleep(100) // the thread's 'exit' follows its 'error'
  t.equal(errors.length, 1, 'the failure is reported once')
  t.equal(db.sqlite.pragma('wal_autocheckpoint', { simple: true }), 1000, 'automatic checkpoints are back on')
  // and they work: 8 MB written leave a small WAL behind each commit that crosses 1000 pages
  const before = size(file)
  fill(db, 8)
  t.ok(size(file) > before + (4 << 20), 'commits checkpoint again')
})

t.test('the write-ahead log is kept bounded: a log past the limit is folded and truncated, with no write ' +
  'needed', async (t) => {
  const file = path.join(tempDir(t), 'cairn.db')
  const db = openDatabase(file, { checkpointer: { everyMs: 50, walLimitBytes: 1 << 20 } })
  t.teardown(() => db.close())
  t.equal(db.sqlite.pragma('journal_size_limit', { simple: true }), 64 * 1024 * 1024,
    'a writer that starts the log over cuts the file back (journal_size_limit)')
  fill(db, 8)
  t.ok(size(`${file}-wal`) > 8 << 20, 'a large write grew the log to 8 MB')
  // before: PASSIVE checkpoints copied the pages but never made the file smaller, and it stayed at its largest
  for (let i = 0; i < 200 && size(`${file}-wal`) > 1 << 20; i++) await sleep(50)
  t.ok(size(`${file}-wal`) <= 1 << 20, `the log is back within the limit (${size(`${file}-wal`)} bytes)`)
  t.equal(db.sqlite.prepare('SELECT count(*) FROM filler').pluck().get(), 8 * 16, 'and every row is there')
})
