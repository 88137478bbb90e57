import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { VERSION } from '../../src/version.js'
import { StringEnum } from '../../schema/api/common.js'

const HealthResponse = Type.Object({
  status: StringEnum(['ok', 'degraded']),
  version: Type.String(),
  uptime: Type.Number({ description: 'seconds since start' }),
  database: StringEnum(['ok', 'error']),
  timestamp: Type.String({ format: 'date-time' })
})

/** Liveness: answers without credentials and is never rate limited. */
const health: FastifyPluginAsyncTypebox = async (app) => {
  // a probe of the connection itself, not of a table: the one statement of this group, raw
  const ping = app.sqlite.prepare('SELECT 1 AS ok')
  app.get('/health', {
    config: { auth: 'public' },
    schema: { tags: ['health'], summary: 'Liveness and database check',
      response: { 200: HealthResponse, 503: HealthResponse } }
  }, async (_request, reply) => {
    let database: 'ok' | 'error' = 'ok'
    try { ping.get() } catch { database = 'error' }
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
