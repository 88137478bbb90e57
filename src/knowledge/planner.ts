/**
 * Where a passage search goes, and why: every choice of index or path is made here, from named statistics, and
 * returned as a tagged `Plan` whose `reason` says which rule chose it. The executors act on a plan and decide
 * nothing of their own but for the switches below (`pairsGiveWay`, `probeGoesOn`, `narrowPairsPay`), which weigh
 * what a walk has measured and also live here. The decision table is in docs/design/knowledge-search.md; a test
 * walks it through `plan`.
 */
import type { SearchSettings } from './search-settings.js'
import { queryRun, runsMatch } from './word-vocabulary.js'

/** the search modes of the API */
export type PlannedMode = 'hybrid' | 'substring' | 'words' | 'semantic'

/** the trigram index's paths */
export type TrigramPlan =
  | { kind: 'trigram-and'; reason: string }
  | { kind: 'trigram-probe'; reason: string }
  | { kind: 'trigram-phrase'; reason: string }

/**
 * The index walk of a 3+ character substring query. `behind`: the pair and run indexes have not reached the newest
 * passages, which are walked through `above` (the trigram index) first.
 */
export type IndexPlan =
  | { kind: 'run-exact'; match: string | undefined; reason: string; behind: boolean; above?: TrigramPlan }
  | { kind: 'runs'; match: string | undefined; reason: string; behind: boolean; above?: TrigramPlan }
  | { kind: 'pairs'; match: string; narrow?: { match: string; postings: number }; weigh: boolean; reason: string;
    behind: boolean; above?: TrigramPlan }
  | TrigramPlan

/**
 * no passage can match: nothing is read. `shared`: the shared indexes' figures (every organization's passages) said
 * so, not the caller's own
 */
export type Nothing = { kind: 'nothing'; reason: string; shared?: true }

export type SubstringPlan =
  | Nothing
  | { kind: 'short-scan'; reason: string }
  | { kind: 'own-passages'; reason: string }
  | { kind: 'among'; rowids: number[]; reason: string }
  | IndexPlan

export type WordsPlan =
  | Nothing
  | { kind: 'words-exact'; reason: string }
  | { kind: 'words-bounded'; reason: string }

export type SemanticPlan = { kind: 'semantic'; reason: string }

export type HybridPlan = { kind: 'hybrid'; reason: string; words: WordsPlan; substring: SubstringPlan;
  semantic?: SemanticPlan }

export type Plan = SubstringPlan | WordsPlan | SemanticPlan | HybridPlan

/** What the words part's postings showed of the passages that may hold the whole query (hybrid's substring part) */
export interface WordsEvidence {
  /** no readable passage holds every inner word of the query */
  none: boolean
  /** only these passages may (newest first), when the postings tell */
  among?: number[]
}

/** the word index's figures a words plan is made from (each worked out once, when first asked) */
export interface WordsStatistics {
  /** the query's terms */
  terms: number
  /** the reader reads no document in the scope */
  readsNothing: boolean
  /** what a category or tag filter leaves: no filter, nothing, all the reader's passages, ranges, too many ranges */
  filter(): 'none' | 'empty' | 'all' | 'ranges' | 'post-filter'
  /** the terms' postings together, a common term's counted as more than `exactPostings` */
  postings(): number
}

/** the trigram, pair and run indexes' figures an index walk is planned from */
export interface IndexStatistics {
  /** the pair index's MATCH for a query of several words (src/knowledge/phrase-index.ts), if it can ask one */
  pairs(): { match: string; narrow?: { match: string; postings: number } } | undefined
  /** whether a readable passage may hold the query's inner words (one look-up in the word index) */
  mayExist(): boolean
  /** the pair and run indexes have not reached the newest passages */
  behind(): boolean
  /** the vocabulary's words holding `run`; undefined when it has fewer than 3 code points or too many words */
  vocabulary(run: string): string[] | undefined
  /** whether each of these words fits in one FTS5 token (FTS5 keeps a token's first 32,768 bytes) */
  wholeTokens(words: string[]): boolean
  /** passages estimated to hold any of these words (the run index) */
  runsHolding(run: string, words: string[]): number
  /** the run index's MATCH for a query of several runs, with its estimated passages; undefined when none */
  phraseRuns(): { match: string | undefined; n: number } | undefined
  /** the query's sampled trigrams' estimated passages, rarest first */
  trigrams(): number[]
  /** one trigram of this many is sampled (a long query's: at most 48, spread over it) */
  trigramStep(): number
  /** passages estimated to hold the AND of the rarest trigrams */
  rareTrigrams(): number | undefined
}

