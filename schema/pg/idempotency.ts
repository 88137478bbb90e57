import { pgTable, text, integer, primaryKey, index } from 'drizzle-orm/pg-core'

export const idempotencyKeys = pgTable('idempotency_keys', {
  caller: text('caller').notNull(),
  key: text('key').notNull(),
  fingerprint: text('fingerprint').notNull(),
  state: text('state', { enum: ['in_flight', 'done'] }).notNull(),
  statusCode: integer('status_code'),
  contentType: text('content_type'),
  body: text('body'),
  createdAt: text('created_at').notNull()
}, (t) => [
  primaryKey({ columns: [t.caller, t.key] }),
  index('idempotency_created_idx').on(t.createdAt)
])
