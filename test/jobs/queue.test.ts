import t from 'tap'
import Database from 'better-sqlite3'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, tempDir, TS_CHILD } from '../helper.js'
import { createJobQueue, PermanentJobError } from '../../src/jobs/queue.js'
import { fillDatabase, freeDatabase } from '../db/fill-disk.js'
import { MAINTENANCE_BATCH } from '../../src/jobs/maintenance.js'
import { INTENT, OUTBOX_HOLDER, releaseHolder, writeIntentOf, writeTurnsOf } from '../../src/db/write-intent.js'

const here = path.dirname(fileURLToPath(import.meta.url))

interface JobRow { status: string; attempts: number; last_error: string | null }

t.test('runs jobs in the background with their payload', async (t) => {
  const app = await build(t)
  const seen: unknown[] = []
  app.jobs.register('test.echo', async (payload) => { seen.push(payload) })
  for (let i = 0; i < 5; i++) app.jobs.enqueue('test.echo', { i })
  t.same(seen, [], 'enqueue returns before any job runs: they run on later turns of the event loop')
  await app.jobs.idle()
  t.same(seen.map((p) => (p as { i: number }).i).sort(), [0, 1, 2, 3, 4])
  t.equal((app.sqlite.prepare('SELECT COUNT(*) AS n FROM jobs').get() as { n: number }).n, 0,
    'finished jobs are removed')
})

t.test('retries with backoff, then succeeds', async (t) => {
  const app = await build(t)
  const times: number[] = []
  app.jobs.register('test.flaky', async (_p, ctx) => {
    times.push(Date.now())
    if (ctx.attempt < 3) throw new Error(`attempt ${ctx.attempt} failed`)
  }, { backoffMs: 40, maxAttempts: 5 })
  app.jobs.enqueue('test.flaky', {})
  await app.jobs.idle()
  t.equal(times.length, 3)
  t.ok(times[1] - times[0] >= 35, 'first retry waits the base delay')
  t.ok(times[2] - times[1] >= 75, 'second retry waits twice as long')
})

t.test('fails after max attempts, or at once on a permanent error', async (t) => {
  const app = await build(t)
  let n = 0
  app.jobs.register('test.always', async () => { n++; throw new Error('still broken') },
    { backoffMs: 5, maxAttempts: 3 })
  app.jobs.register('test.permanent', async () => { throw new PermanentJobError('cannot be mended') }, { backoffMs: 5 })
  const a = app.jobs.enqueue('test.always', {})
  const b = app.jobs.enqueue('test.permanent', {})
  await app.jobs.idle()
  const rowA = app.sqlite.prepare('SELECT status, attempts, last_error FROM jobs WHERE id = ?').get(a) as JobRow
  const rowB = app.sqlite.prepare('SELECT status, attempts, last_error FROM jobs WHERE id = ?').get(b) as JobRow
  t.same(rowA, { status: 'failed', attempts: 3, last_error: 'still broken' })
  t.equal(n, 3)
  t.same(rowB, { status: 'failed', attempts: 1, last_error: 'cannot be mended' })
  // failed jobs are kept for the retention period, then swept
  app.sqlite.prepare(`UPDATE jobs SET updated_at = '2000-01-01T00:00:00.000Z' WHERE id = ?`).run(a)
  app.runMaintenance()
  t.equal(app.sqlite.prepare('SELECT COUNT(*) AS n FROM jobs WHERE id IN (?, ?)').pluck().get(a, b), 1)
})

t.test('jobs scheduled for later wait their turn', async (t) => {
  const app = await build(t)
  let ranAt = 0
  app.jobs.register('test.later', async () => { ranAt = Date.now() })
  const at = Date.now() + 150
  app.jobs.enqueue('test.later', {}, { runAt: at })
  await app.jobs.idle()
  t.ok(ranAt >= at, 'not before runAt')
})

t.test('a job of a type registered after the first idle turn is still waited for', async (t) => {
  const app = await build(t)
  app.jobs.register('test.first', async () => {})
  await app.jobs.idle()
  let ran = false
  // the due-time look-up covers the registered types: a later registration must widen it
  app.jobs.register('test.second', async () => { ran = true })
  app.jobs.enqueue('test.second', {}, { runAt: Date.now() + 100 })
  await app.jobs.idle()
  t.ok(ran, 'idle() resolved only after the later type\'s job ran')
})

t.test('a graceful stop puts the running job back without spending an attempt', async (t) => {
  const dataDir = tempDir(t)
  const first = await build(t, { dataDir })
  let started = false
  first.jobs.register('test.long', async (_p, ctx) => {
    started = true
    await new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))))
  })
  const id = first.jobs.enqueue('test.long', {})
  while (!started) await new Promise((r) => setTimeout(r, 5))
  await first.close()
  const second = await build(t, { dataDir })
  const row = second.sqlite.prepare('SELECT status, attempts FROM jobs WHERE id = ?').get(id) as JobRow
  t.same(row, { status: 'queued', attempts: 0 })
})

