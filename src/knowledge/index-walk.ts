/**
 * The newest readable passages holding a 3+ character query (case-insensitive substring, folded as the trigram index
 * folds), from the run index for a query of one word (src/knowledge/word-vocabulary.ts: the passages holding the words
 * of its vocabulary that hold it), from the word-pair index for a query of several words
 * (src/knowledge/phrase-index.ts) or the run index when its words are rarer (planner.ts); the trigram index above
 * those indexes' mark, and else without a phrase walk over common trigrams.
 *
 * FTS5 evaluates a phrase by stepping every one of its trigrams' doclists in step; at 1,000,000 passages most
 * trigrams of English words are in tens of thousands of passages, so a phrase with few matches reads nearly
 * every doclist whole. Here the query's rarest trigrams (their density
 * sampled in the newest passages, cached per connection) are ANDed: FTS5 then seeks the common ones at the
 * rare ones' rowids only. The candidates, newest first, are read with the documents' read rule and kept
 * when their text holds the query, folded as the index folds (src/knowledge/fold.ts); when even the rarest trigrams
 * are common, a first chunk of candidates measures how densely they lie, and the walk goes on through them or
 * through the phrase walk, whichever costs less at that density. Exact: every passage
 * holding the query holds those trigrams (or pairs, or runs); and once `budget` candidates have not yielded enough
 * matches, the phrase walk takes over below the last candidate read.
 */
import type Database from 'better-sqlite3'
import { readableWhere, readableParams, type Reader, type DocFilters } from './readers.js'
import { ftsPhrase } from './query.js'
import type { PairDensity } from './phrase-index.js'
import { indexFold } from './fold.js'
import { SEARCH_SETTINGS, searchSettings, type SearchSettingsOverrides } from './search-settings.js'
import { narrowPairsPay, pairsGiveWay, planIndexWalk, probeGoesOn, type IndexPlan, type IndexStatistics,
  type SubstringPlan, type TrigramPlan } from './planner.js'
import { createIndexStatistics, type IndexFigures } from './index-statistics.js'

export { queryGrams } from './index-statistics.js'
import type { KnowledgeStore } from './store.js'
import type { SqlRow } from '../db/prepared.js'
import type { knowledgeDocuments, knowledgePassages } from '../../schema/tables/knowledge.js'

/** a passage (`p`) with its document's columns (DOC_COLUMNS): what every search mode reads */
export type HitRow = { rowid: number; doc_id: string }
  & Pick<SqlRow<typeof knowledgePassages>, 'id' | 'text' | 'chunk_index'>
  & Pick<SqlRow<typeof knowledgeDocuments>, 'file_name' | 'title' | 'file_type' | 'category' | 'scope' | 'uploaded_at'>

/** the document's columns of a HitRow (`d`) */
export const DOC_COLUMNS = `d.id AS doc_id, d.file_name, d.title, d.file_type, d.category, d.scope, d.uploaded_at`
const COLUMNS = `p.rowid, p.id, p.text, p.chunk_index, ${DOC_COLUMNS}`

/** and is not when in more than this share of the passages (1 / SIEVE_SHARE) */
const SIEVE_SHARE = 20
/** candidates read by a walk's first step (then twice as many, or what the matches so far say the rest takes) */
const FIRST_CHUNK = 128
/** a later chunk is at least this many candidates */
const MIN_CHUNK = 16
/** the candidates read to measure how densely they lie */
const PROBE = 64
/** a finder's settings (search-settings.ts), and the pair tokens' counts a test may give instead of sampling them */
export type FinderTuning = NonNullable<SearchSettingsOverrides['substring']> & { pairDensity?: PairDensity }
/** rowid ranges [from, to) a walk keeps to, newest first (a filter's documents), or undefined: everywhere */
type Within = () => Array<[bigint, bigint]> | undefined
/** a walk's matches; `done` when its candidates ran out, else `before` is the last read (`read` of them) */
type Walk = { found: HitRow[]; before: bigint; done: boolean; read: number }

/**
 * The index walk of 3+ character substring search on a connection: `planned` gives a query's index statistics and the
 * walk that acts on a plan made from them (planner.ts planIndexWalk), in one read transaction; `find` plans and walks;
 * the function itself answers the rows alone; `among` checks given passages; `warm` reads the vocabulary's ends.
 */
