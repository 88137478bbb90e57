import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { and, eq, lt, sql } from 'drizzle-orm'
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
     * runs every periodic maintenance task now (it also runs at start and every hour): those of cairn.db at once,
     * the webhook records' in the outbox thread (the outbox file's writer), settled with the promise
     */
    runMaintenance(): Promise<void>
  }
}

/**
 * Periodic maintenance, in one place: retention of developer logs, webhook events and delivery records, and failed
 * jobs (config.retentionDays), and expiry of stored Idempotency-Key answers. Each task is one indexed
 * DELETE; they run when the app is ready and then every hour.
 */
async function maintenancePlugin(app: FastifyInstance) {
  const db = app.db
  const cutoff = sql.placeholder('cutoff')
  const before = (ms: number) => () => new Date(Date.now() - ms).toISOString()
  const retention = () => before(app.config.retentionDays * DAY_MS)()
  const task = (name: string, statement: { run(values: { cutoff: string }): { changes: number } },
    cutoffOf: () => string) => ({ name, statement, cutoffOf })
  const tasks = [
    // a log chunk goes once its newest entry is past retention (its entries span one batch: at most a quarter second)
    task('developer log', db.delete(developerLogChunks).where(lt(developerLogChunks.lastAt, cutoff)).prepare(),
      retention),
    task('failed jobs', db.delete(jobs).where(and(eq(jobs.status, 'failed'), lt(jobs.updatedAt, cutoff))).prepare(),
      retention),
    task('idempotency keys', db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, cutoff)).prepare(),
      before(IDEMPOTENCY_TTL_MS))
  ]

  const logRemoved = (removed: Record<string, number>) => {
    const some = Object.fromEntries(Object.entries(removed).filter(([, n]) => n > 0))
    if (Object.keys(some).length > 0) app.log.info({ removed: some }, 'maintenance')
  }
  function run() {
    const removed: Record<string, number> = {}
    for (const task of tasks) removed[task.name] = task.statement.run({ cutoff: task.cutoffOf() }).changes
    logRemoved(removed)
    // an outbox event goes with its messages, unless one of them still waits for its first attempt or a retry
    return app.events.retain(retention()).then(
      (webhooks) => logRemoved(Object.fromEntries(Object.entries(webhooks).map(([k, n]) => [`webhook ${k}`, n]))),
      (err: Error) => app.log.error({ error: err.message }, 'maintenance: webhook records not removed'))
  }

  app.decorate('runMaintenance', run)
  app.addHook('onReady', async () => { void run() })
  const timer = setInterval(() => void run(), HOUR_MS)
  timer.unref()
  app.addHook('onClose', async () => clearInterval(timer))
}

export default fp(maintenancePlugin, { name: 'cairn-maintenance', dependencies: ['cairn-db', 'cairn-events'] })
