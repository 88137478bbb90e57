import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { setImmediate } from 'node:timers/promises'
import { and, eq, inArray, lt, sql, type SQL } from 'drizzle-orm'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'
import { fixedLimit } from '../db/prepared.js'
import { writeTurn } from '../db/write-intent.js'
import { developerLogChunks } from '../../schema/tables/developer.js'
import { idempotencyKeys } from '../../schema/tables/idempotency.js'
import { jobs } from '../../schema/tables/jobs.js'
import { workspaceEvents } from '../../schema/tables/workspace-events.js'

const HOUR_MS = 60 * 60 * 1000
const DAY_MS = 24 * HOUR_MS
/** how long a stored Idempotency-Key answer is replayed (src/http/idempotency.ts reads it too) */
export const IDEMPOTENCY_TTL_MS = DAY_MS

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * runs every periodic maintenance task now (it also runs at start and every hour): those of cairn.db a batch at a
     * time (the first of each within the call), the webhook records' in the outbox thread (the outbox file's writer),
     * settled with the promise
     */
    runMaintenance(): Promise<void>
  }
}

/**
 * Rows a maintenance DELETE removes at a time, the event loop free between two: 20,000 developer-log chunks removed
 * in one statement (a busy key's month) hold the server for a long moment. A log chunk may be up to 1 MB (its
 * overflow pages are read to be freed), so the log goes 50 at a time (docs/design/write-turns.md).
 */
export const MAINTENANCE_BATCH = 500
const LOG_BATCH = 50

/**
 * Periodic maintenance, in one place: retention of developer logs, webhook events and delivery records, and failed
 * jobs (config.retentionDays), and expiry of stored Idempotency-Key answers. Each task is an indexed DELETE of
 * MAINTENANCE_BATCH rows at a time; they run when the app is ready and then every hour.
 */
async function maintenancePlugin(app: FastifyInstance) {
  const db = app.db
  const cutoff = sql.placeholder('cutoff')
  const before = (ms: number) => () => new Date(Date.now() - ms).toISOString()
  const retention = () => before(app.config.retentionDays * DAY_MS)()
  // the first `batch` rows of `table` that `where` names (by rowid: every table here has one)
  const task = (name: string, table: SQLiteTable, where: SQL | undefined, cutoffOf: () => string,
    batch = MAINTENANCE_BATCH) => ({
    name, cutoffOf, batch,
    statement: db.delete(table).where(inArray(sql`rowid`,
      db.select({ rowid: sql`rowid` }).from(table).where(where).limit(fixedLimit(batch)))).prepare()
  })
  const tasks = [
    // a log chunk goes once its newest entry is past retention (its entries span one batch: at most a quarter second)
    task('developer log', developerLogChunks, lt(developerLogChunks.lastAt, cutoff), retention, LOG_BATCH),
    task('failed jobs', jobs, and(eq(jobs.status, 'failed'), lt(jobs.updatedAt, cutoff)), retention),
    task('idempotency keys', idempotencyKeys, lt(idempotencyKeys.createdAt, cutoff), before(IDEMPOTENCY_TTL_MS)),
    // the event stream's reconnects resume within a day; older ones receive `reset`
    task('workspace events', workspaceEvents, lt(workspaceEvents.createdAt, cutoff), before(2 * DAY_MS))
  ]

  const logRemoved = (removed: Record<string, number>) => {
    const some = Object.fromEntries(Object.entries(removed).filter(([, n]) => n > 0))
    if (Object.keys(some).length > 0) app.log.info({ removed: some }, 'maintenance')
  }
  let closing = false
  // a run's removal under way (between two batches): the next run's removal starts once it has ended
  let removing: Promise<void> | undefined
  // (while no task has more than a batch, a run's removal ends within the call)
  async function removeRows() {
    const removed: Record<string, number> = {}
    for (const task of tasks) {
      const cutoffNow = task.cutoffOf()
      removed[task.name] = 0
      try {
        for (;;) {
          if (closing) break
          // after another thread's writer has let go of the lock, the event loop free meanwhile
          const turn = writeTurn(app.sqlite)
          if (turn) await turn
          if (closing) break
          const n = task.statement.run({ cutoff: cutoffNow }).changes
          removed[task.name] += n
          if (n < task.batch) break
          await setImmediate()
        }
      } catch (err) {
        app.log.error({ error: (err as Error).message, task: task.name }, 'maintenance: rows not removed')
      }
    }
    logRemoved(removed)
  }
  function run(): Promise<void> {
    const rows = removing ? removing.then(removeRows) : removeRows()
    removing = rows
    rows.finally(() => { if (removing === rows) removing = undefined }).catch(() => {})
    // an outbox event goes with its messages, unless one of them still waits for its first attempt or a retry
    return rows.then(() => closing ? undefined : app.events.retain(retention()).then(
      (webhooks) => logRemoved(Object.fromEntries(Object.entries(webhooks).map(([k, n]) => [`webhook ${k}`, n]))),
      (err: Error) => app.log.error({ error: err.message }, 'maintenance: webhook records not removed')))
  }

  app.decorate('runMaintenance', run)
  app.addHook('onReady', async () => { void run() })
  const timer = setInterval(() => void run(), HOUR_MS)
  timer.unref()
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onClose', async () => clearInterval(timer))
}

export default fp(maintenancePlugin, { name: 'cairn-maintenance', dependencies: ['cairn-db', 'cairn-events'] })
