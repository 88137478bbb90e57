import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'
import { organizations } from './accounts.js'

/**
 * The workspace event stream's log (GET /api/v2/events/stream): one row per change a console or client may want to
 * see at once, kept a day or two so that a reconnect with Last-Event-ID receives what it missed. Not webhook events.
 * Who may receive a row: the members of `workspace_id` (every workspace of the organization when null), only
 * `user_id` when set (a personal resource), only readers of `channel_id` when set.
 */
export const workspaceEvents = sqliteTable('workspace_events', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id'),
  userId: text('user_id'),
  channelId: text('channel_id'),
  /** the SSE event name, e.g. artifact.status_changed */
  name: text('name').notNull(),
  /** JSON object: the event's fields besides id, workspace_id and at */
  data: text('data').notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [
  index('workspace_events_customer_idx').on(t.customerId, t.id),
  index('workspace_events_created_idx').on(t.createdAt)
])
