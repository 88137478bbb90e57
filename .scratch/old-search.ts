import type Database from 'better-sqlite3'
import type { FastifyBaseLogger } from 'fastify'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { readableWhere, readableParams, readerTokens, type Reader, type DocFilters } from '../src/knowledge/readers.js'
import { innerWordsMatch, ftsPhrase, innerWords, queryTerms, snippetAround, wordsMatch, wordsSnippet } from '../src/knowledge/query.js'
import type { KnowledgeStore } from '../src/knowledge/store.js'

export const SEARCH_MODES = ['hybrid', 'substring', 'words', 'semantic'] as const
export type SearchMode = (typeof SEARCH_MODES)[number]
export type MatchedBy = Exclude<SearchMode, 'hybrid'>

export interface SearchHit {
  document: { id: string; fileName: string; fileType: string; category: string; scope: string }
  chunk: { id: string; text: string; chunkIndex: number }
  score: number
  snippet: string
  matchedBy: MatchedBy[]
}

/** The nearest passages by embedding; absent when no embedding endpoint is configured. */
export interface SemanticSource {
  nearest(reader: Reader, filters: DocFilters, query: string, k: number,
    signal?: AbortSignal): Promise<Array<{ rowid: number; similarity: number }>>
}

/** `semantic` asked of a server without an embedding endpoint: 400 EMBEDDINGS_NOT_CONFIGURED at the route. */
export class EmbeddingsNotConfiguredError extends Error {
  constructor() { super('Semantic search needs an embedding endpoint: set CAIRN_EMBED_BASE_URL and CAIRN_EMBED_MODEL') }
}

interface HitRow {
  rowid: number
  id: string
  text: string
  chunk_index: number
  doc_id: string
  file_name: string
  file_type: string
  category: string
  scope: string
  uploaded_at: string
}

/** a candidate; its snippet is made only if it is returned */
interface Scored { row: HitRow; score: number; snippet: () => string }

/**
 * How many of the newest matching readable passages substring search ranks. A query matching fewer is
 * ranked exactly; a broader one is ranked among its newest matches, which keeps every 3+ character
 * search an index look-up that stops early.
 */
export const RANK_CANDIDATES = 200
/** the best word matches (BM25) and nearest passages hybrid search fuses */
export const FUSE_CANDIDATES = 100
/** reciprocal rank fusion constant (Cormack et al. 2009) */
const RRF_K = 60
const K1 = 1.2
const B = 0.75

const DOC_COLUMNS = `d.id AS doc_id, d.file_name, d.file_type, d.category, d.scope, d.uploaded_at`

function toHit(s: Scored, matchedBy: MatchedBy[], score = s.score): SearchHit {
  const r = s.row
  return {
    document: { id: r.doc_id, fileName: r.file_name, fileType: r.file_type, category: r.category, scope: r.scope },
    chunk: { id: r.id, text: r.text, chunkIndex: r.chunk_index },
    score: Math.round(score * 1e6) / 1e6,
    snippet: s.snippet(),
    matchedBy
  }
}

const newestFirst = (a: HitRow, b: HitRow) =>
  (b.uploaded_at < a.uploaded_at ? -1 : b.uploaded_at > a.uploaded_at ? 1 : 0) || a.chunk_index - b.chunk_index

/**
 * Passage search (CONTRACT.md §5) in the documents the reader can read, in four modes:
 * - substring: case-insensitive substring. 3+ characters: the trigram index, BM25 of the phrase among
 *   the RANK_CANDIDATES newest matches; shorter: a scan in slices that yield, stopping at `limit`.
 * - words: the word index, any of the query's words, BM25, walking only the reader's passages.
 * - semantic: the nearest passages by embedding.
 * - hybrid: reciprocal rank fusion of the three (every substring match is a candidate).
 */
