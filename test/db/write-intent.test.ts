import t, { type Test } from 'tap'
import path from 'node:path'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { countWriteIntent, HOLDER, INDEX_HOLDER, INTENT, OUTBOX_HOLDER, releaseHolder, writeIntentOf,
  writeTurn, writeTurnsOf, writeWaitsOf } from '../../src/db/write-intent.js'
import { tempDir } from '../helper.js'

t.test('the write intent counts statements that may write and transactions while they run, and only then',
  async (t) => {
    const sqlite = new Database(path.join(tempDir(t), 'a.db'))
    t.teardown(() => sqlite.close())
    t.equal(writeIntentOf(sqlite), undefined, 'none before it is asked for')
    const intent = countWriteIntent(sqlite)
    t.equal(countWriteIntent(sqlite), intent, 'one count per connection')
    t.equal(writeIntentOf(sqlite), intent)
    // seen from inside a statement, as the index worker sees it while the statement waits or runs
    sqlite.function('peek', () => Atomics.load(intent, 0))
    sqlite.exec('CREATE TABLE seen (n INTEGER)')
    const insert = sqlite.prepare('INSERT INTO seen (n) VALUES (peek())')
    insert.run()
    t.equal(sqlite.prepare('SELECT peek()').pluck().get(), 0, 'a read-only statement is not counted')
    t.same(sqlite.prepare('SELECT n FROM seen').pluck().all(), [1], 'a write is counted while it runs')
    t.same(sqlite.prepare('INSERT INTO seen (n) VALUES (peek()) RETURNING n').pluck().all(), [1],
      'also one that returns rows')
    sqlite.transaction(() => { insert.run() }).immediate()
    t.equal(sqlite.prepare('SELECT max(n) FROM seen').pluck().get(), 2, 'a write inside a transaction: both')
    t.throws(() => sqlite.prepare('INSERT INTO missing (n) VALUES (peek())'))
    t.throws(() => sqlite.transaction(() => { throw new Error('rolled back') })())
    t.throws(() => sqlite.prepare('INSERT INTO seen (n) VALUES (1 / 0 + abs(-9223372036854775808))').run())
    t.equal(Atomics.load(intent, 0), 0, 'back to 0 after failures')
  })

