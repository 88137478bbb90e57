/**
 * What substring search's planner reads of the trigram, pair and run indexes for a query (planner.ts
 * IndexStatistics), each figure worked out when first asked: estimated passages per trigram, pair token or run
 * (how far back the newest SAMPLE_HITS postings reach, cached per connection), the vocabulary's words holding a
 * run, the pair index's MATCH for a phrase, the run index's MATCH for a phrase and for its first run.
 */
import type Database from 'better-sqlite3'
import { ftsPhrase } from './query.js'
import { MAX_LAST_FORMS, MAX_NEAR_ENDS, PAIR_ENDS, pairMatch, type PairDensity } from './phrase-index.js'
import { queryRuns, runsMatch, vocabularyMatch } from './word-vocabulary.js'
import { lazy, lazyBy } from './lazy.js'
import { RARE_GRAMS, type IndexStatistics } from './planner.js'
import type { SubstringSettings } from './search-settings.js'

/** a trigram's density: how far back its newest SAMPLE_HITS passages reach */
const SAMPLE_HITS = 256
/** at most this many of a query's trigrams are looked at */
const SAMPLED_GRAMS = 48
/** a phrase asks the run index for at most this many of its runs */
const MAX_RUN_PARTS = 8
/** a run longer than this (code points) is looked up in the vocabulary by its start */
const VOCABULARY_PROBE = 64
/** FTS5 keeps a token's first this many bytes (FTS5_MAX_TOKEN_SIZE) */
const MAX_TOKEN_BYTES = 32_768
/** a first run of more words than this is not sieved for (pairWalk): an OR of them for each candidate */
const MAX_SIEVE_TERMS = 16
/** cached densities per connection (a trigram alphabet is bounded; a rebuilt cache costs a few samples) */
const MAX_CACHED = 100_000

/** the query's trigrams as FTS5 sees them: every three consecutive code points, distinct */
export function queryGrams(query: string): string[] {
  const cps = [...query]
  const out = new Set<string>()
  for (let i = 0; i + 3 <= cps.length; i++) out.add(cps.slice(i, i + 3).join(''))
  return [...out]
}