t.test('jobs left running by a killed process are picked up at start', async (t) => {
  const dataDir = tempDir(t)
  const child = spawn(process.execPath,
    [...TS_CHILD, path.join(here, '..', 'fixtures', 'job-worker.ts'), dataDir],
    { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => { if (chunk.toString().includes('running')) resolve() })
    child.on('exit', (code) => reject(new Error(`worker exited early with ${code}`)))
  })
  child.kill('SIGKILL')
  await new Promise((r) => child.once('exit', r))

  const app = await build(t, { dataDir })
  const left = app.sqlite.prepare(`SELECT status, attempts FROM jobs WHERE type = 'test.hang'`).get() as JobRow
  t.same(left, { status: 'queued', attempts: 1 }, 'requeued at start; the killed run counts as an attempt')
  const got: unknown[] = []
  app.jobs.register('test.hang', async (payload, ctx) => { got.push({ payload, attempt: ctx.attempt }) })
  await app.jobs.idle()
  t.same(got, [{ payload: { note: 'survive me' }, attempt: 2 }])
  t.equal((app.sqlite.prepare('SELECT COUNT(*) AS n FROM jobs').get() as { n: number }).n, 0)
})

t.test('expired Idempotency-Key answers are swept by the maintenance run', async (t) => {
  const app = await build(t)
  const insert = app.sqlite.prepare(`INSERT INTO idempotency_keys (caller, key, fingerprint, state, created_at)
    VALUES (?, ?, 'f', 'done', ?)`)
  insert.run('user:a', 'old', '2000-01-01T00:00:00.000Z')
  insert.run('user:a', 'new', new Date().toISOString())
  app.runMaintenance()
  t.same(app.sqlite.prepare('SELECT key FROM idempotency_keys').pluck().all(), ['new'])
})

t.test('maintenance removes rows a batch at a time, the event loop free between two', async (t) => {
  const app = await build(t)
  const insert = app.sqlite.prepare(`INSERT INTO idempotency_keys (caller, key, fingerprint, state, created_at)
    VALUES (?, ?, 'f', 'done', ?)`)
  app.sqlite.transaction(() => {
    for (let i = 0; i < MAINTENANCE_BATCH * 2 + 10; i++) insert.run('user:a', `old-${i}`, '2000-01-01T00:00:00.000Z')
  })()
  insert.run('user:a', 'new', new Date().toISOString())
  const count = app.sqlite.prepare('SELECT count(*) FROM idempotency_keys').pluck()
  let between: unknown
  setImmediate(() => { between = count.get() })
  await app.runMaintenance()
  t.equal(between, MAINTENANCE_BATCH + 11, 'the event loop ran after the first batch')
  t.same(app.sqlite.prepare('SELECT key FROM idempotency_keys').pluck().all(), ['new'], 'then the rest went')
})

t.test('claims and maintenance batches wait for another thread\'s writer with the event loop free', async (t) => {
  const app = await build(t)
  const intent = writeIntentOf(app.sqlite)!
  const seen: unknown[] = []
  app.jobs.register('test.turn', async (payload) => { seen.push(payload) })
  await app.jobs.idle()
  // the webhook outbox thread's flag, as if it held SQLite's write lock (idle here: nothing else sets or clears it),
  // raised after each write of the test (a write of this thread would wait for it, blocking) and before the turn
  // the write schedules
  const hold = () => Atomics.store(intent, OUTBOX_HOLDER, 1)
  t.teardown(() => releaseHolder(intent, OUTBOX_HOLDER))
  // a turn with nothing due reads only: it goes on at once
  const turns = writeTurnsOf(app.sqlite)!.count
  app.jobs.enqueue('test.turn', { n: 0 }, { runAt: Date.now() + 3_600_000 })
  hold()
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
  t.equal(writeTurnsOf(app.sqlite)!.count, turns, 'no wait while nothing is due')
  t.equal(Atomics.load(intent, INTENT), 0)
  releaseHolder(intent, OUTBOX_HOLDER)
  app.sqlite.prepare(`DELETE FROM jobs WHERE type = 'test.turn'`).run()
  app.sqlite.prepare(`INSERT INTO idempotency_keys (caller, key, fingerprint, state, created_at)
    VALUES ('user:a', 'old', 'f', 'done', '2000-01-01T00:00:00.000Z')`).run()
  app.jobs.enqueue('test.turn', { n: 1 })
  hold()
  let swept = false
  const sweeping = app.runMaintenance().then(() => { swept = true })
  for (let i = 0; i < 10_000 && Atomics.load(intent, INTENT) < 2; i++) {
    await new Promise((resolve) => setImmediate(resolve))
  }
  t.equal(Atomics.load(intent, INTENT), 2, 'both wait, each counted as a write intent, while the event loop turns')
  t.same(seen, [], 'the job is not claimed yet')
  t.notOk(swept)
  t.equal(app.sqlite.prepare('SELECT count(*) FROM idempotency_keys').pluck().get(), 1, 'nothing removed yet')
  releaseHolder(intent, OUTBOX_HOLDER)
  await sweeping
  await app.jobs.idle()
  t.same(seen, [{ n: 1 }], 'then the job runs')
  t.equal(app.sqlite.prepare('SELECT count(*) FROM idempotency_keys').pluck().get(), 0, 'and the old row goes')
  t.equal(Atomics.load(intent, INTENT), 0)
})