export function createIndexWalk(sqlite: Database.Database, store: KnowledgeStore,
  tuning: FinderTuning = {}) {
  const settings = searchSettings({ substring: tuning })
  const { budget, pairBudget, runs: useRuns, sieveSpan } = settings.substring
  const figures = createIndexStatistics(sqlite, settings.substring, tuning.pairDensity)
  // (a first chunk of none would read as the candidates' end)
  const pairProbe = Math.max(1, tuning.pairProbe ?? SEARCH_SETTINGS.substring.pairProbe)
  // rowids are bound as BigInts: FTS5 uses a rowid constraint only when its value is an INTEGER; a JavaScript
  // number binds a REAL, and then `rowid > ?` walks the doclist from its start and `rowid = ?` answers every
  // match
  const candidates = sqlite.prepare(`SELECT rowid FROM knowledge_passages_fts
    WHERE knowledge_passages_fts MATCH ? AND rowid < ? AND rowid > ? ORDER BY rowid DESC LIMIT +?`).pluck()
  const rowsSql = (filters: DocFilters, columns = COLUMNS) => `SELECT ${columns}
    FROM knowledge_passages p JOIN knowledge_documents d ON d.id = p.document_id
    WHERE p.rowid IN (SELECT value FROM json_each(@rowids)) AND ${readableWhere(filters)}
    ORDER BY p.rowid DESC`
  // a candidate's text first, the rest of its row only once it holds the query: most candidates do not, and the
  // document's six columns cost more than the text
  const textsSql = (filters: DocFilters) => rowsSql(filters, 'p.rowid, p.text')
  /** the readable passages matching `@match` in an index (the trigrams; the runs, whose matches are exact) */
  const matchSql = (filters: DocFilters, index = 'knowledge_passages_fts') => `SELECT ${COLUMNS}
    FROM ${index}
    JOIN knowledge_passages p ON p.rowid = ${index}.rowid
    JOIN knowledge_documents d ON d.id = p.document_id
    WHERE ${index} MATCH @match AND ${index}.rowid < @before
      AND ${index}.rowid > @after AND ${readableWhere(filters)}
    ORDER BY ${index}.rowid DESC
    LIMIT +@rest`

  const pairCandidates = sqlite.prepare(`SELECT rowid FROM knowledge_passages_pairs
    WHERE knowledge_passages_pairs MATCH ? AND rowid < ? AND rowid > ? ORDER BY rowid DESC LIMIT +?`).pluck()
  const runCandidates = sqlite.prepare(`SELECT rowid FROM knowledge_passages_runs
    WHERE knowledge_passages_runs MATCH ? AND rowid < ? AND rowid > ? ORDER BY rowid DESC LIMIT +?`).pluck()
  // the candidates (newest first) holding a run-index match: one look-up of each in its doclist, or the match's
  // rowids between the first and the last read once (cheaper when they are few per candidate: `sieveSpan`)
  const runHolding = sqlite.prepare(`SELECT value FROM json_each(@ids) WHERE EXISTS (SELECT 1
    FROM knowledge_passages_runs WHERE knowledge_passages_runs MATCH @match AND rowid = value)`).pluck()
  const runWithin = sqlite.prepare(`SELECT value FROM json_each(@ids) WHERE value IN (SELECT rowid
    FROM knowledge_passages_runs WHERE knowledge_passages_runs MATCH @match AND rowid <= @hi AND rowid >= @lo)`).pluck()
  const begin = sqlite.prepare('BEGIN')
  const commit = sqlite.prepare('COMMIT')
  /**
   * One read transaction for a search (unless the caller has one): the mark and the walks see one state of the
   * index. Between separate reads, a purge of the newest passages and an upload could give their rowids again
   * below the mark read, where the pair index does not have them yet.
   */
  function snapshot<T>(read: () => T): T {
    if (sqlite.inTransaction) return read()
    begin.run()
    try {
      return read()
    } finally {
      commit.run()
    }
  }

  /**
   * The `want` newest readable passages holding `query` (3+ code points), newest first, with the plan that found
   * them (planner.ts planIndexWalk). `mayExist` (whether any readable passage may hold it, a cheaper test) is asked
   * before the trigram index, not before the pair or run index, which are cheaper still. `within`: only in the rowid
   * ranges [from, to) it gives, newest first (a filter's documents), or everywhere when it gives none; asked inside
   * the search's read transaction.
   */
  function find(reader: Reader, filters: DocFilters, query: string, want: number, mayExist?: () => boolean,
    within?: Within): { plan: SubstringPlan; rows: HitRow[] } {
    return planned(query, mayExist, (index, walkBy) => {
      const plan = planIndexWalk(query.toWellFormed(), index, settings)
      return { plan, rows: plan.kind === 'nothing' ? [] : walkBy(plan, reader, filters, want, within) }
    })
  }

  /**
   * `use` called in one read transaction with the query's index statistics and the walk that acts on a plan made
   * from them: the plan and the walk see one state of the indexes
   */
  function planned<T>(query: string, mayExist: (() => boolean) | undefined,
    use: (index: IndexStatistics, walkBy: (plan: IndexPlan, reader: Reader, filters: DocFilters, want: number,
      within?: Within) => HitRow[]) => T): T {
    // a lone surrogate reaches SQLite as U+FFFD, as it reached the passages: the text check must see it so
    query = query.toWellFormed()
    return snapshot(() => {
      const stats = figures.of(query, mayExist)
      return use(stats.planned, (plan, reader, filters, want, within) =>
        walk(stats, plan, query, reader, filters, want, within))
    })
  }

  /** the index walk a plan says (planner.ts IndexPlan), inside the read transaction its statistics were read in */
  function walk(stats: IndexFigures, plan: IndexPlan, query: string, reader: Reader,
    filters: DocFilters, want: number, within?: Within): HitRow[] {
    const params = readableParams(reader, filters)
    const phrase = ftsPhrase(query)
    const needle = indexFold(query)
    const indexed = plan.kind === 'pairs' || plan.kind === 'runs' || plan.kind === 'run-exact'
    // the passages the pair and run indexes have not reached yet (normally none: they follow the index worker)
    const through = indexed ? stats.mark() : 0n
    const found: HitRow[] = []
    for (const [from, to] of within?.() ?? [[1n, BigInt(Number.MAX_SAFE_INTEGER)]]) {
      found.push(...between(to, from - 1n, want - found.length))
      if (found.length >= want) break
    }
    return found

    /** the newest `wanted` between the rowids `after` and `before` */
    function between(before: bigint, after: bigint, wanted: number): HitRow[] {
      if (!indexed) return trigramRows(plan as TrigramPlan, before, after, wanted)
      const p = plan as Exclude<IndexPlan, TrigramPlan>
      // (a walk over an empty range still reads the trigrams' doclists)
      const got = p.above && through < before ? trigramRows(p.above, before, through > after ? through : after,
        wanted) : []
      if (got.length >= wanted) return got
      const rest = wanted - got.length
      const below = through + 1n < before ? through + 1n : before
      const walk = p.kind === 'pairs' ? pairWalk(p, below, after, rest) : runWalk(p, below, after, rest)
      return got.concat(walk.found.length >= rest || walk.done ? walk.found
        : walk.found.concat(phraseWalk(walk.before, rest - walk.found.length, after)))
    }

    /**
       * Through the run index. A query of one word alone (run-exact): its matches, read with the read rule, newest
       * first; else candidates, whose text is checked, as the pairs' are.
       */
    function runWalk(w: Extract<IndexPlan, { kind: 'runs' | 'run-exact' }>, below: bigint, after: bigint,
      rest: number): Walk {
      if (w.match === undefined) return { found: [], before: after, done: true, read: 0 }
      if (w.kind === 'runs') return candidateWalk(runCandidates, w.match, below, after, rest, pairBudget)
      const found = store.prepared(matchSql(filters, 'knowledge_passages_runs')).all({ ...params, match: w.match,
        before: below, after, rest }) as HitRow[]
      return { found, before: after, done: true, read: found.length }
    }

    /**
       * Through the pair index; after each chunk of candidates, the rest through the run index or the rarest
       * trigrams when the planner's pairsGiveWay says so from the matches so far. When a dense last prefix was left
       * out of the phrase, its candidates are read in growing chunks, and after each the rest goes through the phrase
       * with the prefix once narrowPairsPay says that costs less (matches cluster in documents, so a first chunk
       * alone misjudges)
       */
    function pairWalk(p: Extract<IndexPlan, { kind: 'pairs' }>, below: bigint, after: bigint, rest: number): Walk {
      let instead: 'runs' | 'trigrams' | undefined
      // the candidates whose words hold the query's first run (the run index): asked once a chunk of candidates
      // proved sparse in matches. The pairs keep a first run's last 6 characters, the run index whole words, and a
      // look-up in a rare word's doclist reads one of its few pages where a candidate's text is a page read
      const sieve = (ids: number[]) => {
        const part = stats.firstRun()
        if (part === undefined) return undefined
        if (part === 'none') return []
        // (a word in many passages leaves most candidates, at a look-up each)
        const n = figures.firstRunCount(part, stats.planned.behind())
        if (n * SIEVE_SHARE > figures.newest()) return undefined
        // (the match's rowids in the chunk's stretch when they are estimated few per candidate, else a look-up each)
        const [hi, lo] = [ids[0], ids[ids.length - 1]]
        return (n * (hi - lo + 1) <= sieveSpan * ids.length * Math.max(1, figures.newest())
          ? runWithin.all({ ids: JSON.stringify(ids), match: part.match, hi: BigInt(hi), lo: BigInt(lo) })
          : runHolding.all({ ids: JSON.stringify(ids), match: part.match })) as number[]
      }
      const weigh = (found: number, read: number) => {
        // the candidates the rest takes at the density of matches so far (with none yet, at least this many)
        instead = pairsGiveWay((rest - found) * (read / Math.max(1, found)), stats.planned, settings)
        return instead !== undefined
      }
      const otherwise = (walk: Walk): Walk => {
        const need = rest - walk.found.length
        const runs = stats.phraseRuns()
        const next = instead === 'trigrams'
          ? candidateWalk(candidates, stats.rareTrigrams()!.match, walk.before, after, need, pairBudget - walk.read)
          : runs!.match === undefined ? { found: [], before: after, done: true, read: 0 }
            : candidateWalk(runCandidates, runs!.match, walk.before, after, need, pairBudget - walk.read)
        return { found: walk.found.concat(next.found), before: next.before, done: next.done,
          read: walk.read + next.read }
      }
      // one statement (FTS5 merges a prefix's doclists again for each); first as many candidates as matches are
      // wanted (at most twice the probe): a phrase of pairs is mostly matches, and each candidate drawn costs a
      // page of each dense pair's doclist on a dropped page cache
      if (!p.narrow) {
        const first = Math.min(pairProbe * 2, rest)
        const walk = p.weigh
          ? candidateWalk(pairCandidates, p.match, below, after, rest, pairBudget, weigh, first, sieve)
          : candidateWalk(pairCandidates, p.match, below, after, rest, pairBudget, undefined, first)
        return instead ? otherwise(walk) : walk
      }
      const found: HitRow[] = []
      let read = 0
      let before = below
      for (let chunk = pairProbe; ; chunk *= 2) {
        const walk = candidateWalk(pairCandidates, p.match, before, after, rest - found.length,
          Math.min(chunk, pairBudget - read))
        found.push(...walk.found)
        read += walk.read
        before = walk.before
        if (found.length >= rest || walk.done || read >= pairBudget) return { found, before, done: walk.done, read }
        const need = rest - found.length
        if (narrowPairsPay(p.narrow.postings, need, read / Math.max(1, found.length), settings)) {
          const next = candidateWalk(pairCandidates, p.narrow.match, before, after, need, pairBudget - read)
          return { found: found.concat(next.found), before: next.before, done: next.done, read: read + next.read }
        }
        if (p.weigh && weigh(found.length, read)) return otherwise({ found, before, done: false, read })
      }
    }

    /** through the trigram index alone, between the rowids `after` and `before`, as `tp` says */
    function trigramRows(tp: TrigramPlan, before: bigint, after: bigint, wanted: number): HitRow[] {
      if (tp.kind === 'trigram-phrase') return phraseWalk(before, wanted, after)
      const match = stats.rareTrigrams()!.match
      let found: HitRow[] = []
      if (tp.kind === 'trigram-probe') {
        // one chunk of the rare trigrams' candidates tells how densely they lie (per rowid walked), and so what the
        // rest costs through candidates or through the phrase walk
        const probe = candidateWalk(candidates, match, before, after, wanted, PROBE)
        if (probe.found.length >= wanted || probe.done) return probe.found
        const top = before <= BigInt(figures.newest()) ? before : BigInt(figures.newest()) + 1n
        const walked = Math.max(1, Number(top - probe.before))
        if (probeGoesOn(PROBE, walked, figures.newest(), stats.planned, settings) === 'phrase') {
          return probe.found.concat(phraseWalk(probe.before, wanted - probe.found.length, after))
        }
        found = probe.found
        before = probe.before
      }
      const walk = candidateWalk(candidates, match, before, after, wanted - found.length, budget)
      found = found.concat(walk.found)
      if (found.length >= wanted || walk.done) return found
      // many candidates, few matches: the phrase walk, below what was read
      return found.concat(phraseWalk(walk.before, wanted - found.length, after))
    }

    /**
     * The candidates of `match` between `after` and `before`, newest first, in growing chunks, kept when their
     * text holds the query (folded as the index folds); `done` when they ran out, else `before` is the last one
     * read (at most `limit` are read).
     */
    function candidateWalk(source: Database.Statement, match: string, before: bigint, after: bigint,
      wanted: number, limit: number, stopAfter?: (found: number, read: number) => boolean,
      first = FIRST_CHUNK, sieve?: (ids: number[]) => number[] | undefined): Walk {
      const found: HitRow[] = []
      let read = 0
      // once a chunk proved sparse in matches, each chunk's candidates sieved before their texts are read
      let sieving = false
      // one statement for the whole walk, its rowids taken a chunk at a time: FTS5 merges a prefix token's doclists
      // whole before its first row (each statement again: "of_the" * read 3 MB twice for two chunks)
      const rowids = source.iterate(match, before, after, limit) as IterableIterator<number>
      try {
        for (let chunk = first; found.length < wanted && read < limit;) {
          const asked = Math.min(chunk, limit - read)
          const ids: number[] = []
          while (ids.length < asked) {
            const next = rowids.next()
            if (next.done) break
            ids.push(next.value)
          }
          if (ids.length === 0) return { found, before, done: true, read }
          read += ids.length
          before = BigInt(ids[ids.length - 1])
          const kept = sieving ? sieve!(ids) : undefined
          if (sieving && kept === undefined) sieving = false
          const holding = holdersOf(filters, params, needle, kept ?? ids, wanted - found.length)
          if (holding.length > 0) {
            found.push(...store.prepared(rowsSql(filters)).all({ ...params, rowids: JSON.stringify(holding) }) as
              HitRow[])
            if (found.length >= wanted) return { found, before, done: false, read }
          }
          if (ids.length < asked) return { found, before, done: true, read }
          if (sieve && !sieving && holding.length * 2 < ids.length) sieving = true
          if (stopAfter?.(found.length, read)) return { found, before, done: false, read }
          // twice as many next time, or about what the matches so far say the rest takes (a chunk read whole where
          // its first quarter held the rest reads candidates for nothing, and drawing each from FTS5 costs a page of
          // each dense doclist on a cold cache)
          const rest = Math.ceil(((wanted - found.length) * read / Math.max(1, found.length)) * 1.25)
          chunk = found.length === 0 ? chunk * 2 : Math.min(chunk * 2, Math.max(MIN_CHUNK, rest))
        }
        return { found, before, done: false, read }
      } finally {
        rowids.return?.()
      }
    }

    function phraseWalk(below: bigint, rest: number, above: bigint) {
      return store.prepared(matchSql(filters)).all({ ...params, match: phrase, before: below, after: above,
        rest }) as HitRow[]
    }
  }

  /**
   * Of `ids` (newest first), the first `most` readable passages whose text holds `needle` (folded as the index folds).
   * Read lazily, newest first (the IN list is walked in rowid order, no sort): candidates after the last needed are
   * not read (each is a page read when the file's pages are not cached).
   */
  function holdersOf(filters: DocFilters, params: ReturnType<typeof readableParams>, needle: string, ids: number[],
    most: number): number[] {
    const texts = store.prepared(textsSql(filters)).raw(true).iterate({ ...params, rowids: JSON.stringify(ids) }) as
      IterableIterator<[number, string]>
    const holding: number[] = []
    for (const [rowid, text] of texts) {
      if (indexFold(text).includes(needle)) {
        holding.push(rowid)
        if (holding.length >= most) break
      }
    }
    return holding
  }

  /**
   * Of `rowids` (newest first), the `want` newest readable passages holding `query`, newest first: what `rows` gives
   * when every passage that may hold it is among them
   */
  function among(reader: Reader, filters: DocFilters, query: string, rowids: number[], want: number): HitRow[] {
    query = query.toWellFormed()
    const params = readableParams(reader, filters)
    const holding = holdersOf(filters, params, indexFold(query), rowids, want)
    return holding.length === 0 ? []
      : store.prepared(rowsSql(filters)).all({ ...params, rowids: JSON.stringify(holding) }) as HitRow[]
  }

  /** reads the vocabulary's ends in `near` ahead of use (a search's first first run of one character) */
  const warm = () => { if (useRuns) snapshot(() => figures.warm()) }
  /** the rows alone */
  const rows = (...args: Parameters<typeof find>) => find(...args).rows
  return Object.assign(rows, { warm, among, find, planned })
}
