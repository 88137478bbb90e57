// The outbox file (cairn-outbox.db beside cairn.db, src/db/outbox-file.ts): what the webhook outbox thread
// writes, in a file of its own so that its commits never take cairn.db's write lock nor empty the request
// connection's page cache. It is written by that thread alone; the server reads it (deliveries, metrics). Its rows
// refer to cairn.db's webhooks and outbox events by id: no foreign key reaches across files, so the rows of a
// deleted webhook are removed by the thread (purge) and at start (orphans).
import { sql } from 'drizzle-orm'
import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'

/**
 * One event for one webhook (Standard Webhooks' "message"): its id is `webhook-id`, the same for every
 * attempt and redelivery. state: pending (first attempt not made yet), retrying (a retry job is queued),
 * delivered, failed (attempts exhausted, or the webhook became inactive).
 */
export const webhookMessages = sqliteTable('webhook_messages', {
  seq: integer('seq').primaryKey({ autoIncrement: true }),
  id: text('id').notNull().unique(),
  /** the event's seq in cairn.db's webhook_events */
  eventSeq: integer('event_seq').notNull(),
  /** the webhook's id in cairn.db */
  webhookId: text('webhook_id').notNull(),
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
  /** the webhook's id in cairn.db */
  webhookId: text('webhook_id').notNull(),
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

/**
 * One row (id 1): how far the outbox thread has expanded cairn.db's webhook_events, committed with the messages it
 * made; events above it that are to be fanned out (expanded = 0) are still to do.
 */
export const outboxState = sqliteTable('outbox_state', {
  id: integer('id').primaryKey(),
  expandedThrough: integer('expanded_through').notNull()
})
