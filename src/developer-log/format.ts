/**
 * The developer log's entry format, in one place. The request log writes entries in batches into
 * developer_log_chunks.entries (schema/tables/developer.ts) and the log reader pages through them.
 * On disk an entry is a JSON array (field names are not repeated in every entry of a chunk); in code
 * it is a LogEntry, with named fields: encodeEntry and decodeEntry are the only code that knows the order.
 */
export interface LogEntry {
  id: string
  category: string
  action: string
  method: string | null
  path: string | null
  statusCode: number
  durationMs: number
  metadata: unknown
  createdAt: string
}

/** An entry as stored in a chunk's `entries` */
export type StoredEntry = [
  id: string, category: string, action: string, method: string | null, path: string | null,
  statusCode: number, durationMs: number, metadata: unknown, createdAt: string
]

export function encodeEntry(e: LogEntry): StoredEntry {
  return [e.id, e.category, e.action, e.method, e.path, e.statusCode, e.durationMs, e.metadata ?? null, e.createdAt]
}

export function decodeEntry(s: StoredEntry): LogEntry {
  return {
    id: s[0], category: s[1], action: s[2], method: s[3], path: s[4],
    statusCode: s[5], durationMs: s[6], metadata: s[7], createdAt: s[8]
  }
}

/** The entries of one chunk's `entries` column, decoded */
export function decodeChunk(entries: string): LogEntry[] {
  return (JSON.parse(entries) as StoredEntry[]).map(decodeEntry)
}
