import type Database from 'better-sqlite3'
import { decodeChunk, type LogEntry } from './format.js'
import type { SqlRow } from '../db/prepared.js'
import type { developerLogChunks } from '../../schema/tables/developer.js'

/** An entry's place in the log: its chunk, and its index in the chunk's entries */
export interface LogPosition { seq: number; index: number }

type ChunkRow = Pick<SqlRow<typeof developerLogChunks>, 'seq' | 'api_key_id' | 'count' | 'entries'>
interface PageParams {
  userId: string; categories: string; apiKeyId?: string; start?: string; end?: string; beforeSeq?: number
}

const toLogEntry = (e: LogEntry, apiKeyId: string | null) => ({
  id: e.id, category: e.category, action: e.action, api_key_id: apiKeyId, status_code: e.statusCode,
  duration_ms: e.durationMs,
  ...(e.metadata ? { metadata: e.metadata as Record<string, unknown> } : {}), created_at: e.createdAt
})

const encodeCursor = (p: LogPosition) => Buffer.from(`c${p.seq}.${p.index}`).toString('base64url')
export function decodeCursor(cursor: string): LogPosition | undefined {
  const m = /^c(\d{1,15})\.(\d{1,6})$/.exec(Buffer.from(cursor, 'base64url').toString())
  return m ? { seq: Number(m[1]), index: Number(m[2]) } : undefined
}

/**
 * Entries, and bytes of chunks decoded, that one page may examine: a filter that matches little returns a
 * shorter page with a cursor rather than decoding the whole log in one request.
 */
export const LOG_SCAN_BUDGET = 20_000
export const LOG_SCAN_BYTES = 8 << 20

/**
 * The caller's developer log, newest first, in keyset pages: new entries never shift a later page.
 * Chunks are narrowed by user, key, categories and time in SQL, then their entries are filtered exactly.
 */
export function createLogStore(sqlite: Database.Database) {
  // raw SQL: the category filter is a json_each over the chunk's categories, and the page streams chunks
  // (iterate()) until it is full, which Drizzle's prepared queries cannot (they read every row)
  const statements = new Map<string, Database.Statement<[PageParams], ChunkRow>>()
  return {
    page(userId: string,
      q: { categories?: string[]; apiKeyId?: string; start?: string; end?: string; before?: LogPosition;
        limit: number }) {
      const where = ['user_id = @userId']
      if (q.categories?.length) {
        where.push(`EXISTS (SELECT 1 FROM json_each(@categories) WHERE instr(categories, ',' || value || ',') > 0)`)
      }
      if (q.apiKeyId) where.push('api_key_id = @apiKeyId')
      if (q.start) where.push('last_at >= @start')
      if (q.end) where.push('first_at <= @end')
      if (q.before) where.push('seq <= @beforeSeq')
      const sql = `SELECT seq, api_key_id, count, entries FROM developer_log_chunks WHERE ${where.join(' AND ')}
        ORDER BY seq DESC`
      let statement = statements.get(sql)
      if (!statement) statements.set(sql, (statement = sqlite.prepare<[PageParams], ChunkRow>(sql)))

      const wanted = q.categories?.length ? new Set(q.categories) : undefined
      const data: Array<ReturnType<typeof toLogEntry>> = []
      let cursor: LogPosition | undefined
      let examined = 0
      let decoded = 0
      let more = false
      const rows = statement.iterate({
        userId, categories: JSON.stringify(q.categories ?? []), apiKeyId: q.apiKeyId, start: q.start, end: q.end,
        beforeSeq: q.before?.seq
      })
      scan: for (const row of rows) {
        // out of bytes: the next page starts with this chunk, whole
        if (decoded >= LOG_SCAN_BYTES) { more = true; cursor = { seq: row.seq, index: row.count }; break }
        decoded += row.entries.length
        const entries = decodeChunk(row.entries, row.seq)
        let i = entries.length - 1
        if (q.before && row.seq === q.before.seq) i = Math.min(i, q.before.index - 1)
        for (; i >= 0; i--) {
          if (examined === LOG_SCAN_BUDGET) { more = true; break scan }
          examined++
          const e = entries[i]
          const match = !((wanted && !wanted.has(e.category)) || (q.start && e.createdAt < q.start) ||
            (q.end && e.createdAt > q.end))
          // a match beyond a full page: there is more, and the cursor stays on the last entry examined before it
          if (match && data.length === q.limit) { more = true; break scan }
          cursor = { seq: row.seq, index: i }
          if (match) data.push(toLogEntry(e, row.api_key_id))
        }
      }
      return { data, nextCursor: more && cursor ? encodeCursor(cursor) : null }
    }
  }
}
