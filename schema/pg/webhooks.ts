import { pgTable, text, boolean, index } from 'drizzle-orm/pg-core'
import { organizations, workspaces } from './accounts.js'
import { int64 } from './columns.js'

export const webhooks = pgTable('webhooks', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  events: text('events').notNull(),
  signingSecret: text('signing_secret').notNull(),
  previousSigningSecret: text('previous_signing_secret'),
  previousSecretExpiresAt: text('previous_secret_expires_at'),
  failingSince: text('failing_since'),
  active: boolean('active').notNull(),
  disabledReason: text('disabled_reason', { enum: ['gone', 'failing'] }),
  description: text('description').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [index('webhooks_ws_idx').on(t.workspaceId, t.customerId, t.createdAt)])

export const webhookEvents = pgTable('webhook_events', {
  seq: int64('seq').primaryKey().generatedByDefaultAsIdentity(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  event: text('event').notNull(),
  /** the exact bytes every attempt sends and signs: text, never jsonb (which reorders keys and drops spacing) */
  body: text('body').notNull(),
  expanded: boolean('expanded').notNull().default(false),
  createdAt: text('created_at').notNull()
}, (t) => [index('webhook_events_created_idx').on(t.createdAt)])
