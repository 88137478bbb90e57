import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { VERSION } from '../../src/version.js'
import { HealthResponse } from '../../schema/api/health.js'
import { databaseProbe } from './probe.js'
import { createTimestamps } from '../../src/developer-log/recorder.js'

/** Liveness: answers without credentials and is never rate limited. */
const health: FastifyPluginAsyncTypebox = async (app) => {
  const probe = databaseProbe(app.sqlite)
  // probes come many to a millisecond under load: `toISOString` (~0.6 µs) made once per millisecond, not per probe
  const stamp = createTimestamps()
  app.get('/health', {
    config: { auth: 'public' },
    schema: { tags: ['health'], summary: 'Liveness and database check',
      response: { 200: HealthResponse, 503: HealthResponse } }
  }, (_request, reply) => {
    // not async: a value returned at once is sent at once, with no promise to settle first
    const database = probe()
    const body = {
      status: database === 'ok' ? 'ok' as const : 'degraded' as const,
      version: VERSION,
      uptime: Math.round(process.uptime() * 1000) / 1000,
      database,
      timestamp: stamp.iso(Date.now())
    }
    reply.code(database === 'ok' ? 200 : 503)
    return body
  })
}

export default health
