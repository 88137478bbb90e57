/**
 * The kinds of unified search other than knowledge (artifacts, voice-note transcripts, channel messages), run on the
 * search workers (src/knowledge/search-worker.ts) under the pool's per-organization schedule and time budget.
 *
 * Each kind starts from the caller's own rows: when they are few, those alone are read and checked (no other
 * tenant's row is touched); else the trigram index gives candidates by its trigrams alone (an AND of single
 * trigrams: no positions are read, so another tenant's large rows cost one posting each), joined to the caller's
 * rows in the same statement, newest first, and each candidate's text is checked in JavaScript. The caller's
 * matches are ranked by BM25 of the phrase (the term-frequency part: the phrase's IDF is the same for every row,
 * and each kind is scaled to its best hit), and snippets are cut in JavaScript: FTS5's `bm25()` and `snippet()`
 * are not asked.
 */
import type Database from 'better-sqlite3'
import { snippetAround, ftsPhrase } from '../knowledge/query.js'
import { indexFold } from '../knowledge/fold.js'
import { queryGrams } from '../knowledge/index-walk.js'
import { readableChannelSql } from '../channels/store.js'

export const UNIFIED_KINDS = ['artifact', 'voice_note', 'message'] as const
export type UnifiedKind = (typeof UNIFIED_KINDS)[number]

/** who asks (the unified search's read rules, docs/api/assistant.md) and what */
export interface KindsRequest { customerId: string; userId: string; workspaceIds: string[]; query: string;
  limit: number }
export interface KindHit { kind: UnifiedKind; id: string; title: string; snippet: string; score: number }

/** a caller with at most this many rows of a kind has them read and checked, without the index */
export const OWN_ROWS = 500
/** the newest matches of a kind that are ranked (a broader query is ranked among its newest) */
const RANKED = 50
/** at most this many of the query's trigrams are ANDed for the index's candidates */
const ANDED_GRAMS = 6
/** rows read between two looks at the time budget */
const CHECK_EVERY = 64
const K1 = 1.2
const B = 0.75

type Row = { rowid: number; id: string; title: string; body: string }

/** each kind: the caller's rows (`tenant`, over `from`), their title and searchable texts, their FTS5 table */
const KINDS: Record<UnifiedKind, { fts: string; from: string; indexedFrom: string; rowid: string; tenant: string;
  columns: string; /** whether the title is indexed (and so searched) too */ titleSearched: boolean }> = {
  artifact: { fts: 'artifacts_fts', from: 'artifacts a', rowid: 'a.rowid',
    indexedFrom: 'artifacts_fts CROSS JOIN artifacts a ON a.rowid = artifacts_fts.rowid',
    tenant: 'a.customer_id = @customerId AND a.workspace_id IN (SELECT value FROM json_each(@workspaceIds))',
    columns: 'a.rowid AS rowid, a.id, a.title, a.content AS body', titleSearched: true },
  voice_note: { fts: 'voice_notes_fts', from: 'voice_notes v', rowid: 'v.rowid',
    indexedFrom: 'voice_notes_fts CROSS JOIN voice_notes v ON v.rowid = voice_notes_fts.rowid',
    tenant: 'v.user_id = @userId AND v.deleted_at IS NULL',
    columns: `v.rowid AS rowid, v.id, v.title, coalesce(v.transcript, '') AS body`, titleSearched: true },
  message: { fts: 'channel_messages_fts', from: 'channel_messages m JOIN channels c ON c.id = m.channel_id',
    indexedFrom: `channel_messages_fts CROSS JOIN channel_messages m ON m.rowid = channel_messages_fts.rowid
      JOIN channels c ON c.id = m.channel_id`,
    rowid: 'm.rowid', tenant: `c.customer_id = @customerId AND ${readableChannelSql('c')}`,
    columns: 'm.rowid AS rowid, m.id, c.name AS title, m.content AS body', titleSearched: false }
}