// Another thread's writer as the index worker behaves: flag set, lock taken, a row written; it commits once the
// test's connection shows a write waiting, then signals.
const HOLDER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const { intent, file, slot } = workerData
const db = new Database(file)
const nap = new Int32Array(new SharedArrayBuffer(4))
parentPort.on('message', () => {
  Atomics.store(intent, slot, 1)
  db.exec("BEGIN IMMEDIATE; INSERT INTO rows (who) VALUES ('worker')")
  parentPort.postMessage('holding')
  while (Atomics.load(intent, 0) === 0) Atomics.wait(nap, 0, 0, 1)
  db.exec('COMMIT')
  Atomics.store(intent, slot, 0)
  Atomics.notify(intent, slot)
})
`

/** a database in WAL mode in the test's directory, closed at its end */
function walDatabase(t: Test) {
  const file = path.join(tempDir(t), 'a.db')
  const sqlite = new Database(file)
  t.teardown(() => sqlite.close())
  sqlite.pragma('journal_mode = WAL')
  return { file, sqlite }
}

/** another thread's writer (HOLDER_SOURCE) on `slot`: each call has it take the lock, answered once it holds it */
function otherWriter(t: Test, intent: Int32Array, file: string, slot: number) {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(HOLDER_SOURCE, { eval: true, workerData: { intent, file, driver, slot } })
  t.teardown(() => worker.terminate())
  return () => new Promise<void>((resolve) => {
    worker.once('message', () => resolve())
    worker.postMessage('go')
  })
}

t.test('a write waits for the other thread\'s commit signal instead of meeting its lock', async (t) => {
  const { file, sqlite } = walDatabase(t)
  t.equal(writeWaitsOf(sqlite), undefined, 'no waits kept for a connection that does not count its writes')
  const intent = countWriteIntent(sqlite)
  sqlite.exec('CREATE TABLE rows (who TEXT)')
  t.same(writeWaitsOf(sqlite), { count: 0, ms: 0 })
  const writer = (slot: number) => otherWriter(t, intent, file, slot)
  const holding = writer(INDEX_HOLDER)
  const insert = sqlite.prepare('INSERT INTO rows (who) VALUES (?)')
  const count = sqlite.prepare('SELECT count(*) FROM rows').pluck()

  // without a busy handler SQLite answers SQLITE_BUSY at once while the lock is held
  sqlite.pragma('busy_timeout = 0')
  await holding()
  insert.run('server')
  // a deferred transaction that reads before it writes gets SQLITE_BUSY at once whatever the busy_timeout
  sqlite.pragma('busy_timeout = 5000')
  await holding()
  sqlite.transaction(() => insert.run(`server after ${count.get() as number}`))()
  t.equal(writeWaitsOf(sqlite)!.count, 2, 'each of the two writes waited once')
  t.same(sqlite.prepare('SELECT who FROM rows ORDER BY rowid').pluck().all(),
    ['worker', 'server', 'worker', 'server after 3'], 'each write went in after the other thread\'s commit')
  t.equal(Atomics.load(intent, INTENT), 0)

  // each writer of another thread has a flag of its own: one's end never clears the other's
  const outboxHolding = writer(OUTBOX_HOLDER)
  sqlite.pragma('busy_timeout = 0')
  await outboxHolding()
  releaseHolder(intent, INDEX_HOLDER)
  insert.run('server after the outbox thread')
  t.same(sqlite.prepare('SELECT who FROM rows ORDER BY rowid DESC LIMIT 2').pluck().all(),
    ['server after the outbox thread', 'worker'], 'the write waited for the second writer\'s commit')
  sqlite.pragma('busy_timeout = 5000')

  // a flag nobody clears (a writer that died holding it) delays a write by a bounded wait, no more
  const before = writeWaitsOf(sqlite)!.ms
  Atomics.store(intent, HOLDER, 1)
  insert.run('late')
  t.equal(count.get(), 7)
  releaseHolder(intent)
  t.equal(writeWaitsOf(sqlite)!.count, 4, 'every wait is counted')
  t.ok(writeWaitsOf(sqlite)!.ms - before >= 999, 'with its time: the bounded wait for a flag nobody clears')
})

t.test('async code waits for its write turn with the event loop free, its wait counted as a write intent',
  async (t) => {
    const { file, sqlite } = walDatabase(t)
    t.equal(writeTurn(sqlite), undefined, 'a connection that does not count its writes never waits')
    const intent = countWriteIntent(sqlite)
    sqlite.exec('CREATE TABLE rows (who TEXT)')
    t.equal(writeTurn(sqlite), undefined, 'nobody holds the lock: go on at once')

    // the other thread's writer commits once it sees the wait's intent, then signals
    await otherWriter(t, intent, file, INDEX_HOLDER)()
    sqlite.pragma('busy_timeout = 0')
    const turn = writeTurn(sqlite)
    t.ok(turn, 'a promise while the other thread holds the lock')
    await turn
    sqlite.prepare('INSERT INTO rows (who) VALUES (?)').run('server')
    t.same(sqlite.prepare('SELECT who FROM rows ORDER BY rowid').pluck().all(), ['worker', 'server'],
      'the write went in after the other thread\'s commit, without SQLITE_BUSY')
    t.equal(writeTurnsOf(sqlite)!.count, 1, 'the turn\'s wait is counted')
    t.equal(writeWaitsOf(sqlite)!.count, 0, 'apart from blocking waits: the write after it did not wait')
    sqlite.pragma('busy_timeout = 5000')

    // a holder that stays: the event loop runs meanwhile, and the wait shows as an intent until it ends
    Atomics.store(intent, OUTBOX_HOLDER, 1)
    let ended = false
    const waiting = writeTurn(sqlite)!.then(() => { ended = true })
    await new Promise((resolve) => setTimeout(resolve, 20))
    t.notOk(ended, 'still waiting, and a timer ran meanwhile')
    t.equal(Atomics.load(intent, INTENT), 1, 'the other thread sees a write waiting')
    releaseHolder(intent, OUTBOX_HOLDER)
    await waiting
    t.equal(Atomics.load(intent, INTENT), 0, 'no intent left once it ends')

    // a flag nobody clears: a bounded wait, no more
    Atomics.store(intent, HOLDER, 1)
    const before = writeTurnsOf(sqlite)!.ms
    await writeTurn(sqlite)
    releaseHolder(intent)
    t.ok(writeTurnsOf(sqlite)!.ms - before >= 999, 'it gave up after the bounded wait')
    t.equal(Atomics.load(intent, INTENT), 0)
  })
