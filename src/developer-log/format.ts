/**
 * The developer log's entry format, in one place. The request log writes entries in batches into
 * developer_log_chunks.entries (schema/tables/developer.ts) and the log reader pages through them.
 * On disk an entry is a JSON array (field names are not repeated in every entry of a chunk); in code
 * it is a LogEntry, with named fields: encodeEntry and decodeChunk are the only code that knows the order.
 *
 * Within a chunk an entry is stored against the one before it: a text field equal to the previous entry's
 * (category, action, method, path: a client polling one route repeats all four) is stored as SAME, and the time
 * as epoch milliseconds. With the id below, a chunk of API-key requests takes ~35 bytes an entry instead of ~185:
 * the request thread writes (and checkpoints) a fifth of the bytes per request. Chunks written before (every field
 * spelled out, the time in ISO 8601) decode as they are.
 *
 * A request entry's id is its place in the log (placeId: its chunk's seq and its index there), stored as SAME:
 * unique (seq is AUTOINCREMENT, never reused) and stable, without a random UUID made and written per request
 * (half the work of a batch in a profile). Entries recorded through the API (activity) keep the UUID they were
 * answered with.
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

/** in a text field of a stored entry: the same value as the previous entry of the chunk */
const SAME = 0
type Text<T> = T | typeof SAME

/** An entry as stored in a chunk's `entries`; its time is epoch ms (ISO 8601 text in chunks of earlier versions) */
export type StoredEntry = [
  id: Text<string>, category: Text<string>, action: Text<string>, method: Text<string | null>,
  path: Text<string | null>,
  statusCode: number, durationMs: number, metadata: unknown, createdAt: number | string
]

/** What encodeEntry needs: an entry with its time in epoch ms; without an id, its place in the log is its id */
export type EntryAt = Omit<LogEntry, 'id' | 'createdAt'> & { id: string | null; at: number }

/**
 * The id of the entry at `index` in the chunk `seq`: a UUID of version 8 (RFC 9562, custom), the chunk's seq in
 * its first 48 bits and the index in its last 48. Random UUIDs are version 4: the two never meet.
 */
export function placeId(seq: number, index: number): string {
  const s = seq.toString(16).padStart(12, '0')
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-8000-8000-${index.toString(16).padStart(12, '0')}`
}

/** `e` as stored; given the previous entry of its chunk, with the text fields they share stored as SAME */
export function encodeEntry(e: EntryAt, previous?: EntryAt): StoredEntry {
  const metadata = e.metadata ?? null
  const id = e.id ?? SAME
  if (!previous) return [id, e.category, e.action, e.method, e.path, e.statusCode, e.durationMs, metadata, e.at]
  const same = <T>(value: T, before: T): Text<T> => value === before ? SAME : value
  return [id, same(e.category, previous.category), same(e.action, previous.action), same(e.method, previous.method),
    same(e.path, previous.path), e.statusCode, e.durationMs, metadata, e.at]
}

/** The entries of one chunk's `entries` column (the chunk `seq`), decoded */
export function decodeChunk(entries: string, seq: number): LogEntry[] {
  const stored = JSON.parse(entries) as StoredEntry[]
  const out: LogEntry[] = []
  let previous: LogEntry | undefined
  let lastMs = NaN
  let lastIso = ''
  // (SAME on a chunk's first entry is never written: read from a damaged chunk, it gives `fallback`)
  const text = <T>(value: Text<T>, before: T | undefined, fallback: T): T =>
    value !== SAME ? value : previous ? before as T : fallback
  for (let i = 0; i < stored.length; i++) {
    const s = stored[i]
    let createdAt: string
    if (typeof s[8] === 'string') createdAt = s[8]
    else {
      if (s[8] !== lastMs) { lastMs = s[8]; lastIso = new Date(s[8]).toISOString() }
      createdAt = lastIso
    }
    const e: LogEntry = {
      id: s[0] === SAME ? placeId(seq, i) : s[0], category: text(s[1], previous?.category, ''),
      action: text(s[2], previous?.action, ''),
      method: text(s[3], previous?.method, null), path: text(s[4], previous?.path, null), statusCode: s[5],
      durationMs: s[6],
      metadata: s[7], createdAt
    }
    out.push(e)
    previous = e
  }
  return out
}
