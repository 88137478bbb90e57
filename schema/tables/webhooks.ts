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
  /**
   * why the service switched it off: `gone` (the receiver answered 410 Gone), `failing` (every attempt failed for
   * 5 days); null while active or when a person switched it off
   */
  disabledReason: text('disabled_reason', { enum: ['gone', 'failing'] }),
  description: text('description').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [index('webhooks_ws_idx').on(t.workspaceId, t.customerId, t.createdAt)])

/**
 * The outbox: one row per event, written in the transaction of the change that causes it (a message, a
 * finished run); the outbox thread expands it into one message per subscribed webhook, in the outbox file
 * (schema/outbox/tables.ts), which records how far it has expanded. Kept after expansion (for its body) until
 * retention removes it.
 */
export const webhookEvents = sqliteTable('webhook_events', {
  seq: integer('seq').primaryKey({ autoIncrement: true }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  event: text('event').notNull(),
  /** the exact JSON body every attempt sends: {event, timestamp, data} */
  body: text('body').notNull(),
  /**
   * true for an event never fanned out: a test ping, or a job of an earlier version, whose one message is made
   * with it (and, in a database of an earlier version, an event it had expanded)
   */
  expanded: integer('expanded', { mode: 'boolean' }).notNull().default(false),
  createdAt: text('created_at').notNull()
}, (t) => [index('webhook_events_created_idx').on(t.createdAt)])
