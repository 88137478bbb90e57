import { sql } from 'drizzle-orm'
import { pgTable, text, integer, boolean, index } from 'drizzle-orm/pg-core'
import { int64 } from './columns.js'

// schema/outbox/tables.ts (in SQLite a file of its own, cairn-outbox.db): in PostgreSQL the same database holds
// them. Their rows still refer to webhooks and outbox events by id without a foreign key, as there, so that the
// outbox code keeps one behaviour (purge, orphans) on both backends.

export const webhookMessages = pgTable('webhook_messages', {
  seq: int64('seq').primaryKey().generatedByDefaultAsIdentity(),
  id: text('id').notNull().unique(),
  eventSeq: int64('event_seq').notNull(),
  webhookId: text('webhook_id').notNull(),
  state: text('state', { enum: ['pending', 'retrying', 'delivered', 'failed'] }).notNull(),
  attempts: integer('attempts').notNull().default(0),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [
  index('webhook_messages_pending_idx').on(t.seq).where(sql`state = 'pending'`),
  index('webhook_messages_event_idx').on(t.eventSeq),
  index('webhook_messages_hook_idx').on(t.webhookId)
])

export const webhookDeliveries = pgTable('webhook_deliveries', {
  id: text('id').primaryKey(),
  webhookId: text('webhook_id').notNull(),
  messageId: text('message_id'),
  attempt: integer('attempt').notNull().default(1),
  nextAttemptAt: text('next_attempt_at'),
  eventType: text('event_type').notNull(),
  statusCode: integer('status_code').notNull(),
  success: boolean('success').notNull(),
  latencyMs: integer('latency_ms').notNull(),
  requestBody: text('request_body').notNull(),
  responseBody: text('response_body').notNull(),
  error: text('error'),
  createdAt: text('created_at').notNull()
}, (t) => [
  index('webhook_deliveries_hook_idx').on(t.webhookId, t.createdAt),
  index('webhook_deliveries_created_idx').on(t.createdAt)
])

export const outboxState = pgTable('outbox_state', {
  id: integer('id').primaryKey(),
  expandedThrough: int64('expanded_through').notNull()
})
