import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core'

/** One row per request made with an API key (and per activity log post). */
export const developerLogs = sqliteTable('developer_logs', {
  /** monotonically increasing; the cursor of the logs endpoint */
  seq: integer('seq').primaryKey({ autoIncrement: true }),
  id: text('id').notNull(),
  customerId: text('customer_id').notNull(),
  userId: text('user_id').notNull(),
  apiKeyId: text('api_key_id'),
  category: text('category').notNull(),
  action: text('action').notNull(),
  method: text('method'),
  path: text('path'),
  statusCode: integer('status_code').notNull(),
  durationMs: integer('duration_ms').notNull(),
  metadata: text('metadata'),
  createdAt: text('created_at').notNull()
}, (t) => [
  index('developer_logs_user_idx').on(t.userId, t.seq),
  index('developer_logs_key_idx').on(t.apiKeyId, t.seq),
  index('developer_logs_created_idx').on(t.createdAt)
])

/** Requests per API key per UTC day, for the usage sparkline. */
export const keyUsageDaily = sqliteTable('key_usage_daily', {
  keyId: text('key_id').notNull(),
  day: text('day').notNull(),
  count: integer('count').notNull()
}, (t) => [primaryKey({ columns: [t.keyId, t.day] })])
