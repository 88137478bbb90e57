import { bigint, customType } from 'drizzle-orm/pg-core'

/**
 * SQLite's 64-bit integers where they outgrow PostgreSQL's `integer`: epoch milliseconds, sequence numbers, row ids,
 * byte sizes. Read as JavaScript numbers, as better-sqlite3 reads them (every such value stays far below 2^53).
 */
export const int64 = (name: string) => bigint(name, { mode: 'number' })

/** PostgreSQL's `tsvector`: written by the database only (a generated column), never read by the code */
export const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' })
