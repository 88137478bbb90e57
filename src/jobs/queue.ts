import diagnostics_channel from 'node:diagnostics_channel'
import { setMaxListeners } from 'node:events'
import { randomUUID } from 'node:crypto'
import { and, eq, inArray, lte, min, sql } from 'drizzle-orm'
import type Database from 'better-sqlite3'
import type { FastifyBaseLogger } from 'fastify'
import { jobs } from '../../schema/tables/jobs.js'
import type { Db } from '../db/index.js'
import { boundLimit, fixedLimit, preparedWrite } from '../db/prepared.js'
import { afterWriteTurn, writeTurn } from '../db/write-intent.js'
import { diskFullPause, isDiskFull } from '../db/disk-full.js'
import type { PayloadOf } from './payloads.js'
import { describeError, MAX_ERROR_MESSAGE } from '../log/mask.js'

export type { JobPayloads, JobName, PayloadOf } from './payloads.js'

/** Each finished attempt, as `{type, outcome}` (completed, failed, retried): read by the metrics. */
export const jobOutcomes = diagnostics_channel.channel('cairn:job-outcome')

export interface JobContext {
  jobId: string
  /** 1 for the first run */
  attempt: number
  maxAttempts: number
  /** aborted when the queue stops (graceful shutdown) */
  signal: AbortSignal
}

export type JobHandler<P = unknown> = (payload: P, ctx: JobContext) => Promise<void>

export interface JobTypeOptions {
  /** runs of a job before it is marked failed (default 5) */
  maxAttempts?: number
  /** first retry delay in ms, doubled per attempt, capped at 5 minutes (default 1000) */
  backoffMs?: number
  /** jobs of this type running at once (default 1): a slow type never holds up the others */
  concurrency?: number
  /**
   * a payload field (a name) whose values share the type's slots fairly: due jobs are claimed round-robin over its
   * values (a value with fewer jobs running first), and one value runs at most `perKey` at once, so that one
   * tenant's backlog never holds up another's jobs. Without it, due jobs are claimed oldest first
   */
  fairBy?: string
  /** with `fairBy`: jobs of one value running at once at most (default: half the concurrency, at least 1) */
  perKey?: number
}

export interface EnqueueOptions {
  /** epoch ms; default now */
  runAt?: number
  maxAttempts?: number
  /**
   * the caller runs the job itself, now (it is stored as running, so the runner leaves it alone, and
   * is picked up again after a crash); it ends it with complete() or hands it to the runner with release()
   */
  claimed?: boolean
}

/** Thrown by a handler for a failure that retrying cannot mend: the job fails at once. */
export class PermanentJobError extends Error {}

type JobRow = Pick<typeof jobs.$inferSelect, 'id' | 'type' | 'payload' | 'attempts' | 'maxAttempts'>

export interface JobQueue {
  register<T extends string>(type: T, handler: JobHandler<PayloadOf<T>>, options?: JobTypeOptions): void
  enqueue<T extends string>(type: T, payload: PayloadOf<T>, options?: EnqueueOptions): string
  /** a claimed job is done: removed (may run inside the caller's transaction) */
  complete(id: string): void
  /** a claimed job is left to the runner, to run (again) as if it had just failed once */
  release(id: string, error: string): void
  start(): void
  /** stops claiming, aborts handlers' signals and waits for the running ones to settle */
  stop(): Promise<void>
  /** resolves once no job is due or running (tests and benchmarks) */
  idle(): Promise<void>
  /** jobs were queued by another connection: looks for due ones now (and when the next one is due) */
  poke(): void
}

const MAX_BACKOFF_MS = 5 * 60_000

/** the longest error a failed job's row keeps */
const STORED_ERROR_LENGTH = 8192

const cut = (text: string, max: number) => text.length > max ? `${text.slice(0, max)}…` : text

