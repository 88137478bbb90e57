import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { setImmediate } from 'node:timers/promises'
import { and, eq, inArray, lt, sql, type SQL } from 'drizzle-orm'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'
import { developerLogChunks } from '../../schema/tables/developer.js'
import { idempotencyKeys } from '../../schema/tables/idempotency.js'
import { jobs } from '../../schema/tables/jobs.js'

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
 * Rows a maintenance DELETE removes at a time, the event loop free between two: a month of developer log removed in
 * one statement (a first run after a long stop, or a busy key's hour) held the server for as long as it took
 */
export const MAINTENANCE_BATCH = 500

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
  // the first MAINTENANCE_BATCH rows of `table` that `where` names (by rowid: every table here has one)
  const task = (name: string, table: SQLiteTable, where: SQL | undefined, cutoffOf: () => string) => ({
    name, cutoffOf,
    statement: db.delete(table).where(inArray(sql`rowid`,
      db.select({ rowid: sql`rowid` }).from(table).where(where).limit(MAINTENANCE_BATCH))).prepare()
  })
  const tasks = [
    // a log chunk goes once its newest entry is past retention (its entries span one batch: at most a quarter second)
    task('developer log', developerLogChunks, lt(developerLogChunks.lastAt, cutoff), retention),
    task('failed jobs', jobs, and(eq(jobs.status, 'failed'), lt(jobs.updatedAt, cutoff)), retention),
    task('idempotency keys', idempotencyKeys, lt(idempotencyKeys.createdAt, cutoff), before(IDEMPOTENCY_TTL_MS))
  ]

  const logRemoved = (removed: Record<string, number>) => {
    const some = Object.fromEntries(Object.entries(removed).filter(([, n]) => n > 0))
    if (Object.keys(some).length > 0) app.log.info({ removed: some }, 'maintenance')
  }
  let closing = false
  // (a run's first batch of each task is removed at once: a run with little to do ends within the call)
  async function run() {
    const removed: Record<string, number> = {}
    try {
      for (const task of tasks) {
        const cutoffNow = task.cutoffOf()
        removed[task.name] = 0
        for (;;) {
          if (closing) return
          const n = task.statement.run({ cutoff: cutoffNow }).changes
          removed[task.name] += n
          if (n < MAINTENANCE_BATCH) break
          await setImmediate()
        }
      }
    } catch (err) {
      app.log.error({ error: (err as Error).message }, 'maintenance: rows not removed')
    } finally {
      logRemoved(removed)
    }
    if (closing) return
    // an outbox event goes with its messages, unless one of them still waits for its first attempt or a retry
    return app.events.retain(retention()).then(
      (webhooks) => logRemoved(Object.fromEntries(Object.entries(webhooks).map(([k, n]) => [`webhook ${k}`, n]))),
      (err: Error) => app.log.error({ error: err.message }, 'maintenance: webhook records not removed'))
  }

  app.decorate('runMaintenance', run)
  app.addHook('onReady', async () => { void run() })
  const timer = setInterval(() => void run(), HOUR_MS)
  timer.unref()
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onClose', async () => clearInterval(timer))
}

export default fp(maintenancePlugin, { name: 'cairn-maintenance', dependencies: ['cairn-db', 'cairn-events'] })
