import fp from 'fastify-plugin'
import fs from 'node:fs'
import path from 'node:path'
import client from 'prom-client'
import type { FastifyInstance } from 'fastify'
import { secretsEqual } from '../auth/keys.js'
import { unauthorized } from './errors.js'

/**
 * Prometheus metrics at /metrics (off unless CAIRN_METRICS=true): requests and latency per route,
 * job queue depth, webhook outcomes, database size, and the process defaults.
 */
async function metricsPlugin(app: FastifyInstance) {
  const { enabled, token } = app.config.metrics
  if (!enabled) return
  const registry = new client.Registry()
  client.collectDefaultMetrics({ register: registry, prefix: 'cairn_' })
  const requests = new client.Counter({ name: 'cairn_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers: [registry] })
  const latency = new client.Histogram({
    name: 'cairn_http_request_duration_seconds', help: 'HTTP request duration by route', labelNames: ['method', 'route'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10], registers: [registry]
  })
  const sqlite = app.sqlite
  const jobDepth = sqlite.prepare(`SELECT type, status, COUNT(*) AS n FROM jobs GROUP BY type, status`)
  const deliveries = sqlite.prepare(`SELECT success, COUNT(*) AS n FROM webhook_deliveries GROUP BY success`)
  new client.Gauge({
    name: 'cairn_jobs', help: 'Background jobs by type and status', labelNames: ['type', 'status'], registers: [registry],
    collect() {
      this.reset()
      for (const r of jobDepth.all() as Array<{ type: string; status: string; n: number }>) this.set({ type: r.type, status: r.status }, r.n)
    }
  })
  new client.Gauge({
    name: 'cairn_webhook_deliveries', help: 'Recorded webhook delivery attempts by outcome (within retention)', labelNames: ['outcome'], registers: [registry],
    collect() {
      this.reset()
      for (const r of deliveries.all() as Array<{ success: number; n: number }>) this.set({ outcome: r.success ? 'success' : 'failure' }, r.n)
    }
  })
  new client.Gauge({
    name: 'cairn_database_size_bytes', help: 'Size of cairn.db and its WAL', registers: [registry],
    collect() {
      const db = path.join(app.config.dataDir, 'cairn.db')
      const size = (f: string) => fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0
      this.set(size(db) + size(`${db}-wal`))
    }
  })

  // a callback hook, like the request log's: no promise per request
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url
    if (route && route !== '/metrics') {
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
