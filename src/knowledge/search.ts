import type Database from 'better-sqlite3'
import type { FastifyBaseLogger } from 'fastify'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { readableWhere, readableParams, readerTokens, type Reader, type DocFilters } from './readers.js'
import { innerWordsMatch, ftsPhrase, fold, innerWords, queryTerms, roughStem, snippetAround, wordsMatch, wordsSnippet }
  from './query.js'
import type { KnowledgeStore } from './store.js'
import { gramFilters, mayHold, needleGrams } from './grams.js'
import { DOC_COLUMNS, substringFinder, type HitRow } from './substring.js'
import { indexFold, isAscii } from './fold.js'
import { EmbeddingError } from './embeddings.js'
import { searchSettings, type SearchSettingsOverrides } from './search-settings.js'
import { lazy } from './lazy.js'
import { planSubstring, planWords, type HybridPlan, type Nothing, type Plan, type SemanticPlan, type SubstringPlan,
  type SubstringStatistics, type WordsEvidence, type WordsPlan } from './planner.js'

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

/** what a search is built with: the embedding source (absent: no `semantic`), a log, and settings overrides */
export interface SearchOptions {
  semantic?: SemanticSource
  log?: FastifyBaseLogger
  settings?: SearchSettingsOverrides
}

/** something the answer tells its reader: a part of hybrid search that could not run */
export interface SearchWarning { code: 'EMBEDDINGS_UNAVAILABLE'; message: string }
/** a search's hits, its warnings, and the plan it followed (planner.ts) */
export interface SearchAnswer { hits: SearchHit[]; warnings: SearchWarning[]; plan: Plan }
/** the words path's plan, hits, and what its postings showed for hybrid's substring part */
interface WordsOutcome { plan: WordsPlan; hits: Scored[]; evidence: WordsEvidence }

/** A query refused as too costly for what it could find (query.ts repetitionProblem): 400 at the routes. */
export class QueryRefusedError extends Error {}

/**
 * A search's time budget: `expired` is asked between steps (and every few ms inside the long ones); a search that
 * finds it spent stops there, answers what it found, and sets `cut` (the answer is then partial).
 */
export interface SearchBudget { expired(): boolean; cut: boolean }
/** thrown inside a step when the budget is spent: the step then adds nothing */
class BudgetSpent extends Error {}
/** a query of 1–2 characters is planned without statistics (planSubstring asks none) */
const unasked = (): never => { throw new Error('a short query\'s plan reads no statistics') }
const noStatistics: SubstringStatistics = { readsNothing: unasked, ownDocuments: unasked, index: unasked }

/**
 * How often a term (its words lightly stemmed) occurs in a folded text: each place the first stem starts a
 * word whose stem it is, followed by the term's other words. Cheaper than stemming every word of the text.
 */
function termFrequency(text: string, stem: string[]): number {
  let n = 0
  for (let at = text.indexOf(stem[0]); at >= 0; at = text.indexOf(stem[0], at + 1)) {
    if (at > 0 && WORD_CHAR.test(text[at - 1])) continue
    WORD_TOKEN.lastIndex = at
    let ok = true
    for (const s of stem) {
      const m = WORD_TOKEN.exec(text)
      if (!m || roughStem(m[0]) !== s || (s === stem[0] && m.index !== at)) { ok = false; break }
    }
    if (ok) n++
  }
  return n
}

/**
 * the score of the n-th best entry (0 when there are fewer): the n best kept in a min-heap, most entries compared
 * with its top only (a map counting the distinct scores cost ~0.8 ms a question for 30,000 candidates)
 */
export function cutLevel(scores: number[], n: number): number {
  if (n <= 0) return Infinity
  if (scores.length < n) return 0
  const heap = new Float64Array(n)
  for (let i = 0; i < n; i++) heap[i] = scores[i]
  const down = (from: number) => {
    const v = heap[from]
    let i = from
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) break
      const c = l + 1 < n && heap[l + 1] < heap[l] ? l + 1 : l
      if (heap[c] >= v) break
      heap[i] = heap[c]
      i = c
    }
    heap[i] = v
  }
  for (let i = (n >> 1) - 1; i >= 0; i--) down(i)
  for (let i = n; i < scores.length; i++) {
    if (scores[i] > heap[0]) { heap[0] = scores[i]; down(0) }
  }
  return heap[0]
}

/**
 * Where the n entries of highest score are (indices), ties to the higher rowid (newer): the same as sorting
 * every entry, without the sort. A score is a sum of a few terms' weights, so there are few distinct scores:
 * only the entries at or above the n-th best score are sorted.
 */
export function topEntries(rowids: number[], scores: number[], n: number): number[] {
  const order = (a: number, b: number) => scores[b] - scores[a] || rowids[b] - rowids[a]
  const cut = cutLevel(scores, n)
  const above: number[] = []
  const at: number[] = []
  let newestFirst = true
  scores.forEach((score, k) => {
    if (score > cut) above.push(k)
    else if (score === cut) {
      if (at.length > 0 && rowids[k] > rowids[at[at.length - 1]]) newestFirst = false
      at.push(k)
    }
  })
  // the entries at the cut tie: the newest go first (merged postings already come newest first)
  if (!newestFirst) at.sort(order)
  return above.sort(order).concat(at.slice(0, Math.max(0, n - above.length)))
}

/**
 * Postings lists (rowids, each newest first) merged into one, newest first: each rowid once, with the sum of
 * the weights and the bits of the lists holding it. A walk over the heads, no map.
 */
export function mergePostings(lists: number[][], weights: number[], bits: number[]) {
  const rowids: number[] = []
  const weight: number[] = []
  const held: number[] = []
  const heads = lists.map(() => 0)
  for (;;) {
    let top = -Infinity
    for (let j = 0; j < lists.length; j++) {
      if (heads[j] < lists[j].length && lists[j][heads[j]] > top) top = lists[j][heads[j]]
    }
    if (top === -Infinity) break
    let w = 0
    let m = 0
    for (let j = 0; j < lists.length; j++) {
      if (heads[j] < lists[j].length && lists[j][heads[j]] === top) { w += weights[j]; m |= bits[j]; heads[j]++ }
    }
    rowids.push(top); weight.push(w); held.push(m)
  }
  return { rowids, weight, held }
}

