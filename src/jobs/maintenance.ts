import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

const HOUR_MS = 60 * 60 * 1000
const DAY_MS = 24 * HOUR_MS
/** how long a stored Idempotency-Key answer is replayed (src/http/idempotency.ts reads it too) */
export const IDEMPOTENCY_TTL_MS = DAY_MS

declare module 'fastify' {
  interface FastifyInstance {
    /** runs every periodic maintenance task now (it also runs at start and every hour) */
    runMaintenance(): void
  }
}

/**
 * Periodic maintenance, in one place: retention of developer logs, webhook delivery records and failed
 * jobs (config.retentionDays), and expiry of stored Idempotency-Key answers. Each task is one indexed
 * DELETE; they run when the app is ready and then every hour.
 */
async function maintenancePlugin(app: FastifyInstance) {
  const sqlite = app.sqlite
  const before = (ms: number) => () => new Date(Date.now() - ms).toISOString()
  const retention = () => before(app.config.retentionDays * DAY_MS)()
  const task = (name: string, sql: string, cutoff: () => string) => ({ name, statement: sqlite.prepare(sql), cutoff })
  const tasks = [
    // a log chunk goes once its newest entry is past retention (its entries span one batch: at most a quarter second)
    task('developer log', `DELETE FROM developer_log_chunks WHERE last_at < ?`, retention),
    task('webhook deliveries', `DELETE FROM webhook_deliveries WHERE created_at < ?`, retention),
    // an outbox event goes with its messages, unless one of them still waits for a retry
    task('webhook events', `DELETE FROM webhook_events WHERE created_at < ? AND expanded = 1
      AND NOT EXISTS (SELECT 1 FROM webhook_messages m WHERE m.event_seq = webhook_events.seq
        AND m.state IN ('pending', 'retrying'))`, retention),
    task('failed jobs', `DELETE FROM jobs WHERE status = 'failed' AND updated_at < ?`, retention),
    task('idempotency keys', `DELETE FROM idempotency_keys WHERE created_at < ?`, before(IDEMPOTENCY_TTL_MS))
  ]

  function run() {
    const removed: Record<string, number> = {}
    for (const task of tasks) {
      const n = task.statement.run(task.cutoff()).changes
      if (n > 0) removed[task.name] = n
    }
    if (Object.keys(removed).length > 0) app.log.info({ removed }, 'maintenance')
  }

  app.decorate('runMaintenance', run)
  app.addHook('onReady', async () => run())
  const timer = setInterval(run, HOUR_MS)
  timer.unref()
  app.addHook('onClose', async () => clearInterval(timer))
}

export default fp(maintenancePlugin, { name: 'cairn-maintenance', dependencies: ['cairn-db'] })
