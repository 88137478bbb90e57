import { randomBytes, randomUUID } from 'node:crypto'
import { and, desc, eq, sql } from 'drizzle-orm'
import { nowIso, type Db } from '../../src/db/index.js'
import type { OutboxDb } from '../../src/db/outbox-file.js'
import { fixedLimit } from '../../src/db/prepared.js'
import type { RequestRecord } from '../../src/events/delivery.js'
import type { SecretBox } from '../../src/events/secret-box.js'
import { webhooks } from '../../schema/tables/webhooks.js'
import { webhookDeliveries } from '../../schema/outbox/tables.js'

type Webhook = typeof webhooks.$inferSelect

const publicHook = (r: Webhook) => ({
  id: r.id, url: r.url, events: JSON.parse(r.events) as string[], active: r.active, disabled_reason: r.disabledReason,
  description: r.description, created_at: r.createdAt, updated_at: r.updatedAt
})

const newSecret = () => `whsec_${randomBytes(32).toString('hex')}`
/** how long a replaced secret keeps signing deliveries (a second signature) */
const ROTATION_OVERLAP_MS = 86_400_000

/**
 * Webhooks of a workspace and their delivery records (in the outbox file, `outbox`); every query is confined to
 * workspace and organization (a webhook's deliveries are read once the webhook is found in the caller's workspace).
 */
export function createWebhookStore(db: Db, outbox: OutboxDb, box: SecretBox) {
  const p = sql.placeholder
  const inWorkspace = and(eq(webhooks.id, p('id')), eq(webhooks.workspaceId, p('workspaceId')),
    eq(webhooks.customerId, p('customerId')))
  const list = db.select().from(webhooks)
    .where(and(eq(webhooks.workspaceId, p('workspaceId')), eq(webhooks.customerId, p('customerId'))))
    .orderBy(desc(webhooks.createdAt), desc(webhooks.id)).prepare()
  const one = db.select().from(webhooks).where(inWorkspace).prepare()
  const remove = db.delete(webhooks).where(inWorkspace).prepare()
  const rotate = db.update(webhooks).set({ previousSigningSecret: sql`${webhooks.signingSecret}`,
    previousSecretExpiresAt: sql`${p('expiresAt')}`, signingSecret: sql`${p('secret')}`, updatedAt: sql`${p('now')}` })
    .where(inWorkspace).prepare()
  const deliveries = outbox.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, p('webhookId')))
    .orderBy(desc(webhookDeliveries.createdAt), desc(sql`${webhookDeliveries}.rowid`)).limit(fixedLimit(50)).prepare()

  return {
    create(ws: { customerId: string; workspaceId: string; userId: string },
      input: { url: string; events: string[]; description: string }) {
      const id = randomUUID()
      const secret = newSecret()
      const now = nowIso()
      db.insert(webhooks).values({ id, customerId: ws.customerId, workspaceId: ws.workspaceId, url: input.url,
        events: JSON.stringify(input.events), signingSecret: box.seal(secret, id), active: true,
        description: input.description,
        createdBy: ws.userId, createdAt: now, updatedAt: now }).run()
      return {
        id, workspace_id: ws.workspaceId, url: input.url, events: input.events, signing_secret: secret,
        active: true, disabled_reason: null, description: input.description, created_at: now
      }
    },
    list(workspaceId: string, customerId: string) {
      return list.all({ workspaceId, customerId }).map(publicHook)
    },
    /** the full row (with the secrets, for signing); undefined for a missing or foreign webhook */
    find(id: string, workspaceId: string, customerId: string) {
      return one.get({ id, workspaceId, customerId })
    },
    update(id: string, workspaceId: string, customerId: string,
      patch: { url?: string; events?: string[]; active?: boolean; description?: string }) {
      const row = db.update(webhooks).set({
        url: patch.url, events: patch.events && JSON.stringify(patch.events), active: patch.active,
        // switched on again: the 5 days of failures count from the next failure
        ...(patch.active !== undefined ? { failingSince: null, disabledReason: null } : {}),
        description: patch.description, updatedAt: nowIso()
      }).where(and(eq(webhooks.id, id), eq(webhooks.workspaceId, workspaceId), eq(webhooks.customerId, customerId)))
        .returning().get()
      return row && publicHook(row)
    },
    /**
     * a new signing secret; the one it replaces keeps signing for 24 hours. undefined for a missing or foreign webhook
     */
    rotateSecret(id: string, workspaceId: string, customerId: string, now = Date.now()) {
      const secret = newSecret()
      const changed = rotate.run({ expiresAt: new Date(now + ROTATION_OVERLAP_MS).toISOString(),
        secret: box.seal(secret, id),
        now: new Date(now).toISOString(), id, workspaceId, customerId }).changes
      return changed > 0 ? secret : undefined
    },
    remove(id: string, workspaceId: string, customerId: string) {
      return remove.run({ id, workspaceId, customerId }).changes > 0
    },
    deliveries(webhookId: string) {
      return deliveries.all({ webhookId }).map((d) => ({
        id: d.id, webhook_id: d.webhookId, message_id: d.messageId, attempt: d.attempt,
        next_attempt_at: d.nextAttemptAt, event_type: d.eventType, status_code: d.statusCode, success: d.success,
        latency_ms: d.latencyMs, request_body: JSON.parse(d.requestBody) as RequestRecord,
        response_body: d.responseBody,
        ...(d.error ? { error: d.error } : {}), created_at: d.createdAt
      }))
    }
  }
}