/** how many words a folded text holds, as WORD_TOKEN splits it, without making the words */
function wordCount(text: string): number {
  if (!isAscii(text)) return text.match(WORD_TOKEN)?.length ?? 0
  let n = 0
  let inWord = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const w = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90)
    if (w && !inWord) n++
    inWord = w
  }
  return n
}

/** whether some rowid is in every list (each newest first) */
export function intersects(lists: number[][]): boolean {
  const [first, ...rest] = [...lists].sort((a, b) => a.length - b.length)
  let common = first
  for (const list of rest) {
    const held = new Set(common)
    common = list.filter((r) => held.has(r))
    if (common.length === 0) return false
  }
  return common.length > 0
}

/** a candidate; its snippet is made only if it is returned */
interface Scored { row: HitRow; score: number; snippet: () => string }

/**
 * a range of rowids is walked in windows of this many: FTS5 walks back from a high bound at about the cost of the
 * whole doclist, so each window is read in ascending order
 */
const RANGE_WINDOW = 8192n
/** BM25's constants (Robertson et al.), as FTS5's bm25() uses them */
const K1 = 1.2
const B = 0.75
/** a category or tag filter's documents as the reader sees them (filterSpan in createSearch) */
interface FilterSpan {
  /** the documents (counted up to spanDocs + 1) */
  docs: number
  passages: number
  /** whether it leaves out none of the reader's passages */
  all: boolean
  /** their passages' rowid ranges [lo, hi), newest first, neighbours merged; undefined past spanDocs documents */
  ranges?: Array<[bigint, bigint]>
}
const WORD_TOKEN = /[\p{L}\p{N}\p{Co}]+/gu
const WORD_CHAR = /[\p{L}\p{N}\p{Co}]/u

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
 * Passage search (docs/api/knowledge.md, "Search modes") in the documents the reader can read, in four modes:
 * - substring: case-insensitive substring. 3+ characters: the trigram index, BM25 of the phrase among
 *   the RANK_CANDIDATES newest matches; shorter: a scan in slices that yield, stopping at `limit`.
 * - words: the word index, any of the query's words, BM25, walking only the reader's passages.
 * - semantic: the nearest passages by embedding.
 * - hybrid: reciprocal rank fusion of the three (every substring match is a candidate).
 */
