import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { VERSION } from '../../src/version.js'
import { HealthResponse } from '../../schema/api/health.js'
import { databaseProbe } from './probe.js'

/** Liveness: answers without credentials and is never rate limited. */
const health: FastifyPluginAsyncTypebox = async (app) => {
  const probe = databaseProbe(app.sqlite)
  app.get('/health', {
    config: { auth: 'public' },
    schema: { tags: ['health'], summary: 'Liveness and database check',
      response: { 200: HealthResponse, 503: HealthResponse } }
  }, async (_request, reply) => {
    const database = probe()
    const body = {
      status: database === 'ok' ? 'ok' as const : 'degraded' as const,
      version: VERSION,
      uptime: Math.round(process.uptime() * 1000) / 1000,
      database,
      timestamp: new Date().toISOString()
    }
    reply.code(database === 'ok' ? 200 : 503)
    return body
  })
}

export default health