t.test('a job\'s end waits for its write turn: another thread took the lock while its handler ran', async (t) => {
  const app = await build(t)
  const intent = writeIntentOf(app.sqlite)!
  t.teardown(() => releaseHolder(intent, OUTBOX_HOLDER))
  let ended = false
  // the handler's last act: the webhook outbox thread's flag goes up, as if it had taken SQLite's write lock
  app.jobs.register('test.end', async () => { Atomics.store(intent, OUTBOX_HOLDER, 1); ended = true })
  app.jobs.enqueue('test.end', {})
  const status = app.sqlite.prepare(`SELECT status FROM jobs WHERE type = 'test.end'`).pluck()
  for (let i = 0; i < 100_000 && Atomics.load(intent, INTENT) === 0; i++) {
    await new Promise((resolve) => setImmediate(resolve))
  }
  t.ok(ended)
  t.equal(Atomics.load(intent, INTENT), 1, 'its end waits, counted as a write intent, while the event loop turns')
  t.equal(status.get(), 'running', 'not marked done yet')
  releaseHolder(intent, OUTBOX_HOLDER)
  await app.jobs.idle()
  t.equal(status.get(), undefined, 'then it is done (and removed)')
})

t.test('a job that fails while another thread holds the lock stays failed when a stop comes during its turn',
  async (t) => {
    const app = await build(t)
    const intent = writeIntentOf(app.sqlite)!
    t.teardown(() => releaseHolder(intent, OUTBOX_HOLDER))
    app.jobs.register('test.fails', async () => {
      Atomics.store(intent, OUTBOX_HOLDER, 1)
      throw new Error('real failure')
    }, { maxAttempts: 1 })
    app.jobs.enqueue('test.fails', {})
    for (let i = 0; i < 100_000 && Atomics.load(intent, INTENT) === 0; i++) {
      await new Promise((resolve) => setImmediate(resolve))
    }
    t.equal(Atomics.load(intent, INTENT), 1, 'its end waits for its turn')
    const stopping = app.jobs.stop()
    releaseHolder(intent, OUTBOX_HOLDER)
    await stopping
    t.same(app.sqlite.prepare(`SELECT status, last_error FROM jobs WHERE type = 'test.fails'`).get(),
      { status: 'failed', last_error: 'real failure' }, 'failed, as it was when it ended: not taken for interrupted')
  })

// compile-time only: payloads are typed by job name (tsc checks this file; the function never runs)
export function payloadTypes(app: Awaited<ReturnType<typeof build>>) {
  app.jobs.enqueue('workflow.run', { runId: 'r' })
  // @ts-expect-error a payload of another job type
  app.jobs.enqueue('workflow.run', { documentId: 'd' })
  app.jobs.register('knowledge.index', async (payload) => { payload.documentId.toUpperCase() })
}

t.test('a type\'s claim reads only its own due jobs: a backlog of another type is not scanned', async (t) => {
  const app = await build(t)
  const plan = app.sqlite.prepare(`EXPLAIN QUERY PLAN SELECT id FROM jobs WHERE status = 'queued' AND type = ?
    AND run_at <= ? ORDER BY run_at LIMIT +?`).all('a', Date.now(), 4) as Array<{ detail: string }>
  t.match(plan.map((p) => p.detail).join('\n'), /jobs_due_idx \(status=\? AND type=\? AND run_at<\?\)/)
})

