import { pgTable, text, index } from 'drizzle-orm/pg-core'
import { organizations } from './accounts.js'
import { int64 } from './columns.js'

export const workspaceEvents = pgTable('workspace_events', {
  /** the stream's event id (Last-Event-ID): rises with every row */
  id: int64('id').primaryKey().generatedByDefaultAsIdentity(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id'),
  userId: text('user_id'),
  channelId: text('channel_id'),
  name: text('name').notNull(),
  data: text('data').notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [
  index('workspace_events_customer_idx').on(t.customerId, t.id),
  index('workspace_events_created_idx').on(t.createdAt)
])