/** The searches of the other kinds on one connection; `expired` says when the time budget is spent. */
export function createKindSearch(sqlite: Database.Database) {
  const statements = Object.fromEntries(UNIFIED_KINDS.map((kind) => {
    const k = KINDS[kind]
    return [kind, {
      count: sqlite.prepare(`SELECT count(*) FROM (SELECT 1 FROM ${k.from} WHERE ${k.tenant} LIMIT ${OWN_ROWS + 1})`)
        .pluck(),
      own: sqlite.prepare(`SELECT ${k.columns} FROM ${k.from} WHERE ${k.tenant} ORDER BY ${k.rowid} DESC`),
      // CROSS JOIN: the index first, each candidate joined to its row and kept only when it is the caller's
      indexed: sqlite.prepare(`SELECT ${k.columns} FROM ${k.indexedFrom}
        WHERE ${k.fts} MATCH @match AND ${k.tenant} ORDER BY ${k.fts}.rowid DESC`)
    }]
  })) as Record<UnifiedKind, Record<'count' | 'own' | 'indexed', Database.Statement>>

  /**
   * The caller's matches of each kind, best first (`partial` when the budget ran out before every kind was
   * searched through)
   */
  function search(r: KindsRequest, expired: () => boolean = () => false): { hits: KindHit[]; partial: boolean } {
    const needle = indexFold(r.query)
    const grams = queryGrams(r.query)
    // the trigrams spread over the query (its first and last among them): each alone, so no positions are read
    const anded = grams.length <= ANDED_GRAMS ? grams
      : Array.from({ length: ANDED_GRAMS }, (_, i) => grams[Math.round(i * (grams.length - 1) / (ANDED_GRAMS - 1))])
    const match = anded.map(ftsPhrase).join(' AND ')
    const params = { customerId: r.customerId, userId: r.userId, workspaceIds: JSON.stringify(r.workspaceIds), match }
    const want = Math.max(r.limit, RANKED)
    const hits: KindHit[] = []
    let partial = false
    for (const kind of UNIFIED_KINDS) {
      if (expired()) { partial = true; break }
      const s = statements[kind]
      const source = (s.count.get(params) as number) <= OWN_ROWS ? s.own : s.indexed
      const found: Row[] = []
      let read = 0
      for (const row of source.iterate(params) as IterableIterator<Row>) {
        if (++read % CHECK_EVERY === 0 && expired()) { partial = true; break }
        if (holds(row, needle, KINDS[kind].titleSearched) && found.push(row) >= want) break
      }
      hits.push(...rank(kind, found, r.query, needle).slice(0, r.limit))
    }
    return { hits, partial }
  }
  return { search }
}

/** whether a row's searched text holds the query, folded as the trigram index folds */
function holds(row: Row, needle: string, titleSearched: boolean): boolean {
  return indexFold(row.body).includes(needle) || (titleSearched && indexFold(row.title).includes(needle))
}

function occurrences(folded: string, needle: string): number {
  let n = 0
  for (let at = folded.indexOf(needle); at >= 0; at = folded.indexOf(needle, at + needle.length)) n++
  return n
}

/** BM25's term-frequency part of the phrase in each row (title and body), with a snippet around its first match */
function rank(kind: UnifiedKind, rows: Row[], query: string, needle: string): KindHit[] {
  if (rows.length === 0) return []
  const length = (r: Row) => r.body.length + (KINDS[kind].titleSearched ? r.title.length : 0)
  const avg = Math.max(1, rows.reduce((n, r) => n + length(r), 0) / rows.length)
  const lower = query.toLowerCase()
  return rows.map((row) => {
    const tf = Math.max(1, occurrences(indexFold(row.body), needle) +
      (KINDS[kind].titleSearched ? occurrences(indexFold(row.title), needle) : 0))
    const score = (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length(row)) / avg))
    return { kind, id: row.id, title: row.title, snippet: snippetOf(row, lower, needle), score }
  }).sort((a, b) => b.score - a.score)
}

function snippetOf(row: Row, lower: string, needle: string): string {
  for (const text of [row.body, row.title]) {
    let at = text.toLowerCase().indexOf(lower)
    let length = lower.length
    if (at < 0) {
      // the index's folding differs from JavaScript's here: its position, where the folding kept the length
      const folded = indexFold(text)
      at = folded.length === text.length ? folded.indexOf(needle) : -1
      length = needle.length
    }
    if (at >= 0) return snippetAround(text, at, length)
  }
  return row.body.slice(0, 160)
}