export interface SubstringStatistics {
  /** the reader reads no document in this scope */
  readsNothing(): boolean
  /** the reader's readable documents and their passages, counted up to `fewDocs` + 1 documents */
  ownDocuments(): { docs: number; passages: number }
  /** hybrid: what its words part showed */
  evidence?(): WordsEvidence | undefined
  index(): IndexStatistics
}

export interface PlanStatistics {
  words(): WordsStatistics
  substring(): SubstringStatistics
  /** whether an embedding endpoint is configured */
  semantic: boolean
}

/** the search's query as the planner sees it */
export interface PlannedQuery { text: string; mode: PlannedMode }

/** how many of the rarest trigrams are ANDed */
export const RARE_GRAMS = 3
/** a query of several runs without pairs goes through the run index only when estimated in at most this many */
const RUNS_AGAINST = 20_000

/** The plan of one search: its mode's path, or hybrid's parts. */
export function plan(query: PlannedQuery, statistics: PlanStatistics, settings: SearchSettings): Plan {
  switch (query.mode) {
    case 'substring': return planSubstring(query.text, statistics.substring(), settings)
    case 'words': return planWords(statistics.words(), settings)
    case 'semantic': return { kind: 'semantic', reason: 'the nearest passages by embedding' }
    case 'hybrid': {
      if ([...query.text].length < 3) return planSubstring(query.text, statistics.substring(), settings)
      return {
        kind: 'hybrid', reason: 'reciprocal rank fusion of the parts: words first, whose postings may spare substring',
        words: planWords(statistics.words(), settings),
        substring: planSubstring(query.text, statistics.substring(), settings),
        ...(statistics.semantic ? { semantic: { kind: 'semantic', reason: 'an embedding endpoint is configured' } }
          : {})
      }
    }
  }
}

export function planWords(s: WordsStatistics, settings: SearchSettings): WordsPlan {
  const { exactPostings } = settings.words
  if (s.terms === 0) return { kind: 'nothing', reason: 'the query has no word' }
  if (s.readsNothing) return { kind: 'nothing', reason: 'the reader reads no document' }
  const filter = s.filter()
  if (filter === 'empty') return { kind: 'nothing', reason: 'the filter leaves the reader no passage' }
  if (s.postings() <= exactPostings) {
    return { kind: 'words-exact',
      reason: 'the words have few postings among the reader\'s passages: every match ranked' }
  }
  return { kind: 'words-bounded', reason: filter === 'post-filter'
    ? 'common words; the filter has too many ranges: walked as without it, candidates kept while they pass'
    : filter === 'ranges' ? 'common words, walked inside the filter\'s ranges'
      : 'common words: rare words\' postings merged, common ones sought where they meet, the best rescored' }
}

export function planSubstring(text: string, s: SubstringStatistics, settings: SearchSettings): SubstringPlan {
  if ([...text].length < 3) {
    return { kind: 'short-scan', reason: 'fewer than 3 characters: no trigram; a scan that skips documents by ' +
      'their character filters' }
  }
  if (s.readsNothing()) return { kind: 'nothing', reason: 'the reader reads no document' }
  const evidence = s.evidence?.()
  if (evidence?.none) {
    return { kind: 'nothing', reason: 'the words part\'s postings show no passage holding every inner word' }
  }
  if (evidence?.among && evidence.among.length <= settings.hybrid.among) {
    return { kind: 'among', rowids: evidence.among,
      reason: 'the words part\'s postings show the few passages that may hold the query' }
  }
  const own = s.ownDocuments()
  if (own.docs === 0) return { kind: 'nothing', reason: 'the reader reads no document' }
  if (own.docs <= settings.ownPassages.fewDocs && own.passages <= settings.ownPassages.fewPassages) {
    if (!s.index().mayExist()) {
      return { kind: 'nothing', reason: 'no readable passage holds every inner word', shared: true }
    }
    return { kind: 'own-passages', reason: 'the reader reads few passages: read them, not the shared indexes' }
  }
  return planIndexWalk(text, s.index(), settings)
}