export function createSearch(sqlite: Database.Database, store: KnowledgeStore, options: SearchOptions = {}) {
  const { semantic, log } = options
  const settings = searchSettings(options.settings)
  const { postingsPerTerm: POSTINGS_PER_TERM, exactPostings: EXACT_POSTINGS, rescore, filteredDocs: FILTERED_DOCS,
    commonMargin, everyTerms: EVERY_TERMS, fallbackRanges: FALLBACK_RANGES, filteredJoins: FILTERED_JOINS,
    seekMeetings: SEEK_MEETINGS, sought: SOUGHT, probe: PROBE } = settings.words
  const { maxRanges: MAX_RANGES, substringRanges: SUBSTRING_RANGES, maxWidening: MAX_WIDENING, spanDocs: SPAN_DOCS,
    checkBatch: FILTER_BATCH, maxChecks: FILTER_CHECKS, fallbackPostings: FALLBACK_POSTINGS } = settings.filters
  const FEW_DOCS = settings.ownPassages.fewDocs
  const { fuseCandidates: FUSE_CANDIDATES, rankCandidates: RANK_CANDIDATES, rrfK: RRF_K } = settings.hybrid
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

  const docsSql = (filters: DocFilters) => `SELECT ${DOC_COLUMNS}, d.chunk_count
    FROM knowledge_documents d WHERE ${readableWhere(filters)} ORDER BY d.uploaded_at DESC, d.id DESC`
  const passagesFrom = sqlite.prepare(`SELECT rowid, id, text, chunk_index FROM knowledge_passages
    WHERE document_id = ? AND chunk_index >= ? ORDER BY chunk_index LIMIT +?`)
  const filters = gramFilters(sqlite)

  /**
   * 1–2 characters: every readable passage in turn, newest document first, yielding every few ms; a document
   * whose character filter (src/knowledge/grams.ts) lacks one of the query's characters or pairs is skipped.
   */
  async function scan(reader: Reader, docFilters: DocFilters, needle: string, limit: number,
    budget?: SearchBudget): Promise<Scored[]> {
    const docs = store.prepared(docsSql(docFilters)).all(readableParams(reader, docFilters)) as Array<Omit<HitRow,
      'rowid' | 'id' | 'text' | 'chunk_index'> & { chunk_count: number }>
    const grams = needleGrams(needle)
    const hits: Scored[] = []
    let sliceStart = performance.now()
    // filters are read 256 documents at a time: a query found in the newest documents reads few
    let known = new Map<string, Uint8Array>()
    for (const [i, { chunk_count: _, ...d }] of docs.entries()) {
      if (i % 256 === 0) known = filters.of(docs.slice(i, i + 256))
      const filter = known.get(d.doc_id)
      if (filter && !mayHold(filter, grams)) continue
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
        if (performance.now() - sliceStart > 10) {
          if (budget?.expired()) { budget.cut = true; return hits }
          await yieldToLoop()
          sliceStart = performance.now()
        }
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
  const fewDocsSql = (filters: DocFilters) => `SELECT ${DOC_COLUMNS}, d.chunk_count FROM knowledge_documents d
    WHERE ${readableWhere(filters)}
    ORDER BY d.uploaded_at DESC, d.id DESC LIMIT ${FEW_DOCS + 1}`
  // the same test without the order (which reads and sorts every readable document: ~3 ms at 5,000 of them)
  const fewDocsCountSql = (filters: DocFilters) => `SELECT count(*) AS docs, coalesce(sum(chunk_count), 0) AS passages
    FROM (SELECT d.chunk_count FROM knowledge_documents d WHERE ${readableWhere(filters)} LIMIT ${FEW_DOCS + 1})`
  const newestWith = substringFinder(sqlite, store, settings.substring)
  const passagesOf = sqlite.prepare(`SELECT rowid, id, text, chunk_index FROM knowledge_passages WHERE document_id = ?
    ORDER BY chunk_index`)

  /** own-passages: the reader's newest documents' passages holding the query, read and checked in turn */
  function ownPassages(reader: Reader, filters: DocFilters, query: string, want: number,
    budget?: SearchBudget): HitRow[] {
    const docs = store.prepared(fewDocsSql(filters)).all(readableParams(reader, filters)) as Array<Omit<HitRow,
      'rowid' | 'id' | 'text' | 'chunk_index'> & { chunk_count: number }>
    const needle = indexFold(query)
    const rows: HitRow[] = []
    for (const { chunk_count: _, ...d } of docs) {
      if (budget?.expired()) { budget.cut = true; break }
      for (const p of passagesOf.all(d.doc_id) as Array<Pick<HitRow, 'rowid' | 'id' | 'text' | 'chunk_index'>>) {
        if (indexFold(p.text).includes(needle)) rows.push({ ...p, ...d })
      }
      if (rows.length >= want) break
    }
    return rows.slice(0, want)
  }

  const anyWithAll = sqlite.prepare(`SELECT 1 FROM knowledge_passages_words WHERE knowledge_passages_words MATCH ?
    LIMIT 1`)

  /**
   * A substring search's plan (planner.ts planSubstring) and its `want` newest matching rows, in one read
   * transaction. `evidence`: what hybrid's words part showed of the passages that may hold the query.
   */
  function substringPart(reader: Reader, filters: DocFilters, query: string, want: number, budget?: SearchBudget,
    evidence?: WordsEvidence): { plan: SubstringPlan; rows: HitRow[] } {
    const tokens = lazy(() => readerTokens(reader, filters.scope))
    // a passage holding the query holds its inner words: when no readable passage holds them all, the trigram
    // look-up (costly for long queries, which questions are) cannot find anything either
    const mayExist = () => {
      const inner = innerWords(query)
      return inner.words.length === 0 || anyWithAll.get(innerWordsMatch(inner, tokens())) !== undefined
    }
    const ownDocuments = lazy(() => store.prepared(fewDocsCountSql(filters)).get(readableParams(reader, filters)) as
      { docs: number; passages: number })
    // a category or tag filter: the walks stay inside its documents (else they would read, newest first, every match
    // of the index the filter drops); read in the walk's transaction: a passage it sees lies in the ranges it reads
    const within = filters.category || filters.tags?.length ? () => {
      const span = filterSpan(reader, filters)
      if (span.docs === 0 || span.ranges?.length === 0) return []
      return span.all || !span.ranges || span.ranges.length > SUBSTRING_RANGES ? undefined : span.ranges
    } : undefined
    return newestWith.planned(query, mayExist, (index, walk) => {
      const plan = planSubstring(query, { readsNothing: () => tokens().length === 0, ownDocuments,
        evidence: () => evidence, index: () => index }, settings)
      switch (plan.kind) {
        case 'nothing': case 'short-scan': return { plan, rows: [] }
        case 'among': return { plan, rows: newestWith.among(reader, filters, query, plan.rowids, want) }
        case 'own-passages': return { plan, rows: ownPassages(reader, filters, query, want, budget) }
        default: return { plan, rows: walk(plan, reader, filters, want, within) }
      }
    })
  }

  /** substring search: its plan and its best `limit` (at least RANK_CANDIDATES ranked by BM25 of the phrase) */
  async function substring(reader: Reader, filters: DocFilters, query: string, limit: number,
    budget?: SearchBudget, evidence?: WordsEvidence): Promise<{ plan: SubstringPlan; hits: Scored[] }> {
    if ([...query].length < 3) {
      return { plan: planSubstring(query, noStatistics, settings),
        hits: await scan(reader, filters, query.toLowerCase(), limit, budget) }
    }
    const { plan, rows } = substringPart(reader, filters, query, Math.max(limit, RANK_CANDIDATES), budget, evidence)
    return { plan, hits: rankSubstring(rows, query.toLowerCase()) }
  }

  const postingsOf = sqlite.prepare(`SELECT rowid FROM knowledge_passages_words WHERE knowledge_passages_words MATCH ?
    ORDER BY rowid DESC LIMIT +?`).pluck()
  const postingsBefore = sqlite.prepare(`SELECT rowid FROM knowledge_passages_words
    WHERE knowledge_passages_words MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT +?`).pluck()
  const postingsWithin = sqlite.prepare(`SELECT rowid FROM knowledge_passages_words
    WHERE knowledge_passages_words MATCH ? AND rowid >= ? AND rowid < ? ORDER BY rowid`).pluck()
  const filteredDocsSql = (filters: DocFilters) => `SELECT d.id, d.chunk_count, d.indexed_count, d.status, d.updated_at,
    d.first_passage_rowid AS lo, d.last_passage_rowid AS hi
    FROM knowledge_documents d
    WHERE ${readableWhere(filters)} LIMIT +@most`
  // a document's first and last passages hold its lowest and highest rowids: its passages are written in order
  // (src/knowledge/index-worker.ts), each rowid above every one before
  const docRowids = sqlite.prepare(`SELECT
    (SELECT rowid FROM knowledge_passages WHERE document_id = @id ORDER BY chunk_index LIMIT 1) AS lo,
    (SELECT rowid FROM knowledge_passages WHERE document_id = @id ORDER BY chunk_index DESC LIMIT 1) AS hi`)
  const docRowidList = sqlite.prepare(`SELECT rowid FROM knowledge_passages WHERE document_id = ? ORDER BY rowid`)
    .pluck()

  /**
   * What a category or tag filter leaves the reader: its documents' rowid ranges, newest first, neighbours merged
   * (a document's passages are written together; undefined past SPAN_DOCS documents), its passages, and whether it
   * leaves out none of the reader's. Cached per reader and filter until the organization's documents change
   * (migration 0017's version, raised by any document or tag write) or passages are added: at 1,000,000 passages
   * reading the ranges of 495 documents took 17 ms, in every search with that filter.
   */
  function filterSpan(reader: Reader, filters: DocFilters): FilterSpan {
    const key = JSON.stringify([reader.customerId, reader.userId, reader.workspaceIds, filters.scope ?? null,
      filters.category ?? null, filters.tags ?? null])
    const version = listingVersion.get(reader.customerId) as number | undefined
    const newest = corpusSize.get() as number
    const kept = spans.get(key)
    if (kept && kept.version === version && kept.newest === newest) return kept.span
    const params = readableParams(reader, filters)
    const { n: passages } = store.prepared(readablePassages(filters)).get(params) as { n: number }
    const readable = stats.readable(reader, { scope: filters.scope })
    const docs = store.prepared(filteredDocsSql(filters)).all({ ...params, most: SPAN_DOCS + 1 }) as SpanDoc[]
    let ranges: Array<[bigint, bigint]> | undefined
    const all = passages === readable && passages > 0
    // (a filter leaving out nothing is walked as without it: its ranges are never read)
    if (!all && docs.length <= SPAN_DOCS) {
      const found = docs.filter((d) => d.chunk_count > 0).flatMap((d) => docSpan(d)).sort((a, b) => b[1] - a[1])
      const merged: Array<[number, number]> = []
      for (const [lo, hi] of found) {
        const last = merged[merged.length - 1]
        if (last && hi >= last[0] - 1) last[0] = Math.min(last[0], lo)
        else merged.push([lo, hi])
      }
      ranges = merged.map(([lo, hi]) => [BigInt(lo), BigInt(hi) + 1n])
    }
    const span: FilterSpan = { docs: docs.length, passages, all, ranges }
    if (spans.size >= 1000) spans.clear()
    spans.set(key, { version, newest, span })
    return span
  }
  const spans = new Map<string, { version: number | undefined; newest: number; span: FilterSpan }>()
  /**
   * The runs of consecutive rowids holding a document's passages, [lo, hi] each: one, its first and last, unless
   * passages of other documents were written between its slices (an upload during a background ingest), when its
   * rowids are read and split. An indexed document's are kept while it is unchanged (its `updated_at`): the
   * organization's version moves with every write to any of its documents (an ingest's progress, 40 times a
   * second), and the filter's span is then worked out again from these, reading only the documents that changed.
   */
  type SpanDoc = { id: string; chunk_count: number; indexed_count: number; status: string; updated_at: string;
    lo: number | null; hi: number | null }
  const docSpans = new Map<string, { at: string; runs: Array<[number, number]> }>()
  function docSpan(d: SpanDoc): Array<[number, number]> {
    const kept = docSpans.get(d.id)
    if (kept && kept.at === d.updated_at) return kept.runs
    // its first and last rowids from its row (the index worker writes them): two look-ups in the passages' index per
    // document otherwise, 244 ms for 1,100 documents whose pages were not cached; a row written before migration
    // 0022 took effect (or by a test) may not have them
    const { lo, hi } = d.lo !== null && d.hi !== null ? d
      : docRowids.get({ id: d.id }) as { lo: number | null; hi: number | null }
    // its passages: all of them once indexed, else those written so far
    const n = d.status === 'indexed' ? d.chunk_count : d.indexed_count
    let runs: Array<[number, number]> = []
    if (lo !== null && hi !== null && hi - lo + 1 === n) runs = [[lo, hi]]
    else if (lo !== null) {
      for (const rowid of docRowidList.all(d.id) as number[]) {
        const last = runs[runs.length - 1]
        if (last && rowid === last[1] + 1) last[1] = rowid
        else runs.push([rowid, rowid])
      }
    }
    if (d.status === 'indexed') {
      if (docSpans.size >= 100_000) docSpans.clear()
      docSpans.set(d.id, { at: d.updated_at, runs })
    }
    return runs
  }
  const listingVersion = sqlite.prepare('SELECT version FROM knowledge_listing_versions WHERE customer_id = ?')
    .pluck()

  /**
   * The rowid ranges of a category or tag filter's passages (filterSpan); 'all' when it leaves out none of the
   * reader's; undefined when there are more than `FILTERED_DOCS` documents or MAX_RANGES ranges (walked as
   * without the filter).
   */
  function filteredRanges(reader: Reader, filters: DocFilters): Array<[bigint, bigint]> | 'all' | undefined {
    const span = filterSpan(reader, filters)
    if (span.docs === 0 || span.ranges?.length === 0) return []
    if (span.all) return 'all'
    // (each range costs every walk a statement or more: many scattered documents are walked as without the filter)
    return span.docs > FILTERED_DOCS || !span.ranges || span.ranges.length > MAX_RANGES ? undefined : span.ranges
  }
  const readablePassages = (filters: DocFilters) => `SELECT coalesce(sum(d.chunk_count), 0) AS n
    FROM knowledge_documents d
    WHERE ${readableWhere(filters)}`
  const corpusSize = sqlite.prepare(`SELECT coalesce(max(rowid), 0) FROM knowledge_passages`).pluck()
  const sampleTexts = sqlite.prepare(`SELECT text FROM knowledge_passages WHERE rowid >= ? LIMIT 200`).pluck()
  /** an organization's passages by who may read them: a scope, its workspace or owner (null when not the scope's) */
  type Share = { scope: string; workspace: string | null; owner: string | null; n: number }
  type OrgShares = { version: number | undefined; shares: Share[] }
  // (migration 0027's table, kept by triggers with the documents)
  const sharesSql = (where: string) => `SELECT ${where ? '' : 'customer_id, '}scope, nullif(workspace, '') AS workspace,
      nullif(owner, '') AS owner, passages AS n
    FROM knowledge_reader_shares ${where}`
  const orgShares = sqlite.prepare(sharesSql('WHERE customer_id = ?'))
  const allShares = sqlite.prepare(sharesSql(''))
  const allVersions = sqlite.prepare('SELECT customer_id, version FROM knowledge_listing_versions').raw()
  const stats = createWordStats()

  /**
   * Cached per worker, never needed exact: the corpus size and mean passage length in words (BM25's N and
   * avgdl) and how much each reader reads. Stale figures move
   * scores a little, never which passages can be found.
   */
  function createWordStats() {
    let corpus = { at: 0, n: 0, avgWords: 0 }
    const orgs = new Map<string, OrgShares>()
    const readable = new Map<string, { of: OrgShares; passages: number }>()
    const withTerm = new Map<string, { at: number; passages: number }>()
    return {
      /** passages of the whole index holding a term, estimated by `count` from its newest PROBE postings */
      passagesWith(term: string[], count: (probe: number) => number) {
        const key = term.join(' ')
        let r = withTerm.get(key)
        if (!r || performance.now() - r.at > 60_000) {
          if (withTerm.size > 100_000) withTerm.clear()
          withTerm.set(key, (r = { at: performance.now(), passages: count(PROBE) }))
        }
        return r.passages
      },
      corpus() {
        if (corpus.n === 0 || performance.now() - corpus.at > 60_000) {
          const n = corpusSize.get() as number
          // (the passages sampled again only when some were added: 200 of them read, 2–8 ms on a dropped page cache)
          if (n === corpus.n && corpus.avgWords > 0) {
            corpus.at = performance.now()
            return corpus
          }
          const texts = sampleTexts.all(Math.floor(n / 2)) as string[]
          const words = texts.reduce((sum, t) => sum + (t.match(WORD_TOKEN)?.length ?? 0), 0)
          const avgWords = Math.max(1, words / Math.max(texts.length, 1))
          corpus = { at: performance.now(), n: Math.max(n, 1), avgWords }
        }
        return corpus
      },
      /**
       * From the organization's passages by who may read them (its `shares`, migration 0027: a row per scope and
       * workspace or owner), read again when its documents change (migration 0017's version, raised by any document
       * write). `warm` reads every organization's at once.
       */
      readable(reader: Reader, filters: DocFilters) {
        const org = shares(reader.customerId)
        const key = JSON.stringify([reader, filters.scope])
        let r = readable.get(key)
        if (!r || r.of !== org) {
          if (readable.size > 10_000) readable.clear()
          const workspaces = new Set(reader.workspaceIds)
          let passages = 0
          for (const s of org.shares) {
            if (filters.scope && s.scope !== filters.scope) continue
            if (s.scope === 'organization' || (s.scope === 'workspace' && workspaces.has(s.workspace!)) ||
              (s.scope === 'personal' && s.owner === reader.userId)) passages += s.n
          }
          readable.set(key, (r = { of: org, passages }))
        }
        return r.passages
      },
      /** every organization's shares, read in one pass (a worker's start) */
      warm() {
        const versions = new Map(allVersions.all() as Array<[string, number]>)
        const read = new Map<string, Share[]>()
        for (const { customer_id: id, ...s } of allShares.all() as Array<Share & { customer_id: string }>) {
          let list = read.get(id)
          if (!list) read.set(id, (list = []))
          list.push(s)
        }
        for (const [id, list] of read) orgs.set(id, { version: versions.get(id), shares: list })
      }
    }
    function shares(customerId: string): OrgShares {
      const version = listingVersion.get(customerId) as number | undefined
      let org = orgs.get(customerId)
      if (!org || org.version !== version) {
        if (orgs.size > 10_000) orgs.clear()
        orgs.set(customerId, (org = { version, shares: orgShares.all(customerId) as Share[] }))
      }
      return org
    }
  }

  function exactWords(reader: Reader, filters: DocFilters, terms: string[][], tokens: string[], cap: number): Scored[] {
    const rows = store.prepared(wordsSql(filters)).all({ ...readableParams(reader, filters),
      match: wordsMatch(terms, tokens), cap }) as
      Array<HitRow & { bm: number }>
    return rows.map((row) => ({ row, score: -row.bm, snippet: () => wordsSnippet(row.text, terms) }))
  }

  /**
   * Word search at scale. FTS5's bm25() costs about 2 µs for every passage matching any term, and a question's
   * words match tens of thousands at 1,000,000 passages. So: each term's postings are read (rowids only,
   * newest first, at most POSTINGS_PER_TERM; a term whose first `probe` postings already show it common stops
   * there); when all of them together are few (a small corpus or a small reader), FTS5 ranks every match
   * exactly. Otherwise the candidates are the passages holding the rare terms (those read whole), ranked by
   * the IDF of the terms they hold (the common ones sought at the rare rowids), and — when every term is
   * common — the passages holding all of them; the best `rescore` are read and ranked by BM25 over all terms
   * in JavaScript (term frequencies from the text, stemmed lightly; a posting counts as at least one).
   */
  // one read transaction: every walk sees the snapshot the filtered ranges were read in (a passage indexed after
  // the ranges were read is not walked in part)
  const words = sqlite.transaction(wordsIn)

  const inFilterSql = (filters: DocFilters) => `SELECT p.rowid FROM knowledge_passages p
    JOIN knowledge_documents d ON d.id = p.document_id
    WHERE p.rowid IN (SELECT value FROM json_each(@rowids)) AND ${readableWhere(filters)}`
  /**
   * The first `most` of `rowids` (best first) whose passages the filter keeps: those in its ranges (exact: a
   * document's runs of rowids, see docSpan) when known, else checked by their documents a batch at a time (at most
   * FILTER_CHECKS)
   */
  function passingFilter(reader: Reader, filters: DocFilters, span: FilterSpan, rowids: number[],
    most: number): number[] {
    const ranges = span.ranges
    // ranges newest first, each [lo, hi): the first whose lo is at or below the rowid holds it if hi is above
    const holds = (rowid: number) => {
      const r = BigInt(rowid)
      let a = 0
      let b = ranges!.length
      while (a < b) {
        const m = (a + b) >> 1
        if (ranges![m][0] > r) a = m + 1
        else b = m
      }
      return a < ranges!.length && r < ranges![a][1]
    }
    if (ranges) {
      const out: number[] = []
      for (const rowid of rowids) if (holds(rowid) && out.push(rowid) >= most) break
      return out
    }
    const params = readableParams(reader, filters)
    const out: number[] = []
    for (let at = 0; at < rowids.length && out.length < most && at < FILTER_CHECKS; at += FILTER_BATCH) {
      const batch = rowids.slice(at, at + FILTER_BATCH)
      const kept = new Set(store.prepared(inFilterSql(filters)).pluck().all({ ...params,
        rowids: JSON.stringify(batch) }) as number[])
      for (const rowid of batch) if (kept.has(rowid) && out.length < most) out.push(rowid)
    }
    return out
  }
  /**
   * The words path, planned (planner.ts planWords) and run: `evidence` (asked by hybrid) is what the postings showed
   * of the passages that may hold the whole query
   */
  function wordsIn(reader: Reader, filters: DocFilters, query: string, cap: number, evidenceWanted: boolean,
    budget?: SearchBudget): WordsOutcome {
    // between walks: a spent budget ends the words step (it then adds nothing)
    const check = () => { if (budget?.expired()) throw new BudgetSpent() }
    const terms = queryTerms(query)
    const tokens = readerTokens(reader, filters.scope)
    const filtered = !!(filters.category || filters.tags?.length)
    // a category or tag filter: the walks stay inside the filtered documents' rowid ranges
    const found = terms.length > 0 && tokens.length > 0 && filtered ? filteredRanges(reader, filters) : 'all'
    // (a filter leaving out no passage: the walks as without it, and bm25() as without it: the same passages, without
    // joining every match to its document first)
    const ranges = found === 'all' || found === undefined ? undefined : found
    const exactFilters = found === 'all' ? { scope: filters.scope } : filters
    const joined = filtered && found !== 'all'
    const corpus = stats.corpus()
    // a reader of (almost) everything walks the terms alone and filters the few best; others walk their own
    const readable = stats.readable(reader, { scope: filters.scope })
    // a filter of too many documents or stretches to walk inside (bm25() over every match joined to its documents
    // took 2–80 s for a question at 1,000,000 passages): the walks as without it, the best candidates kept in
    // ranked order as long as they pass it, `widen` times as many sought as without a filter
    const span = found === undefined ? filterSpan(reader, filters) : undefined
    const postFilter = span !== undefined
    const widen = span ? Math.max(1, Math.min(MAX_WIDENING, Math.ceil(readable / Math.max(span.passages, 1)))) : 1
    // a common term's document frequency, from how far back its newest postings reach (terms spread evenly)
    const reach = (p: number[]) => Math.min(corpus.n, p.length * corpus.n / Math.max(1, corpus.n - p[p.length - 1]))
    // bm25() first counts every passage of the index holding each term (its IDF), whoever asks: 45 ms for "used"
    // at 1,000,000 passages. So it ranks exactly when the terms are rare in the whole index, and the reader's
    // matches are few (a reader of few passages, or few postings below)
    const inIndex = (t: string[]) => stats.passagesWith(t, (probe) => {
      const first = postingsOf.all(`{text}: ${ftsPhrase(t.join(' '))}`, probe) as number[]
      return first.length < probe ? first.length : reach(first)
    })
    // with a category or tag filter, bm25() is asked of every match in the index, each joined to its passage and
    // document before the filter (wordsSql): only when those are few ("mistakes david idle renamed" inside 51
    // documents: 20,000 passages read, 53 ms with the file's pages cached, 1.1 s without)
    const rareEverywhere = lazy(() => terms.every((t) => inIndex(t) <= EXACT_POSTINGS) &&
      (!joined || terms.reduce((n, t) => n + inIndex(t), 0) <= FILTERED_JOINS))
    const own = !ranges && readable < corpus.n * 0.9
    const readersPart = own ? `{readers}: (${tokens.map(ftsPhrase).join(' OR ')}) AND ` : ''
    const matchOf = (t: string[]) => `${readersPart}{text}: ${ftsPhrase(t.join(' '))}`
    // each term's newest postings: all of a rare one; of a common one (more than POSTINGS_PER_TERM) only the
    // first `probe` when they already show it common (the rest would serve only its df estimate), else
    // POSTINGS_PER_TERM + 1
    // a long query (a pasted paragraph: up to MAX_TERMS words) shares what 6 terms would read
    const perTerm = Math.max(Math.min(PROBE, POSTINGS_PER_TERM),
      Math.min(POSTINGS_PER_TERM, Math.floor(POSTINGS_PER_TERM * 6 / terms.length)))
    const probe = Math.min(PROBE, perTerm)
    // the newest `most` rowids matching, below `before`: in the whole index, or in the filtered ranges
    const walk = (match: string, most: number, before?: number) => walkIn(ranges, match, most, before)
    const walkIn = (ranges: Array<[bigint, bigint]> | undefined, match: string, most: number,
      before?: number): number[] => {
      if (!ranges) {
        return (before === undefined ? postingsOf.all(match, most) : postingsBefore.all(match, before, most)) as
          number[]
      }
      // each range in windows of rowids read in ascending order (FTS5 walks back from a high bound in descending
      // order at about the cost of the whole doclist), newest window first
      const out: number[] = []
      for (const [lo, hi] of ranges) {
        check()
        let top = before !== undefined && BigInt(before) < hi ? BigInt(before) : hi
        while (top > lo && out.length < most) {
          const from = top - RANGE_WINDOW > lo ? top - RANGE_WINDOW : lo
          const got = postingsWithin.all(match, from, top) as number[]
          for (let k = got.length - 1; k >= 0 && out.length < most; k--) out.push(got[k])
          top = from
        }
        if (out.length >= most) break
      }
      return out
    }
    /** each term's postings, and whether they are all of its postings (a rare term) */
    const read = lazy(() => {
      const complete: boolean[] = []
      const postings = terms.map((t, i) => {
        check()
        const first = walk(matchOf(t), probe)
        complete[i] = first.length < probe
        // (the filtered ranges' postings say nothing of a term's frequency in the whole index)
        if (complete[i] || (!ranges && reach(first) > commonMargin * perTerm)) return first
        const p = first.concat(walk(matchOf(t), perTerm + 1 - first.length, first[first.length - 1]))
        complete[i] = p.length <= perTerm
        return p
      })
      return { postings, complete }
    })
    const plan = planWords({
      terms: terms.length,
      readsNothing: tokens.length === 0,
      filter: () => found === undefined ? 'post-filter' : found === 'all' ? (filtered ? 'all' : 'none')
        : found.length === 0 ? 'empty' : 'ranges',
      readable: () => readable,
      rareEverywhere,
      postings: () => read().postings.reduce((n, p, i) => n + (read().complete[i] ? p.length : EXACT_POSTINGS + 1),
        0),
      narrowed: () => own || !!ranges || postFilter
    }, settings)
    if (plan.kind === 'nothing') return { plan, hits: [], evidence: { none: found !== undefined && found !== 'all' } }
    if (plan.kind === 'words-exact' && plan.basis === 'reader') {
      return { plan, hits: exactWords(reader, exactFilters, terms, tokens, cap), evidence: { none: false } }
    }
    const { postings, complete } = read()
    // a passage holding the whole query holds each of its inner words as a word, so it is in each such term's
    // postings: the rare ones' lists must meet (and below, hold the common inner terms where they meet)
    const inner = new Set(evidenceWanted ? innerWords(query).words : [])
    const innerTerms = terms.map((_, i) => i).filter((i) => terms[i].length === 1 && inner.has(terms[i][0]))
    let none = innerTerms.some((i) => complete[i]) &&
      !intersects(innerTerms.filter((i) => complete[i]).map((i) => postings[i]))
    if (plan.kind === 'words-exact') {
      return { plan, hits: exactWords(reader, exactFilters, terms, tokens, cap), evidence: { none } }
    }
    const idf = (df: number) => Math.max(1e-6, Math.log((corpus.n - df + 0.5) / (df + 0.5)))
    // (inside a filter's ranges, a term's postings say how often it is there, not in the index whose IDF bm25() uses:
    // a common term met in a few sparse ranges looked rare)
    const dfs = postings.map((p, i) => (ranges ? inIndex(terms[i]) : complete[i] ? p.length : reach(p)))
    const weights = dfs.map(idf)
    // the EVERY_TERMS rarest words: what passages holding every word are sought by, and the filter's fallback
    const strongest = terms.map((_, i) => i).sort((x, y) => weights[y] - weights[x]).slice(0, EVERY_TERMS)
    // which terms a candidate's postings showed (the first 31; later ones are counted from the text alone)
    const bit = (i: number) => (i < 31 ? 1 << i : 0)
    // the candidates: the rare terms' postings merged (each list is newest first), with the IDF they add up to
    const { rowids, weight, held } = mergePostings(postings.filter((_, i) => complete[i]),
      weights.filter((_, i) => complete[i]), terms.map((_, i) => bit(i)).filter((_, i) => complete[i]))
    // the common terms' weight where they meet the rare ones: FTS5 seeks the common doclists at the rare rowids
    const rare = terms.filter((_, i) => complete[i])
    // which common terms' seeks found all their meetings with the rare terms
    const sought = new Set<number>()
    if (rare.length > 0) {
      const rareMatch = `{text}: (${rare.map((t) => ftsPhrase(t.join(' '))).join(' OR ')})`
      // each seek walks the rare terms' postings again: at most SOUGHT common terms, the rarest (a pasted paragraph
      // has dozens; the others still count in the rescoring)
      const seek = new Set(terms.map((_, i) => i).filter((i) => !complete[i]).sort((x, y) => weights[y] - weights[x])
        .slice(0, SOUGHT))
      terms.forEach((t, i) => {
        if (!seek.has(i)) return
        check()
        const met = walk(`${rareMatch} AND {text}: ${ftsPhrase(t.join(' '))}`, SEEK_MEETINGS)
        if (met.length < SEEK_MEETINGS) sought.add(i)
        // both newest first: one walk
        let k = 0
        for (const rowid of met) {
          while (k < rowids.length && rowids[k] > rowid) k++
          if (rowids[k] === rowid) { weight[k] += weights[i]; held[k] |= bit(i) }
        }
      })
    }
    let among: number[] | undefined
    if (!none && innerTerms.some((i) => complete[i]) &&
      innerTerms.every((i) => i < 31 && (complete[i] || sought.has(i)))) {
      const need = innerTerms.reduce((m, i) => m | bit(i), 0)
      among = rowids.filter((_, k) => (held[k] & need) === need)
      none = among.length === 0
    }
    const coordination = new Map<number, number>()
    const heldBy = new Map<number, number>()
    if (rowids.length < rescore) {
      rowids.forEach((r, k) => { coordination.set(r, weight[k]); heldBy.set(r, held[k]) })
      // every term is common (or the rare ones are few): the newest passages holding all of the EVERY_TERMS
      // rarest first (ANDing a pasted paragraph's 32 common words walks one of them whole, seeking the others), then
      // the newest postings of the common terms, by the IDF of the terms they hold
      const every = `${readersPart}{text}: (${strongest.map((i) => ftsPhrase(terms[i].join(' '))).join(' AND ')})`
      // (a term already counted where it met a rare one is not counted again)
      const add = (rowid: number, i: number) => {
        const held = heldBy.get(rowid) ?? 0
        if (held & bit(i)) return
        coordination.set(rowid, (coordination.get(rowid) ?? 0) + weights[i])
        heldBy.set(rowid, held | bit(i))
      }
      // (a rare term's weight is there already: its postings are all among the candidates)
      const holdingAll = new Set(walk(every, rescore * widen))
      for (const rowid of holdingAll) for (const i of strongest) if (!complete[i]) add(rowid, i)
      postings.forEach((p, i) => {
        if (complete[i]) return
        const counted = strongest.includes(i)
        for (const rowid of p) if (!(counted && holdingAll.has(rowid))) add(rowid, i)
      })
    }
    let best: number[]
    const most = Math.max(rescore, cap)
    const candidates = postFilter ? most * widen : ranges ? 2 * most : most
    if (coordination.size > 0) {
      const keys = [...coordination.keys()]
      best = topEntries(keys, [...coordination.values()], candidates).map((k) => keys[k])
    } else {
      best = topEntries(rowids, weight, candidates).map((k) => { heldBy.set(rowids[k], held[k]); return rowids[k] })
    }
    check()
    if (postFilter || ranges) {
      // (a document's rowid range may hold passages of documents written between its slices: docSpan splits it)
      const kept = span ?? filterSpan(reader, filters)
      best = passingFilter(reader, filters, kept, best, most)
      if (postFilter && best.length < cap) {
        // too few kept (a filter of old documents, where the common words' newest postings do not reach): the
        // filter's newest passages holding any of the strongest words, walked inside its newest ranges, then
        // their newest postings anywhere, each a bounded read
        const known = new Set(best)
        const match = `${readersPart}{text}: (${strongest.map((i) => ftsPhrase(terms[i].join(' '))).join(' OR ')})`
        const add = (rowids: number[]) => {
          for (const rowid of passingFilter(reader, filters, kept, rowids.filter((r) => !known.has(r)),
            most - best.length)) {
            known.add(rowid)
            best.push(rowid)
          }
        }
        if (kept.ranges) add(walkIn(kept.ranges.slice(0, FALLBACK_RANGES), match, 2 * most))
        if (best.length < cap) add(postingsOf.all(match, FALLBACK_POSTINGS) as number[])
      }
    }
    const rows = store.prepared(byRowids(filters)).all({ ...readableParams(reader, filters),
      rowids: JSON.stringify(best) }) as HitRow[]
    const stems = terms.map((t) => t.map(roughStem))
    const scored = rows.map((row) => {
      // fold (NFKD) only what needs it: lower case is the whole fold of ASCII text
      const text = isAscii(row.text) ? row.text.toLowerCase() : fold(row.text)
      const length = wordCount(text)
      const mask = heldBy.get(row.rowid) ?? 0
      const norm = K1 * (1 - B + (B * length) / corpus.avgWords)
      let score = 0
      stems.forEach((stem, i) => {
        const f = Math.max(termFrequency(text, stem), mask & bit(i) ? 1 : 0)
        if (f > 0) score += (weights[i] * f * (K1 + 1)) / (f + norm)
      })
      return { row, score, snippet: () => wordsSnippet(row.text, terms) }
    })
    return { plan, hits: scored.sort((a, b) => b.score - a.score || b.row.rowid - a.row.rowid).slice(0, cap),
      evidence: { none, among } }
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
    /**
     * reads the character filters of 1–2 character search, the vocabulary's ends for phrases, and who may read how
     * many passages, ahead of use
     */
    warm: async () => {
      stats.warm()
      newestWith.warm()
      await filters.warm()
    },

    /** how many passages a reader reads (words search's estimate, from the organization's shares; see stats) */
    passagesReadBy: (reader: Reader, filters: DocFilters = {}) => stats.readable(reader, { scope: filters.scope }),

    /** whether `semantic` (and the semantic part of hybrid) is available */
    get semanticEnabled() { return !!semantic },

    /**
     * With a `budget`, the search stops where it finds it spent (between steps, and inside the long ones), answers
     * what it found and sets `budget.cut`
     */
    async search(reader: Reader, filters: DocFilters, query: string, limit: number, mode: SearchMode = 'hybrid',
      signal?: AbortSignal, budget?: SearchBudget): Promise<SearchHit[]> {
      return (await run(reader, filters, query, limit, mode, signal, budget)).hits
    },

    /** the hits with what the answer should tell its reader (`warnings`: a part of hybrid that could not run) */
    run
  }

  async function run(reader: Reader, filters: DocFilters, query: string, limit: number, mode: SearchMode = 'hybrid',
    signal?: AbortSignal, budget?: SearchBudget): Promise<SearchAnswer> {
    const warnings: SearchWarning[] = []
    const cut: Nothing = { kind: 'nothing', reason: 'the time budget was spent' }
    // a words step cut short by the budget adds nothing
    const bounded = (step: () => WordsOutcome): WordsOutcome => {
      try {
        return step()
      } catch (err) {
        if (!(err instanceof BudgetSpent)) throw err
        budget!.cut = true
        return { plan: cut, hits: [], evidence: { none: false } }
      }
    }
    const spent = () => {
      if (!budget?.expired()) return false
      budget.cut = true
      return true
    }
    if (mode === 'substring' || (mode === 'hybrid' && [...query].length < 3)) {
      const { plan, hits } = await substring(reader, filters, query, limit, budget)
      return { hits: hits.slice(0, limit).map((s) => toHit(s, ['substring'])), warnings, plan }
    }
    if (mode === 'words') {
      const { plan, hits } = bounded(() => words(reader, filters, query, limit, false, budget))
      return { hits: hits.map((s) => toHit(s, ['words'])), warnings, plan }
    }
    const semanticPlan: SemanticPlan = { kind: 'semantic', reason: 'the nearest passages by embedding' }
    if (mode === 'semantic') {
      return { hits: (await nearest(reader, filters, query, limit, signal)).map((s) => toHit(s, ['semantic'])),
        warnings, plan: semanticPlan }
    }
    // hybrid: its parts' plans, composed; words first: the postings it reads may show that no passage holds the
    // whole query, or which few may, sparing the substring look-up (for a question, a costly probe)
    const cap = Math.max(limit, FUSE_CANDIDATES)
    const byWords = bounded(() => words(reader, filters, query, cap, true, budget))
    const bySubstring = !byWords.evidence.none && spent() ? { plan: cut, hits: [] }
      : await substring(reader, filters, query, cap, budget, byWords.evidence)
    const lists: Array<{ by: MatchedBy; hits: Scored[] }> = [
      { by: 'substring', hits: bySubstring.hits },
      { by: 'words', hits: byWords.hits }
    ]
    const plan: HybridPlan = { kind: 'hybrid', reason: 'reciprocal rank fusion of its parts', words: byWords.plan,
      substring: bySubstring.plan }
    if (semantic && !spent()) {
      plan.semantic = semanticPlan
      // an embedding server that is down costs hybrid its semantic vote, not the answer: the answer says so
      const near = await nearest(reader, filters, query, cap, signal).catch((err: unknown) => {
        if (!(err instanceof EmbeddingError)) throw err
        log?.warn({ err }, 'semantic candidates skipped: the embedding server failed')
        warnings.push({ code: 'EMBEDDINGS_UNAVAILABLE', message: `Results without semantic matches: ${err.message}` })
        return []
      })
      lists.push({ by: 'semantic', hits: near })
    }
    return { hits: fuse(lists, limit), warnings, plan }
  }
}

export type KnowledgeSearch = ReturnType<typeof createSearch>
