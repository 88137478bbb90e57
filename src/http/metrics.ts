import fp from 'fastify-plugin'
import fs from 'node:fs'
import path from 'node:path'
import client from 'prom-client'
import type { FastifyInstance } from 'fastify'
import { secretsEqual } from '../auth/keys.js'
import { unauthorized } from './errors.js'
import { count, gt, inArray, sql } from 'drizzle-orm'
import { jobOutcomes } from '../jobs/queue.js'
import { jobs as jobsTable } from '../../schema/tables/jobs.js'
import { webhookDeliveries } from '../../schema/outbox/tables.js'
import { writeTurnsOf, writeWaitsOf } from '../db/write-intent.js'
import { outboxFile } from '../db/outbox-file.js'

/**
 * Prometheus metrics at /metrics (off unless CAIRN_METRICS=true): requests and latency per route,
 * job queue depth and job outcomes, webhook delivery outcomes, database size, and the standard process
 * metrics. Names follow the Prometheus conventions (`promtool check metrics`): counters end in `_total`.
 */
async function metricsPlugin(app: FastifyInstance) {
  const { enabled, token } = app.config.metrics
  if (!enabled) return
  const registry = new client.Registry()
  // the standard process_* and nodejs_* names, which dashboards and alerts expect
  client.collectDefaultMetrics({ register: registry })
  // gauges that prom-client names like counters (promtool refuses them); their per-type series stay
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total',
    'nodejs_active_resources_total']) registry.removeSingleMetric(name)
  const requests = new client.Counter({ name: 'cairn_http_requests_total', help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'], registers: [registry] })
  const latency = new client.Histogram({
    name: 'cairn_http_request_duration_seconds', help: 'HTTP request duration by route',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10], registers: [registry]
  })
  const queueDepth = app.db.select({ type: jobsTable.type, status: jobsTable.status, n: count() }).from(jobsTable)
    .where(inArray(jobsTable.status, ['queued', 'running'])).groupBy(jobsTable.type, jobsTable.status).prepare()
  new client.Gauge({
    name: 'cairn_jobs_in_queue', help: 'Background jobs waiting or running, by type and status',
    labelNames: ['type', 'status'], registers: [registry],
    collect() {
      this.reset()
      for (const r of queueDepth.all()) this.set({ type: r.type, status: r.status }, r.n)
    }
  })
  const jobs = new client.Counter({ name: 'cairn_jobs_total',
    help: 'Finished job attempts by type and outcome (completed, failed, retried)', labelNames: ['type', 'outcome'],
    registers: [registry] })
  const onJob = (message: unknown) => {
    const m = message as { type: string; outcome: string }; jobs.inc({ type: m.type,
      outcome: m.outcome })
  }
  jobOutcomes.subscribe(onJob)
  app.addHook('onClose', async () => { jobOutcomes.unsubscribe(onJob) })

  // deliveries are counted from the rows recorded since this process started (rowids only grow)
  const lastRowid = sql<number | null>`max(rowid)`
  let lastDelivery = app.outboxDb.select({ r: lastRowid }).from(webhookDeliveries).get()?.r ?? 0
  const newDeliveries = app.outboxDb.select({ last: lastRowid, success: webhookDeliveries.success, n: count() })
    .from(webhookDeliveries).where(gt(sql`rowid`, sql.placeholder('after'))).groupBy(webhookDeliveries.success)
    .prepare()
  new client.Counter({
    name: 'cairn_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome (success, failure)',
    labelNames: ['outcome'], registers: [registry],
    collect() {
      let last = lastDelivery
      for (const r of newDeliveries.all({ after: lastDelivery })) {
        this.inc({ outcome: r.success ? 'success' : 'failure' }, r.n)
        last = Math.max(last, r.last ?? 0)
      }
      lastDelivery = last
    }
  })
  // a write of the server's connection that found a background thread's transaction open (the index worker's, the
  // webhook outbox thread's) waits for its commit: how often, and how long in all (each counter adds what is new)
  // (blocking the event loop); code about to write (requests, handlers, jobs, log and retention batches) waits for
  // its turn without blocking it (src/db/write-intent.ts, writeTurn): counted apart
  const none = { count: 0, ms: 0 }
  const waitCounter = (name: string, help: string, read: () => number) => {
    let seen = read()
    new client.Counter({ name, help, registers: [registry],
      collect() {
        const now = read()
        this.inc(now - seen)
        seen = now
      } })
  }
  const waits = () => writeWaitsOf(app.sqlite) ?? none
  const turns = () => writeTurnsOf(app.sqlite) ?? none
  waitCounter('cairn_db_write_waits_total',
    'Writes of the server that waited for a background thread\'s commit (index worker, webhook outbox), blocking',
    () => waits().count)
  waitCounter('cairn_db_write_wait_seconds_total',
    'Time the server\'s writes spent waiting for a background thread\'s commit, blocking', () => waits().ms / 1000)
  waitCounter('cairn_db_write_turns_total',
    'Writes (of requests, handlers, jobs, log and retention batches) that waited for their turn behind a background ' +
    'thread\'s commit, the event loop free', () => turns().count)
  waitCounter('cairn_db_write_turn_seconds_total',
    'Time writes waited for their turn behind a background thread\'s commit, the event loop free (waits that ' +
    'overlap each count)', () => turns().ms / 1000)
  new client.Gauge({
    name: 'cairn_database_size_bytes', help: 'Size of cairn.db and of the webhook outbox file, with their WALs',
    registers: [registry],
    collect() {
      const size = (f: string) => fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0
      const db = path.join(app.config.dataDir, 'cairn.db')
      this.set([db, outboxFile(db)].reduce((sum, f) => sum + size(f) + size(`${f}-wal`), 0))
    }
  })

  // a callback hook, like the request log's: no promise per request
  app.addHook('onResponse', (request, reply, done) => {
    // unknown paths are one series, not one per path a scanner tries
    const route = request.routeOptions.url ?? 'unmatched'
    if (route !== '/metrics') {
      requests.inc({ method: request.method, route, status: String(reply.statusCode) })
      latency.observe({ method: request.method, route }, reply.elapsedTime / 1000)
    }
    done()
  })

  app.get('/metrics', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
    if (token) {
      const given = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1]
      if (!given || !secretsEqual(given, token)) throw unauthorized('Metrics need the configured bearer token')
    }
    reply.type(registry.contentType)
    return registry.metrics()
  })
}

export default fp(metricsPlugin, { name: 'cairn-metrics', dependencies: ['cairn-db'] })
