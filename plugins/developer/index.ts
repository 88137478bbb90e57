import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, IdParams } from '../../schema/api/common.js'
import { UsageQuery, UsageResponse } from '../../schema/api/developer.js'
import { requirePrincipal } from '../../src/auth/plugin.js'
import { notFound } from '../../src/http/errors.js'
import { createUsageStore } from './store.js'

/** The developer API: per-key usage (webhooks and logs join this group in their own issue). */
const developer: FastifyPluginAsyncTypebox = async (app) => {
  const usage = createUsageStore(app.sqlite)

  app.get('/api-keys/:id/usage', {
    config: { action: 'developer.key_usage' },
    schema: {
      tags: ['developer'],
      summary: 'Requests per day made with one of the caller\'s API keys',
      params: IdParams,
      querystring: UsageQuery,
      response: { 200: UsageResponse, ...errors(403, 404) }
    }
  }, async (request) => {
    const p = requirePrincipal(request)
    const sparkline = usage.sparkline(p.userId, request.params.id, request.query.days, app.devLog.pendingUsage(request.params.id))
    if (!sparkline) throw notFound('API key not found')
    return { success: true as const, data: { key_id: request.params.id, days: request.query.days, sparkline } }
  })
}

export default developer