export function createSearch(sqlite: Database.Database, store: KnowledgeStore, semantic?: SemanticSource,
  log?: FastifyBaseLogger) {
  // newest matches first (FTS5 walks its rowids backwards and stops at the cap)
  const substringSql = (filters: DocFilters) => `
    SELECT p.rowid, p.id, p.text, p.chunk_index, ${DOC_COLUMNS}
    FROM knowledge_passages_fts
    JOIN knowledge_passages p ON p.rowid = knowledge_passages_fts.rowid
    JOIN knowledge_documents d ON d.id = p.document_id
    WHERE knowledge_passages_fts MATCH @match AND ${readableWhere(filters)}
    ORDER BY knowledge_passages_fts.rowid DESC
    LIMIT ${RANK_CANDIDATES}`

  // Without category or tag filters, the readers tokens already say what the caller can read: the index
  // ranks alone (FTS5 in C, no joins per match) and the documents join only checks the best few. With
  // those filters, every match is joined and filtered before ranking.
  const wordsSql = (filters: DocFilters) => filters.category || filters.tags?.length
    ? `SELECT p.rowid, p.id, p.text, p.chunk_index, c.* FROM (
        SELECT knowledge_passages_words.rowid AS rid, bm25(knowledge_passages_words, 1.0, 0.0) AS bm, ${DOC_COLUMNS}
        FROM knowledge_passages_words
        JOIN knowledge_passages pp ON pp.rowid = knowledge_passages_words.rowid
        JOIN knowledge_documents d ON d.id = pp.document_id
        WHERE knowledge_passages_words MATCH @match AND ${readableWhere(filters)}
        ORDER BY bm LIMIT +@cap) c
      JOIN knowledge_passages p ON p.rowid = c.rid
      ORDER BY c.bm`
    : `SELECT p.rowid, p.id, p.text, p.chunk_index, ${DOC_COLUMNS}, w.bm FROM (
        SELECT rowid AS rid, bm25(knowledge_passages_words, 1.0, 0.0) AS bm FROM knowledge_passages_words
        WHERE knowledge_passages_words MATCH @match ORDER BY bm LIMIT +@cap) w
      JOIN knowledge_passages p ON p.rowid = w.rid
      JOIN knowledge_documents d ON d.id = p.document_id
      WHERE ${readableWhere(filters)}
      ORDER BY w.bm`

  const byRowids = (filters: DocFilters) => `
    SELECT p.rowid, p.id, p.text, p.chunk_index, ${DOC_COLUMNS}
    FROM knowledge_passages p JOIN knowledge_documents d ON d.id = p.document_id
    WHERE p.rowid IN (SELECT value FROM json_each(@rowids)) AND ${readableWhere(filters)}`

  /**
   * BM25 of a one-phrase query: the phrase's IDF is the same for every passage, so the order is that of
   * the term-frequency part, tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)), which is the score reported.
   */
  function rankSubstring(rows: HitRow[], needle: string): Scored[] {
    if (rows.length === 0) return []
    const avg = rows.reduce((n, r) => n + r.text.length, 0) / rows.length
    const scored = rows.map((row) => {
      const folded = row.text.toLowerCase()
      let tf = 0
      let first = -1
      for (let at = folded.indexOf(needle); at >= 0; at = folded.indexOf(needle, at + 1)) {
        if (first < 0) first = at
        tf++
      }
      // the index folds case a little differently from JavaScript in rare scripts: it matched, so count one
      tf = Math.max(tf, 1)
      const score = (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * row.text.length) / avg))
      return { row, score,
        snippet: () => first >= 0 ? snippetAround(row.text, first, needle.length) : row.text.slice(0, 160) }
    })
    return scored.sort((a, b) => b.score - a.score || newestFirst(a.row, b.row))
  }

  const docsSql = (filters: DocFilters) => `SELECT ${DOC_COLUMNS}
    FROM knowledge_documents d WHERE ${readableWhere(filters)} ORDER BY d.uploaded_at DESC, d.id DESC`
  const passagesFrom = sqlite.prepare(`SELECT rowid, id, text, chunk_index FROM knowledge_passages
    WHERE document_id = ? AND chunk_index >= ? ORDER BY chunk_index LIMIT +?`)

  /** 1–2 characters: every readable passage in turn, newest document first, yielding every few ms. */
  async function scan(reader: Reader, filters: DocFilters, needle: string, limit: number): Promise<Scored[]> {
    const docs = store.prepared(docsSql(filters)).all(readableParams(reader, filters)) as Array<Omit<HitRow,
      'rowid' | 'id' | 'text' | 'chunk_index'>>
    const hits: Scored[] = []
    let sliceStart = performance.now()
    for (const d of docs) {
      for (let from = 0; ; ) {
        const rows = passagesFrom.all(d.doc_id, from,
          200) as Array<Pick<HitRow, 'rowid' | 'id' | 'text' | 'chunk_index'>>
        for (const p of rows) {
          const at = p.text.toLowerCase().indexOf(needle)
          if (at < 0) continue
          hits.push({ row: { ...p, ...d }, score: 1, snippet: () => snippetAround(p.text, at, needle.length) })
          if (hits.length >= limit) return hits
        }
        // the time check comes before the end-of-document test, so many small documents yield too
        if (performance.now() - sliceStart > 10) { await yieldToLoop(); sliceStart = performance.now() }
        if (rows.length < 200) break
        from = rows[rows.length - 1].chunk_index + 1
      }
    }
    return hits
  }

  /**
   * A caller who reads few passages (a small organization beside a large one) is served from its own
   * passages, newest document first, never from the trigram index: an index walk would visit every match
   * of the other tenants (a rowid-range walk per document was measured at 35–90 ms per document for a
   * common trigram at 100,000 passages; reading 1,000 passages of one's own takes about a millisecond). At
   * 1,000,000 passages, an organization of 10,000 beside the large one: a common word 62 ms through the
   * index, 0.5 ms from its own passages (200 matches in the newest document); a word it lacks, 27 ms.
   */
  const FEW_DOCS = 100
  const FEW_PASSAGES = 10_000
  const fewDocsSql = (filters: DocFilters) => `SELECT ${DOC_COLUMNS}, d.chunk_count FROM knowledge_documents d
    WHERE ${readableWhere(filters)}
    ORDER BY d.uploaded_at DESC, d.id DESC LIMIT ${FEW_DOCS + 1}`
  const passagesOf = sqlite.prepare(`SELECT rowid, id, text, chunk_index FROM knowledge_passages WHERE document_id = ?
    ORDER BY chunk_index`)

  function substringRows(reader: Reader, filters: DocFilters, query: string): HitRow[] {
    const params = readableParams(reader, filters)
    const docs = store.prepared(fewDocsSql(filters)).all(params) as Array<Omit<HitRow,
      'rowid' | 'id' | 'text' | 'chunk_index'> & { chunk_count: number }>
    if (docs.length > FEW_DOCS || docs.reduce((n, d) => n + d.chunk_count, 0) > FEW_PASSAGES) {
      return store.prepared(substringSql(filters)).all({ ...params, match: ftsPhrase(query) }) as HitRow[]
    }
    const needle = query.toLowerCase()
    const rows: HitRow[] = []
    for (const { chunk_count: _, ...d } of docs) {
      for (const p of passagesOf.all(d.doc_id) as Array<Pick<HitRow, 'rowid' | 'id' | 'text' | 'chunk_index'>>) {
        if (p.text.toLowerCase().includes(needle)) rows.push({ ...p, ...d })
      }
      if (rows.length >= RANK_CANDIDATES) break
    }
    return rows.slice(0, RANK_CANDIDATES)
  }

  const anyWithAll = sqlite.prepare(`SELECT 1 FROM knowledge_passages_words WHERE knowledge_passages_words MATCH ?
    LIMIT 1`)

  async function substring(reader: Reader, filters: DocFilters, query: string, limit: number): Promise<Scored[]> {
    if ([...query].length < 3) return scan(reader, filters, query.toLowerCase(), limit)
    // a passage holding the query holds its inner words: when no readable passage holds them all, the
    // trigram look-up (costly for long queries, which questions are) cannot find anything either
    const inner = innerWords(query)
    const tokens = readerTokens(reader, filters.scope)
    if (tokens.length === 0) return []
    if (inner.words.length > 0 && !anyWithAll.get(innerWordsMatch(inner, tokens))) return []
    return rankSubstring(substringRows(reader, filters, query), query.toLowerCase())
  }

  function words(reader: Reader, filters: DocFilters, query: string, cap: number): Scored[] {
    const terms = queryTerms(query)
    const tokens = readerTokens(reader, filters.scope)
    if (terms.length === 0 || tokens.length === 0) return []
    const rows = store.prepared(wordsSql(filters)).all({ ...readableParams(reader, filters),
      match: wordsMatch(terms, tokens), cap }) as
      Array<HitRow & { bm: number }>
    return rows.map((row) => ({ row, score: -row.bm, snippet: () => wordsSnippet(row.text, terms) }))
  }

  async function nearest(reader: Reader, filters: DocFilters, query: string, cap: number,
    signal?: AbortSignal): Promise<Scored[]> {
    if (!semantic) throw new EmbeddingsNotConfiguredError()
    const near = await semantic.nearest(reader, filters, query, cap, signal)
    if (near.length === 0) return []
    const rows = new Map((store.prepared(byRowids(filters)).all({ ...readableParams(reader, filters),
      rowids: JSON.stringify(near.map((n) => n.rowid)) }) as HitRow[])
      .map((r) => [r.rowid, r]))
    const terms = queryTerms(query)
    return near.filter((n) => rows.has(n.rowid)).slice(0, cap).map((n) => {
      const row = rows.get(n.rowid)!
      return { row, score: n.similarity, snippet: () => wordsSnippet(row.text, terms) }
    })
  }

  /**
   * Reciprocal rank fusion: each list adds 1 / (K + rank). Equal scores share a rank, so equal passages
   * tie and the newer document wins. A substring match keeps its substring snippet.
   */
  function fuse(lists: Array<{ by: MatchedBy; hits: Scored[] }>, limit: number): SearchHit[] {
    const merged = new Map<string, { s: Scored; fused: number; by: MatchedBy[] }>()
    for (const { by, hits } of lists) {
      let rank = 0
      hits.forEach((h, i) => {
        if (i === 0 || h.score !== hits[i - 1].score) rank = i + 1
        const entry = merged.get(h.row.id)
        if (entry) { entry.fused += 1 / (RRF_K + rank); entry.by.push(by) } else merged.set(h.row.id,
          { s: h, fused: 1 / (RRF_K + rank), by: [by] })
      })
    }
    return [...merged.values()]
      .sort((a, b) => b.fused - a.fused || newestFirst(a.s.row, b.s.row))
      .slice(0, limit)
      .map((e) => toHit(e.s, e.by, e.fused))
  }

  return {
    /** whether `semantic` (and the semantic part of hybrid) is available */
    get semanticEnabled() { return !!semantic },

    async search(reader: Reader, filters: DocFilters, query: string, limit: number, mode: SearchMode = 'hybrid',
      signal?: AbortSignal): Promise<SearchHit[]> {
      switch (mode) {
        case 'substring': return (await substring(reader, filters, query, limit)).slice(0, limit).map((s) => toHit(s,
          ['substring']))
        case 'words': return words(reader, filters, query, limit).map((s) => toHit(s, ['words']))
        case 'semantic': return (await nearest(reader, filters, query, limit, signal)).map((s) => toHit(s,
          ['semantic']))
        case 'hybrid': {
          if ([...query].length < 3) {
            return (await substring(reader, filters, query, limit)).map((s) => toHit(s, ['substring']))
          }
          const cap = Math.max(limit, FUSE_CANDIDATES)
          const lists: Array<{ by: MatchedBy; hits: Scored[] }> = [
            { by: 'substring', hits: await substring(reader, filters, query, cap) },
            { by: 'words', hits: words(reader, filters, query, cap) }
          ]
          if (semantic) {
            // an embedding server that is down costs hybrid its semantic vote, not the answer
            const near = await nearest(reader, filters, query, cap, signal).catch((err: unknown) => {
              log?.warn({ err }, 'semantic candidates skipped: the embedding server failed')
              return []
            })
            lists.push({ by: 'semantic', hits: near })
          }
          return fuse(lists, limit)
        }
      }
    }
  }
}

export type KnowledgeSearch = ReturnType<typeof createSearch>
