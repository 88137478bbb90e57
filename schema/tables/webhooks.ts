import { sql } from 'drizzle-orm'
import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'
import { organizations, workspaces } from './accounts.js'

export const webhooks = sqliteTable('webhooks', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  /** JSON array of event names */
  events: text('events').notNull(),
  /** needed in clear to sign deliveries (HMAC), so it cannot be stored hashed; never sent after creation */
  signingSecret: text('signing_secret').notNull(),
  /** the secret replaced by the last rotation: it signs too (a second signature) until it expires */
  previousSigningSecret: text('previous_signing_secret'),
  previousSecretExpiresAt: text('previous_secret_expires_at'),
  /** the first failed attempt since the last success: an endpoint failing for 5 days is set inactive */
  failingSince: text('failing_since'),
  active: integer('active', { mode: 'boolean' }).notNull(),
  description: text('description').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [index('webhooks_ws_idx').on(t.workspaceId, t.customerId, t.createdAt)])

/**
 * The outbox: one row per event, written in the transaction of the change that causes it (a message, a
 * finished run); the fan-out job expands it into one message per subscribed webhook. Kept after expansion
 * (for its body) until retention removes it.
 */
export const webhookEvents = sqliteTable('webhook_events', {
  seq: integer('seq').primaryKey({ autoIncrement: true }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  event: text('event').notNull(),
  /** the exact JSON body every attempt sends: {event, timestamp, data} */
  body: text('body').notNull(),
  expanded: integer('expanded', { mode: 'boolean' }).notNull().default(false),
  createdAt: text('created_at').notNull()
}, (t) => [
  index('webhook_events_outbox_idx').on(t.seq).where(sql`expanded = 0`),
  index('webhook_events_created_idx').on(t.createdAt)
])

/**
 * One event for one webhook (Standard Webhooks' "message"): its id is `webhook-id`, the same for every
 * attempt and redelivery. state: pending (first attempt not made yet), retrying (a retry job is queued),
 * delivered, failed (attempts exhausted, or the webhook became inactive).
 */
export const webhookMessages = sqliteTable('webhook_messages', {
  seq: integer('seq').primaryKey({ autoIncrement: true }),
  id: text('id').notNull().unique(),
  eventSeq: integer('event_seq').notNull().references(() => webhookEvents.seq, { onDelete: 'cascade' }),
  webhookId: text('webhook_id').notNull().references(() => webhooks.id, { onDelete: 'cascade' }),
  state: text('state', { enum: ['pending', 'retrying', 'delivered', 'failed'] }).notNull(),
  /** attempts made so far (automatic and redeliveries) */
  attempts: integer('attempts').notNull().default(0),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [
  index('webhook_messages_pending_idx').on(t.seq).where(sql`state = 'pending'`),
  index('webhook_messages_event_idx').on(t.eventSeq),
  index('webhook_messages_hook_idx').on(t.webhookId)
])

export const webhookDeliveries = sqliteTable('webhook_deliveries', {
  id: text('id').primaryKey(),
  webhookId: text('webhook_id').notNull().references(() => webhooks.id, { onDelete: 'cascade' }),
  /** `webhook-id` of the attempt (null for attempts recorded before messages existed) */
  messageId: text('message_id'),
  /** 1 for the first attempt of a message */
  attempt: integer('attempt').notNull().default(1),
  /** when the next automatic attempt is due after this failed one; null when none will follow */
  nextAttemptAt: text('next_attempt_at'),
  eventType: text('event_type').notNull(),
  statusCode: integer('status_code').notNull(),
  success: integer('success', { mode: 'boolean' }).notNull(),
  latencyMs: integer('latency_ms').notNull(),
  /** JSON: event, timestamp, body_sha256, body_bytes, truncated, body_preview */
  requestBody: text('request_body').notNull(),
  responseBody: text('response_body').notNull(),
  error: text('error'),
  createdAt: text('created_at').notNull()
}, (t) => [
  index('webhook_deliveries_hook_idx').on(t.webhookId, t.createdAt),
  index('webhook_deliveries_created_idx').on(t.createdAt)
])
