import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core'

/**
 * The developer log (one entry per request made with an API key, and per activity log post), stored in chunks:
 * each batch written by the request log holds one row per user and key with that batch's entries, so an
 * API-key request costs a share of one insert instead of a row and two index entries of its own.
 * An entry's position (chunk seq, index in `entries`) orders the log and is the logs endpoint's cursor.
 */
export const developerLogChunks = sqliteTable('developer_log_chunks', {
  /** increasing with every chunk written; never reused */
  seq: integer('seq').primaryKey({ autoIncrement: true }),
  userId: text('user_id').notNull(),
  apiKeyId: text('api_key_id'),
  /** the distinct categories of the entries, as `,a,b,`: a category filter skips chunks without decoding them */
  categories: text('categories').notNull(),
  /** created_at of the first and last entry */
  firstAt: text('first_at').notNull(),
  lastAt: text('last_at').notNull(),
  count: integer('count').notNull(),
  /** JSON array of entries, oldest first, each in the format of src/developer-log/format.ts */
  entries: text('entries').notNull()
}, (t) => [
  index('developer_log_chunks_user_idx').on(t.userId, t.seq),
  index('developer_log_chunks_key_idx').on(t.apiKeyId, t.seq),
  index('developer_log_chunks_last_idx').on(t.lastAt)
])

/** Requests per API key per UTC day, for the usage sparkline. */
export const keyUsageDaily = sqliteTable('key_usage_daily', {
  keyId: text('key_id').notNull(),
  day: text('day').notNull(),
  count: integer('count').notNull()
}, (t) => [primaryKey({ columns: [t.keyId, t.day] })])