/** a delay for people: `500 ms`, `2 s`, `5 min` */
function seconds(ms: number): string {
  if (ms < 1000) return `${ms} ms`
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 100) / 10} s`
}
/** the longest the runner sleeps when nothing is due, so jobs added by another connection are seen */
const MAX_SLEEP_MS = 1000

/**
 * The insert of a job row, queued or running (claimed by its caller): `run({id, type, payload, maxAttempts, runAt,
 * now})`, payload as JSON. For the queue, and for a writer on another connection that queues jobs in its own
 * transactions (the webhook outbox thread); the queue sees those within MAX_SLEEP_MS, or at once after `poke()`.
 * A preparedWrite: Drizzle's own prepared run() costs a third more per enqueue.
 */
export function jobInsert(db: Db, sqlite: Database.Database, status: 'queued' | 'running') {
  const p = sql.placeholder
  return preparedWrite(sqlite, db.insert(jobs).values({
    id: p('id'), type: p('type'), payload: p('payload'), status, attempts: status === 'running' ? 1 : 0,
    maxAttempts: p('maxAttempts'), runAt: p('runAt'), createdAt: p('now'), updatedAt: p('now')
  }))
}

export interface JobQueueOptions {
  /** the first wait of the queue after a write found the disk full (default 1 s), doubled per failure up to a minute */
  diskFullWaitMs?: number
  /** values masked wherever they appear in a failed job's error, logged or stored (API keys, passwords) */
  secrets?: readonly string[]
}

/**
 * `sqlite` is db's connection: the writes of every job are preparedWrite statements on it.
 *
 * A full disk pauses the queue instead of ending the process: a claim that fails for lack of space, or a handler that
 * does, makes the queue wait (1 s, doubled per failure, at most a minute) and try again; a handler that failed for
 * lack of space does not spend an attempt. A job's end that cannot be written waits in memory and is written before
 * the next claim (or, after a crash, the job runs again: it was still `running`).
 */
export function createJobQueue(db: Db, sqlite: Database.Database, log: FastifyBaseLogger,
  options: JobQueueOptions = {}): JobQueue {
  const handlers = new Map<string, { handler: JobHandler;
    options: Required<Omit<JobTypeOptions, 'fairBy'>> & Pick<JobTypeOptions, 'fairBy'> }>()
  const running = new Set<Promise<void>>()
  const runningByType = new Map<string, number>()
  const idleWaiters: Array<() => void> = []
  const abort = new AbortController()
  // every running job that passes the signal on adds a listener, removed when it settles (webhook retries run 16 at
  // once): as many as there are slots, not a leak
  setMaxListeners(0, abort.signal)
  let started = false
  let stopped = false
  let scheduled = false
  let timer: NodeJS.Timeout | undefined
  const pause = diskFullPause(log, 'background jobs', { firstWaitMs: options.diskFullWaitMs })
  /** ends of jobs not written yet (the disk was full): written before the next claim */
  const unsettled: Array<() => void> = []

  const p = sql.placeholder
  const insert = jobInsert(db, sqlite, 'queued')
  const insertClaimed = jobInsert(db, sqlite, 'running')
  const markDone = preparedWrite(sqlite, db.delete(jobs).where(eq(jobs.id, p('id'))))
  const markRetry = preparedWrite(sqlite, db.update(jobs)
    .set({ status: 'queued', runAt: sql`${p('runAt')}`, lastError: sql`${p('error')}`, updatedAt: sql`${p('now')}` })
    .where(eq(jobs.id, p('id'))))
  const markFailed = preparedWrite(sqlite, db.update(jobs)
    .set({ status: 'failed', lastError: sql`${p('error')}`, updatedAt: sql`${p('now')}` })
    .where(eq(jobs.id, p('id'))))
  // the disk was full: it runs again once there is space, without spending an attempt
  const markPaused = preparedWrite(sqlite, db.update(jobs)
    .set({ status: 'queued', attempts: sql`${jobs.attempts} - 1`, runAt: sql`${p('runAt')}`,
      lastError: sql`${p('error')}`, updatedAt: sql`${p('now')}` })
    .where(eq(jobs.id, p('id'))))
  // shutdown interrupted it: it runs again after the next start without spending an attempt
  const markInterrupted = preparedWrite(sqlite, db.update(jobs)
    .set({ status: 'queued', attempts: sql`${jobs.attempts} - 1`, updatedAt: sql`${p('now')}` })
    .where(eq(jobs.id, p('id'))))
  const requeueAbandoned = db.update(jobs)
    .set({ status: 'queued', runAt: sql`${p('runAt')}`, updatedAt: sql`${p('now')}` })
    .where(eq(jobs.status, 'running')).prepare()

  const claimOfType = db.update(jobs)
    .set({ status: 'running', attempts: sql`${jobs.attempts} + 1`, updatedAt: sql`${p('now')}` })
    .where(inArray(jobs.id, db.select({ id: jobs.id }).from(jobs)
      .where(and(eq(jobs.status, 'queued'), eq(jobs.type, p('type')), lte(jobs.runAt, p('runAt'))))
      .orderBy(jobs.runAt).limit(boundLimit('limit'))))
    .returning({ id: jobs.id, type: jobs.type, payload: jobs.payload, attempts: jobs.attempts,
      maxAttempts: jobs.maxAttempts })
    .prepare()

  // read first: an UPDATE takes SQLite's write lock even when nothing is due, and waits (holding the event loop)
  // while another thread's writer (the index worker) holds it
  const anyDueOfType = db.select({ id: jobs.id }).from(jobs)
    .where(and(eq(jobs.status, 'queued'), eq(jobs.type, p('type')), lte(jobs.runAt, p('runAt'))))
    .limit(fixedLimit(1)).prepare()

  // the fair claim (JobTypeOptions.fairBy): each due job's turn is its rank among its key's due jobs plus the jobs of
  // that key running; the lowest turns first, none past perKey. A window function and json_extract, which Drizzle's
  // query builder does not write (LIMIT +@limit: an expression, planned once, as boundLimit writes it)
  const claimFairly = sqlite.prepare<{ now: string; type: string; runAt: number; limit: number; path: string;
    perKey: number }, JobRow>(`WITH due AS (SELECT id, run_at, COALESCE(json_extract(payload, @path), '') AS k
      FROM jobs WHERE status = 'queued' AND type = @type AND run_at <= @runAt),
    busy AS (SELECT COALESCE(json_extract(payload, @path), '') AS k, COUNT(*) AS n FROM jobs
      WHERE status = 'running' AND type = @type GROUP BY 1),
    ranked AS (SELECT due.id, due.run_at, COALESCE(busy.n, 0)
      + ROW_NUMBER() OVER (PARTITION BY due.k ORDER BY due.run_at, due.id) AS turn FROM due LEFT JOIN busy USING (k))
    UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = @now
    WHERE id IN (SELECT id FROM ranked WHERE turn <= @perKey ORDER BY turn, run_at LIMIT +@limit)
    RETURNING id, type, payload, attempts, max_attempts AS maxAttempts`)

  /** Due jobs of every type, up to each type's free slots. */
  function claim(): JobRow[] {
    const runAt = Date.now()
    const now = new Date(runAt).toISOString()
    const rows: JobRow[] = []
    for (const [type, entry] of handlers) {
      const limit = entry.options.concurrency - (runningByType.get(type) ?? 0)
      if (limit <= 0 || !anyDueOfType.get({ type, runAt })) continue
      const { fairBy, perKey } = entry.options
      rows.push(...fairBy === undefined ? claimOfType.all({ now, type, runAt, limit })
        : claimFairly.all({ now, type, runAt, limit, path: `$.${fairBy}`, perKey }))
    }
    return rows
  }

  /** rebuilt when a type is registered: the types are part of the statement */
  let firstDue: { get(): { at: number | null } | undefined } | undefined
  function nextDueAt(): number | undefined {
    if (handlers.size === 0) return undefined
    firstDue ??= db.select({ at: min(jobs.runAt) }).from(jobs)
      .where(and(eq(jobs.status, 'queued'), inArray(jobs.type, [...handlers.keys()]))).prepare()
    return firstDue.get()?.at ?? undefined
  }

  function schedule() {
    if (!started || stopped || scheduled) return
    scheduled = true
    if (timer) { clearTimeout(timer); timer = undefined }
    setImmediate(tickInTurn)
  }

  /**
   * A turn claims due jobs (a write): when one is due, after another thread's writer has let go of the lock, the
   * event loop free meanwhile. With none due it reads only (see claim), and goes on at once.
   */
  function tickInTurn() {
    let due: number | undefined
    try { due = nextDueAt() } catch { /* the turn itself meets the error */ }
    if (due !== undefined && due <= Date.now()) afterWriteTurn(sqlite, tick)
    else tick()
  }

  function tick() {
    scheduled = false
    if (stopped) return
    let sleep: number
    try {
      sleep = turn()
    } catch (err) {
      // never thrown out of a timer, which would end the process
      if (isDiskFull(err)) sleep = pause.failed(err)
      else {
        log.error({ err }, 'job queue: could not claim jobs')
        sleep = MAX_SLEEP_MS
      }
    }
    timer = setTimeout(schedule, sleep)
    // an idle() waiter keeps the process alive; otherwise the runner never does
    if (idleWaiters.length === 0) timer.unref()
  }

  /** the ends kept back written, then the due jobs started (unless the disk was full a moment ago): the sleep */
  function turn(): number {
    settle()
    const paused = pause.left()
    if (paused > 0) return paused
    startDue()
    // each finished job schedules the next turn; this timer catches jobs that come due meanwhile
    if (running.size > 0) return MAX_SLEEP_MS
    const due = nextDueAt()
    if (due === undefined) {
      for (const w of idleWaiters.splice(0)) w()
      return MAX_SLEEP_MS
    }
    return Math.min(Math.max(due - Date.now(), 0), MAX_SLEEP_MS)
  }

  function startDue() {
    for (const row of claim()) {
      runningByType.set(row.type, (runningByType.get(row.type) ?? 0) + 1)
      const p = run(row).finally(() => {
        running.delete(p)
        runningByType.set(row.type, runningByType.get(row.type)! - 1)
        schedule()
      })
      running.add(p)
    }
  }

  /** writes the ends of jobs kept while the disk was full (throws when one still cannot be written) */
  function settle() {
    while (unsettled.length > 0) {
      unsettled[0]()
      unsettled.shift()
    }
  }

  /** a job's end, written now, or kept for the next turn when it cannot be */
  function end(write: () => void) {
    try {
      write()
    } catch (err) {
      unsettled.push(write)
      if (isDiskFull(err)) pause.failed(err)
      else log.error({ err }, 'job queue: the end of a job could not be written; trying again')
    }
  }

  async function run(row: JobRow) {
    const entry = handlers.get(row.type)!
    let failure: { err: unknown } | undefined
    try {
      await entry.handler(JSON.parse(row.payload), {
        jobId: row.id,
        attempt: row.attempts,
        maxAttempts: row.maxAttempts,
        signal: abort.signal
      })
    } catch (err) {
      failure = { err }
    }
    // decided as the handler ends: a stop that comes during the write turn does not make a failure an interruption
    const interrupted = failure !== undefined && stopped && abort.signal.aborted &&
      !(failure.err instanceof PermanentJobError)
    // a job's end is a write: after another thread's writer has let go of the lock, the event loop free meanwhile
    await writeTurn(sqlite)
    if (!failure) {
      end(() => {
        markDone.run({ id: row.id })
        pause.succeeded()
        if (jobOutcomes.hasSubscribers) jobOutcomes.publish({ type: row.type, outcome: 'completed' })
      })
      return
    }
    const err = failure.err
    // what the row keeps and the log shows: the message with its causes and a code, secrets masked
    const stored = describeError(err, options.secrets, STORED_ERROR_LENGTH)
    const message = stored.message
    const error = { ...stored, message: cut(message, MAX_ERROR_MESSAGE) }
    const now = new Date().toISOString()
    if (interrupted) {
      end(() => markInterrupted.run({ id: row.id, now }))
      return
    }
    if (isDiskFull(err) && !(err instanceof PermanentJobError)) {
      const wait = pause.failed(err)
      end(() => markPaused.run({ runAt: Date.now() + wait, error: message, now, id: row.id }))
      return
    }
    if (err instanceof PermanentJobError || row.attempts >= row.maxAttempts) {
      end(() => markFailed.run({ error: message, now, id: row.id }))
      if (jobOutcomes.hasSubscribers) jobOutcomes.publish({ type: row.type, outcome: 'failed' })
      const why = err instanceof PermanentJobError ? 'cannot succeed' : `failed ${row.attempts} times`
      log.error({ jobId: row.id, type: row.type, attempts: row.attempts, error },
        `job ${row.type} ${why}, given up: ${error.message}`)
    } else {
      const delay = Math.min(entry.options.backoffMs * 2 ** (row.attempts - 1), MAX_BACKOFF_MS)
      end(() => markRetry.run({ runAt: Date.now() + delay, error: message, now, id: row.id }))
      if (jobOutcomes.hasSubscribers) jobOutcomes.publish({ type: row.type, outcome: 'retried' })
      log.warn({ jobId: row.id, type: row.type, attempts: row.attempts, maxAttempts: row.maxAttempts,
        retryInMs: delay, error }, `job ${row.type} failed (attempt ${row.attempts} of ${row.maxAttempts}), ` +
        `retried in ${seconds(delay)}: ${error.message}`)
    }
  }

  return {
    register(type, handler, options = {}) {
      firstDue = undefined
      if (options.fairBy !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.fairBy)) {
        throw new Error(`fairBy must name a payload field: ${options.fairBy}`)
      }
      const concurrency = options.concurrency ?? 1
      handlers.set(type, {
        handler: handler as JobHandler,
        options: { maxAttempts: options.maxAttempts ?? 5, backoffMs: options.backoffMs ?? 1000, concurrency,
          fairBy: options.fairBy, perKey: options.perKey ?? Math.max(1, Math.floor(concurrency / 2)) }
      })
      schedule()
    },
    enqueue(type, payload, options = {}) {
      const id = randomUUID()
      const now = new Date().toISOString()
      const maxAttempts = options.maxAttempts ?? handlers.get(type)?.options.maxAttempts ?? 5
      const claimed = options.claimed ?? false
      ;(claimed ? insertClaimed : insert).run({ id, type, payload: JSON.stringify(payload ?? null), maxAttempts,
        runAt: options.runAt ?? Date.now(), now })
      if (!claimed) schedule()
      return id
    },
    complete(id) {
      markDone.run({ id })
    },
    release(id, error) {
      markRetry.run({ runAt: Date.now(), error, now: new Date().toISOString(), id })
      schedule()
    },
    start() {
      if (started) return
      started = true
      // jobs that were running when the process died are picked up again
      const { changes } = requeueAbandoned.run({ runAt: Date.now(), now: new Date().toISOString() })
      if (changes > 0) log.info({ jobs: changes }, 'resuming jobs left running by a previous process')
      schedule()
    },
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      abort.abort()
      await Promise.allSettled([...running])
      // ends the disk kept from being written: one more try (else their jobs run again after the next start)
      try { settle() } catch { /* still running in the table: picked up again at the next start */ }
      for (const w of idleWaiters.splice(0)) w()
    },
    poke() {
      schedule()
    },
    idle() {
      if (stopped) return Promise.resolve()
      return new Promise((resolve) => {
        idleWaiters.push(resolve)
        schedule()
      })
    }
  }
}
