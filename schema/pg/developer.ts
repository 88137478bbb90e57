import { pgTable, text, integer, index, primaryKey } from 'drizzle-orm/pg-core'
import { int64 } from './columns.js'

export const developerLogChunks = pgTable('developer_log_chunks', {
  seq: int64('seq').primaryKey().generatedByDefaultAsIdentity(),
  userId: text('user_id').notNull(),
  apiKeyId: text('api_key_id'),
  categories: text('categories').notNull(),
  firstAt: text('first_at').notNull(),
  lastAt: text('last_at').notNull(),
  count: integer('count').notNull(),
  entries: text('entries').notNull()
}, (t) => [
  index('developer_log_chunks_user_idx').on(t.userId, t.seq),
  index('developer_log_chunks_key_idx').on(t.apiKeyId, t.seq),
  index('developer_log_chunks_last_idx').on(t.lastAt)
])

export const keyUsageDaily = pgTable('key_usage_daily', {
  keyId: text('key_id').notNull(),
  day: text('day').notNull(),
  count: integer('count').notNull()
}, (t) => [primaryKey({ columns: [t.keyId, t.day] })])