/** `pairDensity`: the pair tokens' counts a test may give instead of sampling them */
export function createIndexStatistics(sqlite: Database.Database, settings: SubstringSettings,
  givenDensity?: PairDensity) {
  const { pairs: usePairs, runs: useRuns, runTerms } = settings
  const newest = sqlite.prepare(`SELECT coalesce(max(rowid), 0) FROM knowledge_passages`).pluck()
  const sample = sqlite.prepare(`SELECT count(*) AS n, min(rowid) AS oldest FROM (SELECT rowid
    FROM knowledge_passages_fts WHERE knowledge_passages_fts MATCH ? ORDER BY rowid DESC LIMIT ${SAMPLE_HITS})`)
  const pairSample = sqlite.prepare(`SELECT count(*) AS n, min(rowid) AS oldest FROM (SELECT rowid
    FROM knowledge_passages_pairs WHERE knowledge_passages_pairs MATCH ? ORDER BY rowid DESC LIMIT ${SAMPLE_HITS})`)
  /**
   * Estimated passages holding an index's match (one trigram, one pair token), cached: how far back its newest
   * SAMPLE_HITS reach (the corpus size is read again every minute)
   */
  const counts = new Map<string, number>()
  let corpus = { at: -Infinity, newest: 0 }
  function estimate(source: Database.Statement, key: string, match: string, cache = true): number {
    if (performance.now() - corpus.at > 60_000) corpus = { at: performance.now(), newest: newest.get() as number }
    let n = counts.get(key)
    if (n === undefined) {
      const { n: hits, oldest } = source.get(match) as { n: number; oldest: number | null }
      n = hits < SAMPLE_HITS ? hits : Math.round(hits * corpus.newest / Math.max(1, corpus.newest - oldest! + 1))
      if (counts.size >= MAX_CACHED) counts.clear()
      if (cache) counts.set(key, n)
    }
    return n
  }
  const passagesWith = (gram: string) => estimate(sample, gram.toLowerCase(), ftsPhrase(gram))
  const pairDensity: PairDensity = givenDensity ?? ((column, token, and) =>
    estimate(pairSample, `${column} ${token}${and ? ` ${and.column} ${and.token}` : ''}`,
      `{${column}}: ${ftsPhrase(token)}${and ? ` AND {${and.column}}: ${ftsPhrase(and.token)}` : ''}`))

  const pairsThrough = sqlite.prepare(`SELECT indexed_through FROM knowledge_pairs_state`).pluck()
  const runSample = sqlite.prepare(`SELECT count(*) AS n, min(rowid) AS oldest FROM (SELECT rowid
    FROM knowledge_passages_runs WHERE knowledge_passages_runs MATCH ? ORDER BY rowid DESC LIMIT ${SAMPLE_HITS})`)
  const wordsHolding = sqlite.prepare(`SELECT term FROM knowledge_run_terms_fts WHERE knowledge_run_terms_fts MATCH ?
    LIMIT ${runTerms + 1}`).pluck()
  // the vocabulary's words that start with a run: its unique index's range (U+10FFFF is no letter: every word
  // starting with the run sorts before the run followed by it)
  const wordsStarting = sqlite.prepare(`SELECT term FROM knowledge_run_terms WHERE term >= ? AND term < ?
    ORDER BY term LIMIT ${MAX_LAST_FORMS + 1}`).pluck()
  /** the vocabulary's words that start with `run`, or undefined when more than MAX_LAST_FORMS */
  function wordsStartingWith(run: string): string[] | undefined {
    const words = wordsStarting.all(run, `${run}\u{10FFFF}`) as string[]
    return words.length > MAX_LAST_FORMS ? undefined : words
  }
  // the ends in `near` of the vocabulary's words, by their last character, kept per connection: words are only
  // added (ids rising) until the index is made again (`made_with`), so each search reads the words added since
  const madeWith = sqlite.prepare(`SELECT made_with FROM knowledge_pairs_state`).pluck()
  const lastWord = sqlite.prepare(`SELECT coalesce(max(id), 0) FROM knowledge_run_terms`).pluck()
  const wordsAfter = sqlite.prepare(`SELECT id, term FROM knowledge_run_terms WHERE id > ? ORDER BY id`).raw(true)
  const wordAt = sqlite.prepare(`SELECT term FROM knowledge_run_terms WHERE id = ?`).pluck()
  let nearEndsKept = { madeWith: '', through: 0, word: '', byLast: new Map<string, Set<string>>() }
  /**
   * the ends in `near` of the vocabulary's words ending with `char`, read in the search's transaction (kept while
   * the word last read is still there under its id: a vocabulary emptied and filled again gives ids again)
   */
  function nearEndsOf(char: string): string[] | undefined {
    const made = madeWith.get() as string
    const top = lastWord.get() as number
    const kept = nearEndsKept
    if (made !== kept.madeWith || top < kept.through || (kept.through > 0 && wordAt.get(kept.through) !== kept.word)) {
      nearEndsKept = { madeWith: made, through: 0, word: '', byLast: new Map() }
    }
    if (top > nearEndsKept.through) {
      for (const [id, term] of wordsAfter.iterate(nearEndsKept.through) as IterableIterator<[number, string]>) {
        // (the last 2 characters are in the last 4 UTF-16 units: a word may be a 20,000-character run)
        const points = [...term.slice(-2 * PAIR_ENDS.near)]
        const last = points[points.length - 1]
        let set = nearEndsKept.byLast.get(last)
        if (!set) nearEndsKept.byLast.set(last, set = new Set())
        // (past MAX_NEAR_ENDS only "more" is told)
        if (set.size <= MAX_NEAR_ENDS) set.add(points.slice(-PAIR_ENDS.near).join(''))
        nearEndsKept.through = id
        nearEndsKept.word = term
      }
    }
    const ends = nearEndsKept.byLast.get(char)
    return ends === undefined ? [] : ends.size > MAX_NEAR_ENDS ? undefined : [...ends]
  }
  /**
   * A query's figures from the indexes, each worked out when the planner or a walk first asks (inside the search's
   * read transaction): the pair index's MATCH, the vocabulary's words holding a run, the sampled trigrams' counts,
   * the run index's MATCH for a phrase and for its first run.
   */
  function indexStatistics(query: string, mayExist?: () => boolean) {
    const mark = lazy(() => BigInt(pairsThrough.get() as number))
    const behind = lazy(() => mark() < BigInt(newest.get() as number))
    /**
     * The words of the vocabulary holding `run`, or undefined when it has fewer than 3 code points or is in more
     * than `runTerms` words. A long run is looked up by its first VOCABULARY_PROBE code points (its trigram phrase
     * would step every trigram's doclist), the words then checked whole.
     */
    const vocabulary = lazyBy((run: string): string[] | undefined => {
      const cps = [...run]
      if (cps.length < 3) return undefined
      const probe = cps.length > VOCABULARY_PROBE ? cps.slice(0, VOCABULARY_PROBE).join('') : run
      const terms = wordsHolding.all(vocabularyMatch(probe)) as string[]
      return terms.length > runTerms ? undefined : probe === run ? terms : terms.filter((t) => t.includes(run))
    })
    /** the query's trigrams (a long query's sampled: at most SAMPLED_GRAMS, spread over it) with their counts */
    const gramCounts = lazy(() => {
      const all = queryGrams(query)
      const step = Math.ceil(all.length / SAMPLED_GRAMS)
      const sampled = all.filter((_, i) => i % step === 0).map((g) => ({ g, n: passagesWith(g) }))
        .sort((a, b) => a.n - b.n)
      return { sampled, step }
    })
    /** the AND of the rarest trigrams (the trigram walk's candidates) and its estimated passages */
    const rareTrigrams = lazy((): { match: string; n: number } | undefined => {
      const rare = gramCounts().sampled.slice(0, RARE_GRAMS)
      const match = rare.map(({ g }) => ftsPhrase(g)).join(' AND ')
      return rare.length === 0 ? undefined : { match, n: estimate(sample, `and ${match}`, match) }
    })
    /**
     * The run index's MATCH for a query of several runs: every whole run as a word, the first as the words that end
     * with it, the last as the words that start with it (when the vocabulary gives them), ANDed; with the fewest
     * passages one of its parts is in: undefined when no part can be asked; `match` undefined when no passage it
     * has holds the query (a part in no word of the vocabulary).
     */
    const phraseRuns = lazy((): { match: string | undefined; n: number } | undefined => {
      const parts: Array<{ key: string; match: string }> = []
      for (const { run, is } of queryRuns(query) ?? []) {
        if (is === 'whole') { parts.push({ key: `runs whole ${run}`, match: runsMatch([run]) }); continue }
        const terms = vocabulary(run)?.filter((t) => is === 'end' ? t.endsWith(run) : t.startsWith(run))
        if (terms === undefined) continue
        if (terms.length === 0) return { match: undefined, n: 0 }
        parts.push({ key: `runs ${is} ${run}`, match: `(${runsMatch(terms)})` })
      }
      // a long query's first and last runs and its longest whole ones (a pasted paragraph's hundred words would cost
      // a hundred samples)
      const kept = parts.length <= MAX_RUN_PARTS ? parts : [parts[0], parts[parts.length - 1],
        ...parts.slice(1, -1).sort((a, b) => b.key.length - a.key.length).slice(0, MAX_RUN_PARTS - 2)]
      // (the counts of an index still catching up are not kept: they would stay too low)
      return kept.length === 0 ? undefined : { match: kept.map((p) => p.match).join(' AND '),
        n: Math.min(...kept.map((p) => estimate(runSample, p.key, p.match, !behind()))) }
    })
    /**
     * The run index's MATCH for the passages holding the query's first run (a passage holding the query holds it,
     * whole or as the end of a word): the words of the vocabulary it may be, at most MAX_SIEVE_TERMS; `none` when no
     * word, undefined when not asked (fewer than 3 code points, more words, or one FTS5 would cut)
     */
    const firstRun = lazy((): { key: string; match: string } | 'none' | undefined => {
      const first = queryRuns(query)?.[0]
      if (!first || [...first.run].length < 3) return undefined
      const terms = first.is === 'whole' ? [first.run] : vocabulary(first.run)?.filter((t) => t.endsWith(first.run))
      if (terms === undefined || terms.length > MAX_SIEVE_TERMS || !fitsTokens(terms)) return undefined
      if (terms.length === 0) return 'none'
      return first.is === 'whole' ? { key: `runs whole ${first.run}`, match: runsMatch(terms) }
        : { key: `runs end ${first.run}`, match: `(${runsMatch(terms)})` }
    })
    const pairs = lazy(() => usePairs ? pairMatch(query, pairDensity,
      useRuns ? (run) => vocabulary(run)?.filter((t) => t.endsWith(run)) : undefined,
      useRuns ? wordsStartingWith : undefined, useRuns ? nearEndsOf : undefined) : undefined)
    const planned: IndexStatistics = {
      pairs,
      mayExist: lazy(() => mayExist?.() ?? true),
      behind,
      vocabulary,
      wholeTokens: fitsTokens,
      runsHolding: (run, words) => estimate(runSample, `runs any ${run}`, runsMatch(words), !behind()),
      phraseRuns,
      trigrams: () => gramCounts().sampled.map((g) => g.n),
      trigramStep: () => gramCounts().step,
      rareTrigrams: () => rareTrigrams()?.n
    }
    return { planned, mark, gramCounts, rareTrigrams, phraseRuns, firstRun }
  }
  /** FTS5 keeps a token's first 32,768 bytes (FTS5_MAX_TOKEN_SIZE): a longer word's passages are only candidates */
  const fitsTokens = (words: string[]) => words.every((t) => t.length * 3 <= MAX_TOKEN_BYTES)

  return {
    /** a query's figures, read inside the search's read transaction */
    of: indexStatistics,
    /** the newest passage's rowid, as last read (every minute at most) */
    newest: () => corpus.newest,
    /** passages estimated to hold the query's first run (the pair walk's sieve) */
    firstRunCount: (part: { key: string; match: string }, behind: boolean) =>
      estimate(runSample, part.key, part.match, !behind),
    /** reads the vocabulary's ends in `near` ahead of use (inside a read transaction) */
    warm: () => { nearEndsOf('') }
  }
}

export type IndexFigures = ReturnType<ReturnType<typeof createIndexStatistics>['of']>
