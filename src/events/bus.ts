import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { deliver, type DeliveryAttempt } from './delivery.js'
import type { EventName } from './names.js'

export interface EventBus {
  /**
   * Fans an event out to every active webhook of the workspace subscribed to it, through the job queue:
   * the caller is never delayed by a receiver.
   */
  emit(workspaceId: string, event: EventName, data: object): number
}

export interface WebhookTarget { id: string; url: string; signing_secret: string; active: number }

declare module 'fastify' {
  interface FastifyInstance {
    events: EventBus
    /** one delivery attempt to one webhook, recorded */
    deliverToWebhook(hook: WebhookTarget, event: string, data: object): Promise<DeliveryAttempt>
  }
}

async function eventsPlugin(app: FastifyInstance) {
  const sqlite = app.sqlite
  const subscribed = sqlite.prepare(`SELECT w.id FROM webhooks w WHERE w.workspace_id = ? AND w.active = 1
    AND EXISTS (SELECT 1 FROM json_each(w.events) e WHERE e.value = ?)`)
  const hookById = sqlite.prepare(`SELECT id, url, signing_secret, active FROM webhooks WHERE id = ?`)
  const record = sqlite.prepare(`INSERT INTO webhook_deliveries (id, webhook_id, event_type, status_code, success, latency_ms,
    request_body, response_body, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)

  async function deliverToWebhook(hook: WebhookTarget, event: string, data: object) {
    const attempt = await deliver({ url: hook.url, secret: hook.signing_secret }, event, data, { allowPrivate: app.config.allowPrivateUrls })
    try {
      record.run(attempt.id, hook.id, event, attempt.statusCode, attempt.success ? 1 : 0, attempt.latencyMs,
        JSON.stringify(attempt.request), attempt.responseBody, attempt.error ?? null, new Date().toISOString())
    } catch (err) {
      // the webhook was deleted while its delivery was in flight: nothing to record against
      if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_FOREIGNKEY') throw err
    }
    return attempt
  }

  app.decorate('deliverToWebhook', deliverToWebhook)
  app.decorate('events', {
    emit(workspaceId, event, data) {
      const hooks = subscribed.all(workspaceId, event) as Array<{ id: string }>
      for (const h of hooks) app.jobs.enqueue('webhook.deliver', { webhookId: h.id, event, data })
      return hooks.length
    }
  } satisfies EventBus)

  // each event is sent once: a failed attempt is recorded, never retried
  app.jobs.register('webhook.deliver', async (payload) => {
    const { webhookId, event, data } = payload as { webhookId: string; event: string; data: object }
    const hook = hookById.get(webhookId) as WebhookTarget | undefined
    if (!hook || !hook.active) return
    await deliverToWebhook(hook, event, data)
  }, { maxAttempts: 1, concurrency: 8 })
}

export default fp(eventsPlugin, { name: 'cairn-events', dependencies: ['cairn-db'] })
