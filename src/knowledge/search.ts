import type Database from 'better-sqlite3'
import type { FastifyBaseLogger } from 'fastify'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { readableWhere, readableParams, readerTokens, type Reader, type DocFilters } from './readers.js'
import { innerWordsMatch, innerWords, queryTerms, snippetAround, wordsSnippet } from './query.js'
import type { KnowledgeStore } from './store.js'
import { gramFilters, mayHold, needleGrams } from './short-query-filter.js'
import { DOC_COLUMNS, createIndexWalk, type HitRow } from './index-walk.js'
import { indexFold } from './fold.js'
import { EmbeddingError } from './embeddings.js'
import { searchSettings, type SearchSettingsOverrides } from './search-settings.js'
import { lazy } from './lazy.js'
import { planSubstring, type HybridPlan, type Nothing, type Plan, type SemanticPlan, type SubstringPlan,
  type SubstringStatistics, type WordsEvidence } from './planner.js'
import { BudgetSpent, headingPaths, type Scored, type SearchBudget } from './hits.js'
import { fileTitle } from '../ingest/outline.js'
import { B, K1 } from './word-ranking.js'
import { createReaderStatistics } from './reader-statistics.js'
import { createFilterSpans } from './filter-spans.js'
import { createDocRuns } from './doc-runs.js'
import { createWordsPath, type WordsOutcome } from './words-path.js'

export type { SearchBudget } from './hits.js'

export const SEARCH_MODES = ['hybrid', 'substring', 'words', 'semantic'] as const
export type SearchMode = (typeof SEARCH_MODES)[number]
export type MatchedBy = Exclude<SearchMode, 'hybrid'>

export interface SearchHit {
  /** `title`: the text's first heading when it starts with one, else the file name without its extension */
  document: { id: string; fileName: string; title: string; fileType: string; category: string; scope: string }
  /** `headingPath`: the headings above the passage, outermost first (src/ingest/outline.ts) */
  chunk: { id: string; text: string; chunkIndex: number; headingPath: string[] }
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

/** A query refused as too costly for what it could find (query.ts repetitionProblem): 400 at the routes. */
export class QueryRefusedError extends Error {}

/** a query of 1–2 characters is planned without statistics (planSubstring asks none) */
const unasked = (): never => { throw new Error('a short query\'s plan reads no statistics') }
const noStatistics: SubstringStatistics = { readsNothing: unasked, ownDocuments: unasked, index: unasked }

function toHit(s: Scored, matchedBy: MatchedBy[], score = s.score): SearchHit {
  const r = s.row
  return {
    document: { id: r.doc_id, fileName: r.file_name, title: r.title ?? fileTitle(r.file_name), fileType: r.file_type,
      category: r.category, scope: r.scope },
    // (filled in for the hits returned: run)
    chunk: { id: r.id, text: r.text, chunkIndex: r.chunk_index, headingPath: [] },
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
  const SUBSTRING_RANGES = settings.filters.substringRanges
  const runsOf = createDocRuns(sqlite)
  const stats = createReaderStatistics(sqlite, store, runsOf)
  const spans = createFilterSpans(sqlite, store, stats, runsOf, settings)
  const filterSpan = spans.span
  const words = createWordsPath(sqlite, store, stats, spans, settings)
  const FEW_DOCS = settings.ownPassages.fewDocs
  const { fuseCandidates: FUSE_CANDIDATES, rankCandidates: RANK_CANDIDATES, rrfK: RRF_K } = settings.hybrid
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
   * 1–2 characters: every readable passage in turn, newest document first, yielding every few ms; a document whose
   * character filter (src/knowledge/short-query-filter.ts) lacks one of the query's characters or pairs is skipped.
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
   * of the other tenants, where reading a few thousand passages of one's own is cheap (`npm run bench -- search`,
   * the small organization beside the large one).
   */
  const fewDocsSql = (filters: DocFilters) => `SELECT ${DOC_COLUMNS}, d.chunk_count FROM knowledge_documents d
    WHERE ${readableWhere(filters)}
    ORDER BY d.uploaded_at DESC, d.id DESC LIMIT ${FEW_DOCS + 1}`
  // the same test without the order (which would read and sort every readable document)
  const fewDocsCountSql = (filters: DocFilters) => `SELECT count(*) AS docs, coalesce(sum(chunk_count), 0) AS passages
    FROM (SELECT d.chunk_count FROM knowledge_documents d WHERE ${readableWhere(filters)} LIMIT ${FEW_DOCS + 1})`
  const indexWalk = createIndexWalk(sqlite, store, settings.substring)
  const pathsOf = headingPaths(sqlite)
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
    return indexWalk.planned(query, mayExist, (index, walk) => {
      const plan = planSubstring(query, { readsNothing: () => tokens().length === 0, ownDocuments,
        evidence: () => evidence, index: () => index }, settings)
      switch (plan.kind) {
        case 'nothing': case 'short-scan': return { plan, rows: [] }
        case 'among': return { plan, rows: indexWalk.among(reader, filters, query, plan.rowids, want) }
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
   * tie: the better in the words list wins, then the newer document. A substring match keeps its substring snippet.
   */
  function fuse(lists: Array<{ by: MatchedBy; hits: Scored[] }>, limit: number): SearchHit[] {
    const merged = new Map<string, { s: Scored; fused: number; by: MatchedBy[]; words: number }>()
    for (const { by, hits } of lists) {
      let rank = 0
      hits.forEach((h, i) => {
        if (i === 0 || h.score !== hits[i - 1].score) rank = i + 1
        const entry = merged.get(h.row.id) ?? { s: h, fused: 0, by: [], words: Infinity }
        entry.fused += 1 / (RRF_K + rank)
        entry.by.push(by)
        if (by === 'words') entry.words = rank
        merged.set(h.row.id, entry)
      })
    }
    // equal fusions (a passage first in one list and second in another, and the other way round) go by the words
    // list, which ranks the whole query with the passage's headings; then the newer document
    return [...merged.values()]
      .sort((a, b) => b.fused - a.fused || a.words - b.words || newestFirst(a.s.row, b.s.row))
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
      indexWalk.warm()
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

  /** a search's answer, each hit with its passage's heading path */
  async function run(...args: Parameters<typeof answer>): Promise<SearchAnswer> {
    const found = await answer(...args)
    const paths = pathsOf(found.hits.map((h) => h.chunk.id))
    for (const h of found.hits) h.chunk.headingPath = paths.get(h.chunk.id) ?? []
    return found
  }

  async function answer(reader: Reader, filters: DocFilters, query: string, limit: number, mode: SearchMode = 'hybrid',
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
        log?.warn({ detail: err.detail }, `semantic candidates skipped: ${err.message}`)
        warnings.push({ code: 'EMBEDDINGS_UNAVAILABLE', message: `Results without semantic matches: ${err.message}` })
        return []
      })
      lists.push({ by: 'semantic', hits: near })
    }
    return { hits: fuse(lists, limit), warnings, plan }
  }
}

export type KnowledgeSearch = ReturnType<typeof createSearch>
