/**
 * Every tuned bound of passage search, one typed object per part, with the benchmark that shows each value
 * (docs/design/knowledge-search.md, "Settings"). The defaults are what the service runs with; configuration
 * (`searchSettings` in src/config.ts) and tests pass overrides, merged by `searchSettings()`.
 */
import { MAX_RUN_TERMS } from './word-vocabulary.js'
import type { FieldWeights } from './word-ranking.js'

/** How the words path bounds its work at scale (words-bounded executor); tests make them small. */
export interface WordsSettings {
  /** postings read per term; a term with more is common and only rescores (`bench -- scoring`: exact top 10) */
  postingsPerTerm: number
  /**
   * when the terms' postings together are at most this many, every match is ranked (words-exact);
   * `bench -- scoring` compares both paths on the same questions
   */
  exactPostings: number
  /** the candidates read and ranked by BM25 in JavaScript (`bench -- scoring`: 50 against 100 and 150) */
  rescore: number
  /**
   * postings read first: a term whose newest `probe` postings reach back so little of the corpus that it
   * must hold over commonMargin × postingsPerTerm is common at once (`bench -- scoring`, per-stage CPU)
   */
  probe: number
  /** how many times postingsPerTerm the probe's estimate must reach for a term to be common at once (`scoring`) */
  commonMargin: number
  /**
   * a category or tag filter leaving the reader at most this many documents is searched inside their passages'
   * rowid ranges; one leaving more, as without the filter (`bench -- search`, filtered questions)
   */
  filteredDocs: number
  /** how many of the rarest words the passages holding all words are sought by, all words common (`scoring`) */
  everyTerms: number
  /** a post-filtered walk that kept too few walks the filter's newest this many ranges (`search`, old tags) */
  fallbackRanges: number
  /** how many of a common word's newest meetings with the rare words a seek reads (`bench -- scoring`) */
  seekMeetings: number
  /** how many of a query's common words are sought where its rare words are (`scoring`, pasted paragraphs) */
  sought: number
  /**
   * how much a query term in a passage's section heading, the headings above it, its document's title and the terms
   * it defines counts beside one in its text (word-ranking.ts FieldWeights). `bench -- retrieval`, hybrid: section 2
   * and headings 1 raise hit@5 and MRR@10 on both corpora, the title at 0.5 raises MRR@10 on both (at 1 it costs
   * python hit@5), no figure lower; the defined terms cost python hit@1, so they count 0. The figures:
   * docs/design/knowledge-search.md, "Retrieval quality"
   */
  fields: FieldWeights
  /**
   * term proximity: a passage whose text holds several of the query's words adds this share of their IDF times how
   * many they are over the fewest neighbouring words holding them all. `bench -- retrieval`, hybrid: 0.1 raises
   * fastify's hit@1, hit@10 and MRR@10 and python's MRR@10, no figure lower; 0.2 costs fastify hit@5 and passage
   * hit@5 (docs/design/knowledge-search.md, "Retrieval quality")
   */
  proximity: number
  /**
   * BM25's IDF (word-ranking.ts inverseFrequency): `lucene` keeps a word in half the passages or more above 0.
   * `bench -- retrieval`, hybrid, against `robertson`: hit@1 and MRR@10 higher on both corpora, no figure lower
   * (forced bounded, {"exactPostings":0}, as well; docs/design/knowledge-search.md, "Retrieval quality")
   */
  idf: 'lucene' | 'robertson'
  /**
   * a passage whose section heading or one of its defined terms (a definition-list term, a table's first cell) names
   * the query's key word — its rarest term, as the name itself, not inside a sentence (word-ranking.ts namesTerm) —
   * adds this share of that term's IDF. `bench -- retrieval`, hybrid: 0.25 takes python's hit@1 / MRR@10 from 50.0 %
   * / 0.621 to 52.9 % / 0.637, fastify unchanged; 0.5 costs fastify MRR@10; any query term (not the key word only)
   * costs fastify hit@1
   */
  defines: number
  /**
   * the places after the first `after` of a words list go preferably to documents not shown yet: a passage's score
   * counts `factor` times less for each passage of its document already listed (word-ranking.ts diversify).
   * `bench -- retrieval`, hybrid: after 5, 0.7 takes hit@10 from 85.7 to 92.9 % (fastify) and 82.4 to 86.8 %
   * (python), the first five unchanged; from the second place on it raises hit@5 but costs passage hit@5 (an answer
   * in the third passage of its page)
   */
  diversity: { after: number; factor: number }
}

/** How a category or tag filter is walked (words and substring). */
export interface FilterSettings {
  /** a filter's documents in more stretches of rowids than this are walked as without it (`search`, filtered) */
  maxRanges: number
  /** substring walks inside at most this many of a filter's ranges, else the whole index (`search`, phrases) */
  substringRanges: number
  /** a filter keeping a share of the reader's passages seeks up to this many times the candidates (1 / share) */
  maxWidening: number
  /** a filter's documents' rowid ranges are worked out up to this many documents (then cached) */
  spanDocs: number
  /** candidates checked against a filter per statement, and in all at most */
  checkBatch: number
  maxChecks: number
  /** the strongest words' newest postings read when the walks above found too few of a filter's passages */
  fallbackPostings: number
}