/** the index walk of a 3+ character query (the decision table's lower half) */
export function planIndexWalk(text: string, s: IndexStatistics, settings: SearchSettings): IndexPlan | Nothing {
  const { pairs: usePairs, runs: useRuns, rareEnough, phraseRuns } = settings.substring
  const pairs = usePairs ? s.pairs() : undefined
  if (pairs === undefined && !s.mayExist()) {
    return { kind: 'nothing', reason: 'no readable passage holds every inner word', shared: true }
  }
  const indexed = () => indexedParts(s, settings)
  if (useRuns) {
    const one = queryRun(text)
    if (one !== undefined) {
      const words = s.vocabulary(one.run)
      if (words !== undefined) {
        if (words.length === 0) {
          return { kind: one.exact ? 'run-exact' : 'runs', match: undefined, ...indexed(),
            reason: 'no word of the vocabulary holds the run' }
        }
        if (one.exact && s.wholeTokens(words)) {
          return { kind: 'run-exact', match: runsMatch(words), ...indexed(),
            reason: 'one word: the passages holding a vocabulary word that holds it are its matches' }
        }
        const rarest = s.trigrams()[0]
        if (rarest !== undefined && rarest > rareEnough) {
          const inRuns = s.runsHolding(one.run, words)
          if (!(rarest < inRuns || s.rareTrigrams()! < inRuns)) {
            return { kind: 'runs', match: runsMatch(words), ...indexed(),
              reason: 'one run within more: its vocabulary words\' passages are fewer than the rarest trigrams\'' }
          }
        }
      }
    } else if (phraseRuns === 'always') {
      const runs = s.phraseRuns()
      if (runs) return { kind: 'runs', match: runs.match, ...indexed(), reason: 'phrases always through the runs' }
    } else if (phraseRuns === 'weigh' && pairs === undefined) {
      const rarest = s.trigrams()[0]
      if (rarest !== undefined && rarest > rareEnough) {
        const runs = s.phraseRuns()
        if (runs !== undefined && runs.n <= RUNS_AGAINST && runs.n < rarest) {
          return { kind: 'runs', match: runs.match, ...indexed(),
            reason: 'several runs without pairs: the run index holds fewer candidates than the rarest trigram' }
        }
      }
    }
  }
  if (pairs !== undefined) {
    return { kind: 'pairs', match: pairs.match, narrow: pairs.narrow, weigh: phraseRuns === 'weigh',
      ...indexed(), reason: pairs.narrow ? 'several words: the word-pair phrase, a dense last prefix left out'
        : 'several words: the word-pair phrase' }
  }
  return planTrigrams(s, settings)
}

/** an indexed plan's newest part: when the pair and run indexes are behind, the passages above their mark */
function indexedParts(s: IndexStatistics, settings: SearchSettings) {
  const behind = s.behind()
  return behind ? { behind, above: planTrigrams(s, settings) } : { behind }
}

/** the trigram index's path, from the sampled trigrams' estimated passages */
export function planTrigrams(s: IndexStatistics, settings: SearchSettings): TrigramPlan {
  const { rareEnough, probeUpTo } = settings.substring
  const sampled = s.trigrams()
  const rarest = sampled[0]
  if (rarest === undefined || rarest > probeUpTo) {
    return { kind: 'trigram-phrase', reason: 'even the rarest trigram is common: FTS5\'s phrase walk' }
  }
  if (rarest > rareEnough && sampled.length <= RARE_GRAMS) {
    return { kind: 'trigram-phrase', reason: 'every trigram would be ANDed: the phrase walk reads no text' }
  }
  if (rarest > rareEnough) {
    return { kind: 'trigram-probe', reason: 'rare trigrams common enough: a first chunk of candidates measures ' +
      'their density, then candidates or the phrase walk, whichever costs less' }
  }
  return { kind: 'trigram-and', reason: 'the AND of the rarest trigrams: candidates whose text is checked' }
}