t.test('a turn with nothing due does not take the write lock (it would wait for another thread writing)', async (t) => {
  const app = await build(t)
  const other = new Database(app.sqlite.name)
  t.teardown(() => other.close())
  app.jobs.register('test.later', async () => {})
  app.jobs.enqueue('test.later', {}, { runAt: Date.now() + 3_600_000 })
  await new Promise((resolve) => setImmediate(resolve))
  // another connection holds the write lock, and this one gives up at once instead of waiting
  other.exec('BEGIN IMMEDIATE')
  app.sqlite.pragma('busy_timeout = 0')
  const errors: unknown[] = []
  const onError = (err: unknown) => { errors.push(err) }
  process.prependListener('uncaughtException', onError)
  try {
    // registering a type runs a turn of the runner: it claims over every type
    app.jobs.register('test.other', async () => {})
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    process.removeListener('uncaughtException', onError)
    other.exec('COMMIT')
    app.sqlite.pragma('busy_timeout = 5000')
  }
  t.same(errors, [], 'no SQLITE_BUSY from a claim')
  t.equal(app.sqlite.prepare(`SELECT status FROM jobs WHERE type = 'test.later'`).pluck().get(), 'queued')
})

t.test('a full disk pauses the queue: a job whose writes find no space spends no attempt and runs again once ' +
  'there is space', async (t) => {
  const app = await build(t)
  const queue = createJobQueue(app.db, app.sqlite, app.log, { diskFullWaitMs: 10 })
  t.teardown(() => queue.stop())
  app.sqlite.exec('CREATE TABLE written (b BLOB)')
  const write = app.sqlite.prepare('INSERT INTO written VALUES (?)')
  let runs = 0
  queue.register('test.write', async () => { runs++; write.run(Buffer.alloc(64 * 1024)) }, { maxAttempts: 2 })
  const ids = [1, 2, 3].map(() => queue.enqueue('test.write', {}))
  fillDatabase(app.sqlite)
  queue.start()
  // each run fails with SQLITE_FULL; before, two runs failed a job for good
  while (runs < 6) await new Promise((resolve) => setTimeout(resolve, 5))
  const rows = () => app.sqlite.prepare(`SELECT status, attempts FROM jobs WHERE type = 'test.write'`).all() as
    JobRow[]
  t.equal(rows().length, 3, 'every job is still there')
  t.ok(rows().every((r) => r.status !== 'failed' && r.attempts <= 1), 'none failed, none spent its attempts')
  freeDatabase(app.sqlite)
  await queue.idle()
  t.same(rows(), [], 'once there is space, every job ran')
  t.equal(app.sqlite.prepare('SELECT count(*) FROM written').pluck().get(), 3)
  t.equal(app.sqlite.prepare(`SELECT count(*) FROM jobs WHERE id IN (${ids.map(() => '?').join()})`).pluck()
    .get(...ids), 0)
})

t.test('a job\'s end that cannot be written on a full disk waits in memory: the process lives, and it is ' +
  'written once there is space', async (t) => {
  const app = await build(t)
  const queue = createJobQueue(app.db, app.sqlite, app.log, { diskFullWaitMs: 10 })
  t.teardown(() => queue.stop())
  let runs = 0
  // a long error message needs a page of its own: recording the failure itself finds the disk full
  queue.register('test.fails', async () => {
    runs++
    if (runs === 1) throw new Error('x'.repeat(20_000))
  }, { backoffMs: 1 })
  const id = queue.enqueue('test.fails', {})
  fillDatabase(app.sqlite)
  const rejections: unknown[] = []
  const onRejection = (err: unknown) => { rejections.push(err) }
  process.on('unhandledRejection', onRejection)
  t.teardown(() => { process.off('unhandledRejection', onRejection) })
  queue.start()
  while (runs < 1) await new Promise((resolve) => setTimeout(resolve, 5))
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 5))
  t.same(rejections, [], 'nothing thrown out of the queue (an unhandled rejection ends the process)')
  t.equal(runs, 1, 'no job runs while its end waits to be written')
  t.equal(app.sqlite.prepare('SELECT status FROM jobs WHERE id = ?').pluck().get(id), 'running')
  freeDatabase(app.sqlite)
  await queue.idle()
  t.equal(runs, 2, 'its failure was recorded, then it was retried')
  t.equal(app.sqlite.prepare('SELECT count(*) FROM jobs WHERE id = ?').pluck().get(id), 0)
})

t.test('jobs running side by side may each listen to the queue\'s signal: no warning of a listener leak', async (t) => {
  const app = await build(t)
  const warnings: string[] = []
  const onWarning = (w: Error) => { warnings.push(w.name) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  let listening = 0
  app.jobs.register('test.listens', async (_p, ctx) => {
    const stop = () => {}
    ctx.signal.addEventListener('abort', stop, { once: true })
    if (++listening === 16) release()
    await held
    ctx.signal.removeEventListener('abort', stop)
  }, { concurrency: 16 })
  for (let i = 0; i < 16; i++) app.jobs.enqueue('test.listens', { i })
  await held
  await app.jobs.idle()
  // (process warnings are emitted on a later turn)
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(listening, 16)
  t.same(warnings.filter((name) => name === 'MaxListenersExceededWarning'), [])
})
