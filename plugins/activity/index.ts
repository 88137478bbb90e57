import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors } from '../../schema/api/common.js'
import { ActivityBody, ActivityResponse } from '../../schema/api/developer.js'
import { requirePrincipal } from '../../src/auth/plugin.js'

/**
 * `POST /api/v2/activity/log` (docs/api/developer.md): a client's own developer-log entry. Posted with an API key,
 * it replaces that request's automatic entry.
 */
const activity: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/log', {
    config: { action: 'activity.log' },
    schema: { tags: ['developer'], summary: 'Record an activity entry in the developer log', body: ActivityBody,
      response: { 201: ActivityResponse, ...errors(403) } }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const entry = {
      userId: p.userId,
      apiKeyId: p.apiKey?.id ?? null,
      category: request.body.category ?? 'activity',
      action: request.body.action,
      statusCode: 201,
      durationMs: Math.round(reply.elapsedTime),
      metadata: request.body.metadata
    }
    request.skipRequestLog = true
    const { id, createdAt } = app.devLog.record(entry)
    reply.code(201)
    return {
      success: true as const,
      data: {
        id, category: entry.category, action: entry.action, api_key_id: entry.apiKeyId, status_code: 201,
        duration_ms: entry.durationMs, ...(entry.metadata ? { metadata: entry.metadata } : {}), created_at: createdAt
      }
    }
  })
}

export default activity