/**
 * After a chunk of pair candidates: whether the rest goes through the rare trigrams or the run index instead, when
 * the matches so far say the pairs would take more than twice their candidates (`more`: candidates the rest takes)
 */
export function pairsGiveWay(more: number, s: IndexStatistics, settings: SearchSettings): 'runs' | 'trigrams'
  | undefined {
  if (more <= settings.substring.rareEnough) return undefined
  // (by a margin: matches cluster in documents, and a first chunk misjudges their density)
  const runs = s.phraseRuns()
  const grams = s.rareTrigrams()
  if (grams !== undefined && grams * 2 < more && grams < (runs?.n ?? Infinity)) return 'trigrams'
  if (runs !== undefined && runs.n * 2 < more) return 'runs'
  return undefined
}

/**
 * After the probe chunk of a trigram-probe walk: go on through candidates or through the phrase walk, whichever the
 * measured density (`walked`: rowids the probe covered for `probe` candidates) says costs less
 */
export function probeGoesOn(probe: number, walked: number, corpus: number, s: IndexStatistics,
  settings: SearchSettings): 'candidates' | 'phrase' {
  const { costs } = settings.substring
  const sampled = s.trigrams()
  const step = s.trigramStep()
  const perRowid = (ns: number[]) => ns.reduce((sum, n) => sum + n, 0) / Math.max(1, corpus)
  const viaCandidates = (probe / Math.max(1, walked)) * costs.candidate +
    perRowid(sampled.slice(0, RARE_GRAMS)) * costs.rarePosting
  const viaPhrase = perRowid(sampled) * step * costs.posting
  return viaCandidates >= viaPhrase ? 'phrase' : 'candidates'
}

/** a dense last prefix left out of the pairs: whether the rest goes through the phrase with it (merged once) */
export function narrowPairsPay(postings: number, need: number, readPerMatch: number, settings: SearchSettings):
boolean {
  const { costs } = settings.substring
  return postings * costs.prefixPosting < need * readPerMatch * costs.candidate
}

/** a plan as `?explain` shows it: each step's kind and reason, a hybrid search's parts nested */
export interface ExplainedStep { kind: string; reason: string; words?: ExplainedStep; substring?: ExplainedStep;
  semantic?: ExplainedStep }

/** how `?explain` shows a substring plan decided by the shared indexes */
const SHARED_WALK: ExplainedStep = { kind: 'index-walk', reason: 'the shared trigram, pair and run indexes are ' +
  'walked; which of them, and why, follows figures of every organization\'s passages, so it is not shown' }
const INDEX_KINDS = new Set(['run-exact', 'runs', 'pairs', 'trigram-and', 'trigram-probe', 'trigram-phrase'])

/**
 * A plan as an organization's owners and admins may see it (POST /api/knowledge/search?explain=true): the paths and
 * their reasons, but only as far as the caller's own passages decided them. The substring index walk's choices
 * (and a "nothing" the shared indexes said) follow counts of every organization's passages, so they show as one
 * `index-walk`; match expressions, rowids and counts are never shown.
 */
export function explainPlan(plan: Plan): ExplainedStep {
  if (plan.kind === 'hybrid') {
    return { kind: plan.kind, reason: plan.reason, words: explainPlan(plan.words),
      substring: explainPlan(plan.substring), ...(plan.semantic ? { semantic: explainPlan(plan.semantic) } : {}) }
  }
  if (INDEX_KINDS.has(plan.kind) || (plan.kind === 'nothing' && plan.shared)) return SHARED_WALK
  return { kind: plan.kind, reason: plan.reason }
}
