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
  active: integer('active', { mode: 'boolean' }).notNull(),
  description: text('description').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [index('webhooks_ws_idx').on(t.workspaceId, t.customerId, t.createdAt)])

export const webhookDeliveries = sqliteTable('webhook_deliveries', {
  id: text('id').primaryKey(),
  webhookId: text('webhook_id').notNull().references(() => webhooks.id, { onDelete: 'cascade' }),
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