/** How substring search walks its indexes (the index-walk executors). */
export interface SubstringSettings {
  /** the rare-trigram candidate walk is taken when the rarest trigram is estimated in at most this many passages */
  rareEnough: number
  /** candidates read before the phrase walk takes over (each costs a passage read) */
  budget: number
  /** the same for the pair index's candidates (and the run index's or trigrams' after a switch from them) */
  pairBudget: number
  /** whether queries of several words use the pair index (off: `bench -- search`'s "without pairs" run) */
  pairs: boolean
  /** whether the run index and its vocabulary are asked (one word; phrases; a first word's forms in the pairs) */
  runs: boolean
  /** a query's word in more words of the vocabulary than this goes to the trigram index (`search`, fragments) */
  runTerms: number
  /** whether a phrase is weighed through the run index against the pairs or trigrams, always asked there, or never */
  phraseRuns: 'weigh' | 'always' | 'never'
  /** pair candidates read before the runs and trigrams are weighed (`search`, 2-word phrases, dropped cache) */
  pairProbe: number
  /** a chunk of pair candidates is sieved by a range read of its first run when at most this many per candidate */
  sieveSpan: number
  /** above rareEnough, up to this many passages for the rarest trigram, a probe chunk measures the density */
  probeUpTo: number
  /**
   * CPU ns a unit, measured at 1,000,000 passages (`npm run bench -- search` with BENCH_SHAPES=phrase, CPU per
   * question divided by what it read; re-measure there on other hardware): a candidate read and checked; a posting
   * of the ANDed rare trigrams; a posting of every trigram (the phrase walk); a posting of a pair prefix's tokens
   */
  costs: { candidate: number; rarePosting: number; posting: number; prefixPosting: number }
}

/** How a reader of few passages is served substring matches from its own passages (own-passages executor). */
export interface OwnPassagesSettings {
  /** at most this many readable documents and passages (`bench -- search`, the small organization) */
  fewDocs: number
  fewPassages: number
}

/** How hybrid composes its parts. */
export interface HybridSettings {
  /** the best word matches and nearest passages hybrid fuses (`bench -- retrieval`: hit@5, MRR@10) */
  fuseCandidates: number
  /** how many of the newest matching passages substring ranks by BM25 of the phrase (`search`, common phrases) */
  rankCandidates: number
  /** a words part showing at most this many passages that may hold the whole query: those are read (`search`) */
  among: number
  /** reciprocal rank fusion constant (Cormack et al. 2009) */
  rrfK: number
}

export interface SearchSettings {
  words: WordsSettings
  filters: FilterSettings
  substring: SubstringSettings
  ownPassages: OwnPassagesSettings
  hybrid: HybridSettings
}

export const SEARCH_SETTINGS: SearchSettings = {
  words: { postingsPerTerm: 10_000, exactPostings: 6_000, rescore: 50, probe: 500, commonMargin: 1,
    filteredDocs: 5000, everyTerms: 3, fallbackRanges: 400, seekMeetings: 2500, sought: 6,
    fields: { section: 2, headings: 1, title: 0.5, defined: 0 }, proximity: 0.1, idf: 'lucene',
    defines: 0.25, diversity: { after: 5, factor: 0.7 } },
  filters: { maxRanges: 128, substringRanges: 64, maxWidening: 20, spanDocs: 20_000, checkBatch: 500, maxChecks: 5000,
    fallbackPostings: 50_000 },
  substring: { rareEnough: 3000, budget: 3000, pairBudget: 20_000, pairs: true, runs: true, runTerms: MAX_RUN_TERMS,
    phraseRuns: 'weigh', pairProbe: 64, sieveSpan: 100, probeUpTo: 500_000,
    costs: { candidate: 5000, rarePosting: 100, posting: 20, prefixPosting: 80 } },
  ownPassages: { fewDocs: 100, fewPassages: 10_000 },
  hybrid: { fuseCandidates: 50, rankCandidates: 50, among: 64, rrfK: 60 }
}

/** overrides of any part's settings (configuration, benches, tests) */
export type SearchSettingsOverrides = {
  [P in keyof SearchSettings]?: P extends 'substring'
    ? Partial<Omit<SubstringSettings, 'costs'>> & { costs?: Partial<SubstringSettings['costs']> }
    : P extends 'words' ? Partial<Omit<WordsSettings, 'fields' | 'diversity'>> & { fields?: Partial<FieldWeights>;
      diversity?: Partial<WordsSettings['diversity']> }
      : Partial<SearchSettings[P]>
}

/** the defaults with `overrides` merged in, part by part */
export function searchSettings(overrides: SearchSettingsOverrides = {}): SearchSettings {
  const d = SEARCH_SETTINGS
  const o = overrides
  return {
    words: { ...d.words, ...o.words, fields: { ...d.words.fields, ...o.words?.fields },
      diversity: { ...d.words.diversity, ...o.words?.diversity } },
    filters: { ...d.filters, ...o.filters },
    substring: { ...d.substring, ...o.substring, costs: { ...d.substring.costs, ...o.substring?.costs } },
    ownPassages: { ...d.ownPassages, ...o.ownPassages },
    hybrid: { ...d.hybrid, ...o.hybrid }
  }
}
