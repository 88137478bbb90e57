import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { errors, IdParams, SuccessMessage } from '../../schema/api/common.js'
import {
  UsageQuery, UsageResponse, CreateWebhookBody, UpdateWebhookBody, WorkspaceIdQuery, CreateWebhookResponse,
  ListWebhooksResponse,
  UpdateWebhookResponse, DeliveriesResponse, TestWebhookResponse, LogsQuery, LogsResponse, DeliveryParams,
  RedeliverResponse, RotateSecretResponse
} from '../../schema/api/developer.js'
import { requirePrincipal, requireWorkspaceContext } from '../../src/auth/plugin.js'
import { badRequest, notFound } from '../../src/http/errors.js'
import { checkPublicUrl, UrlNotAllowedError } from '../../src/net/address-guard.js'
import { webhookCallbacks } from '../../schema/api/webhook-events.js'
import { unknownEvents, EVENT_NAMES } from '../../src/events/names.js'
import { createUsageStore } from './store.js'
import { createWebhookStore } from './webhooks.js'
import eventList from './event-list.js'
import { createLogStore, decodeCursor, type LogPosition } from '../../src/developer-log/reader.js'
import { writeTurn } from '../../src/db/write-intent.js'

/** The developer API (docs/api/developer.md, docs/api/webhooks.md): key usage, webhooks, deliveries, logs. */
const developer: FastifyPluginAsyncTypebox = async (app) => {
  const usage = createUsageStore(app.db, app.sqlite)
  const hooks = createWebhookStore(app.db, app.outboxDb, app.webhookSecrets)
  const logs = createLogStore(app.sqlite)

  /**
   * The workspace the webhook routes act in. Managing needs a workspace owner/admin, whatever the credential: the
   * role table of src/auth/capabilities.ts, checked as the context is set (a key also needs its scope).
   */
  function hookScope(request: FastifyRequest) {
    const p = requirePrincipal(request)
    const ws = requireWorkspaceContext(request, (request.query as { workspaceId?: string } | undefined)?.workspaceId)
    return { workspaceId: ws.id, customerId: p.customerId, userId: p.userId }
  }

  // authorization before validation, for the routes that manage webhooks
  const managers = async (request: FastifyRequest) => { hookScope(request) }

  async function allowedUrl(url: string) {
    try {
      return (await checkPublicUrl(url, { allowPrivate: app.config.allowPrivateUrls,
        allow: app.config.webhookAllow })).toString()
    } catch (err) {
      if (err instanceof UrlNotAllowedError) throw badRequest(`Webhook URL refused: ${err.message}`, 'URL_NOT_ALLOWED')
      throw err
    }
  }

  function knownEvents(events: string[]) {
    const unknown = unknownEvents(events)
    if (unknown.length > 0) {
      throw badRequest(`Unknown event(s): ${unknown.join(', ')}; allowed: ${EVENT_NAMES.join(', ')}`, 'UNKNOWN_EVENT')
    }
    return events
  }

  app.get('/api-keys/:id/usage', {
    config: { action: 'developer.key_usage' },
    schema: {
      tags: ['developer'], summary: 'Requests per day made with one of the caller\'s API keys',
      params: IdParams, querystring: UsageQuery, response: { 200: UsageResponse, ...errors(403, 404) }
    }
  }, (request) => {
    // not async: a value returned at once is sent at once, with no promise to settle first (dashboards poll this)
    const p = requirePrincipal(request)
    const sparkline = usage.sparkline(p.userId, request.params.id, request.query.days,
      app.devLog.pendingUsage(request.params.id))
    if (!sparkline) throw notFound('API key not found')
    return { success: true as const, data: { key_id: request.params.id, days: request.query.days, sparkline } }
  })

  app.post('/webhooks', {
    config: {
      action: 'webhooks.create',
      // a kept response is replayed only while the webhook and its signing secret still exist
      secretResponse: (body, request) => {
        const data = (body as { data?: { id?: unknown; workspace_id?: unknown;
          signing_secret?: unknown } } | undefined)?.data
        if (typeof data?.id !== 'string' || typeof data.workspace_id !== 'string') return false
        const hook = hooks.find(data.id, data.workspace_id, requirePrincipal(request).customerId)
        return !!hook && app.webhookSecrets.open(hook.signingSecret, hook.id) === data.signing_secret
      }
    },
    preValidation: managers,
    schema: {
      tags: ['webhooks'], summary: 'Subscribe a URL to events; the signing secret is shown only here',
      querystring: WorkspaceIdQuery, body: CreateWebhookBody, response: { 201: CreateWebhookResponse, ...errors(403) },
      // the bodies the webhook receives, for the OpenAPI document
      callbacks: webhookCallbacks()
    }
  }, async (request, reply) => {
    const scope = hookScope(request)
    const events = knownEvents(request.body.events)
    const url = await allowedUrl(request.body.url)
    // after the address's check (a DNS look-up): a write turn of its own (src/db/write-intent.ts)
    await writeTurn(app.sqlite)
    reply.code(201).header('cache-control', 'no-store')
    return { success: true as const,
      data: hooks.create(scope, { url, events, description: request.body.description ?? '' }) }
  })

  await app.register(eventList)

  app.get('/webhooks', {
    config: { action: 'webhooks.list' },
    schema: { tags: ['webhooks'], summary: 'Webhooks of the workspace (no secrets)', querystring: WorkspaceIdQuery,
      response: { 200: ListWebhooksResponse, ...errors(403) } }
  }, async (request) => {
    const s = hookScope(request)
    return { success: true as const, data: hooks.list(s.workspaceId, s.customerId) }
  })

  app.put('/webhooks/:id', {
    config: { action: 'webhooks.update' },
    preValidation: managers,
    schema: {
      tags: ['webhooks'], summary: 'Change URL, events, active flag or description',
      params: IdParams, querystring: WorkspaceIdQuery, body: UpdateWebhookBody,
      response: { 200: UpdateWebhookResponse, ...errors(403, 404) }
    }
  }, async (request) => {
    const s = hookScope(request)
    const b = request.body
    if (b.url === undefined && b.events === undefined && b.active === undefined && b.description === undefined) {
      throw badRequest('Nothing to update: send url, events, active or description', 'VALIDATION_ERROR')
    }
    if (!hooks.find(request.params.id, s.workspaceId, s.customerId)) throw notFound('Webhook not found')
    const patch = { ...b, ...(b.events ? { events: knownEvents(b.events) } : {}),
      ...(b.url ? { url: await allowedUrl(b.url) } : {}) }
    if (b.url) await writeTurn(app.sqlite)
    const updated = hooks.update(request.params.id, s.workspaceId, s.customerId, patch)
    if (!updated) throw notFound('Webhook not found')
    return { success: true as const,
      data: { id: updated.id, url: updated.url, events: updated.events, active: updated.active,
        disabled_reason: updated.disabled_reason, updated_at: updated.updated_at } }
  })

  app.delete('/webhooks/:id', {
    config: { action: 'webhooks.delete' },
    preValidation: managers,
    schema: { tags: ['webhooks'], summary: 'Delete a webhook and its delivery records', params: IdParams,
      querystring: WorkspaceIdQuery, response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    const s = hookScope(request)
    if (!hooks.remove(request.params.id, s.workspaceId, s.customerId)) throw notFound('Webhook not found')
    app.events.forget(request.params.id)
    return { success: true as const, message: 'Webhook deleted' }
  })

  app.get('/webhooks/:id/deliveries', {
    config: { action: 'webhooks.deliveries' },
    schema: { tags: ['webhooks'], summary: 'The last 50 delivery attempts, newest first', params: IdParams,
      querystring: WorkspaceIdQuery, response: { 200: DeliveriesResponse, ...errors(403, 404) } }
  }, async (request) => {
    const s = hookScope(request)
    if (!hooks.find(request.params.id, s.workspaceId, s.customerId)) throw notFound('Webhook not found')
    return { success: true as const, data: hooks.deliveries(request.params.id) }
  })

  app.post('/webhooks/:id/test', {
    config: { action: 'webhooks.test' },
    preValidation: managers,
    schema: { tags: ['webhooks'], summary: 'Send a test.ping now and report the outcome', params: IdParams,
      querystring: WorkspaceIdQuery, response: { 200: TestWebhookResponse, ...errors(403, 404) } }
  }, async (request) => {
    const s = hookScope(request)
    const hook = hooks.find(request.params.id, s.workspaceId, s.customerId)
    if (!hook) throw notFound('Webhook not found')
    const attempt = await app.events.ping(hook)
    return {
      success: true as const,
      data: {
        delivered: attempt.success, status_code: attempt.statusCode, latency_ms: attempt.latencyMs,
        delivery: { id: attempt.id, event_type: attempt.eventType }, ...(attempt.error ? { error: attempt.error } : {})
      }
    }
  })

  app.post('/webhooks/:id/deliveries/:deliveryId/redeliver', {
    config: { action: 'webhooks.redeliver' },
    preValidation: managers,
    schema: {
      tags: ['webhooks'],
      summary: 'Send a delivery\'s event again now, with the same webhook-id (one attempt, not retried)',
      params: DeliveryParams, querystring: WorkspaceIdQuery, response: { 202: RedeliverResponse, ...errors(403, 404) }
    }
  }, async (request, reply) => {
    const s = hookScope(request)
    if (!hooks.find(request.params.id, s.workspaceId, s.customerId)) throw notFound('Webhook not found')
    const id = app.events.redeliver(request.params.id, request.params.deliveryId, s.customerId)
    if (!id) throw notFound('Delivery not found')
    reply.code(202)
    return { success: true as const, data: { id } }
  })

  app.post('/webhooks/:id/rotate-secret', {
    config: { action: 'webhooks.rotate_secret' },
    preValidation: managers,
    schema: {
      tags: ['webhooks'],
      summary: 'A new signing secret, shown only here; the old one keeps signing (a second signature) for 24 hours',
      params: IdParams, querystring: WorkspaceIdQuery, response: { 201: RotateSecretResponse, ...errors(403, 404) }
    }
  }, async (request, reply) => {
    const s = hookScope(request)
    const secret = hooks.rotateSecret(request.params.id, s.workspaceId, s.customerId)
    if (!secret) throw notFound('Webhook not found')
    reply.code(201).header('cache-control', 'no-store')
    return { success: true as const, data: { signing_secret: secret } }
  })

  app.get('/logs', {
    config: { action: 'developer.logs' },
    schema: { tags: ['developer'], summary: 'The caller\'s API-key requests and activity entries, newest first',
      querystring: LogsQuery, response: { 200: LogsResponse, ...errors(403) } }
  }, async (request) => {
    const q = request.query
    let before: LogPosition | undefined
    if (q.cursor !== undefined) {
      before = decodeCursor(q.cursor)
      if (before === undefined) throw badRequest('Invalid cursor', 'VALIDATION_ERROR')
    }
    app.devLog.flush()
    const categories = q.categories?.split(',').map((c) => c.trim()).filter(Boolean)
    const page = logs.page(requirePrincipal(request).userId, {
      categories, apiKeyId: q.api_key_id, start: q.start && new Date(q.start).toISOString(),
      end: q.end && new Date(q.end).toISOString(), before, limit: q.limit
    })
    return { success: true as const, ...page }
  })
}

export default developer
