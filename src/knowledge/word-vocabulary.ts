/**
 * The run index (migration 0024): each passage's runs of letters, digits and marks (its words, folded as the
 * trigram index folds case: the pair index's runs, src/knowledge/phrase-index.ts) without positions, and the vocabulary
 * of every run of 2+ UTF-16 units indexed, under a trigram index of its own (no trigram for a run of 2). No
 * server-side imports: the index worker loads this.
 *
 * A substring query of one run (a word, or part of one) lies inside one run of any passage holding it, so such a
 * passage holds a word of the vocabulary that holds the query. The vocabulary is small beside the passages (10,027
 * words of 3+ characters in the 1,000,000 passages of `bench search`), so its trigram index finds those words in
 * well under a millisecond, and the passages holding any of them are the query's matches, newest first. The
 * trigram index of the passages cannot do this for a word whose parts are common: "separation" is in 326 passages,
 * its rarest trigrams in the 97,453 with "separat", and the ones that tell them apart in 80–99 % of all.
 */
import { indexFold } from './fold.js'
import { RUN } from './phrase-index.js'

/**
 * A query whose run is in more words than this goes to the trigram index (a 3-character fragment: "ion" is in
 * thousands of words); FTS5 starts a doclist per word of an OR (`npm run bench -- search`, fragments)
 */
export const MAX_RUN_TERMS = 256

/**
 * The one run of a query, when it has exactly one of at least 3 code points (folded as the index folds); `exact`
 * when the query is that run alone (its matches are then exactly the passages holding a word that holds it).
 */
export function queryRun(query: string): { run: string; exact: boolean } | undefined {
  const folded = indexFold(query)
  const runs = folded.match(RUN)
  if (runs === null || runs.length !== 1 || [...runs[0]].length < 3) return undefined
  return { run: runs[0], exact: runs[0] === folded }
}

/**
 * What a passage holding a query of several runs must hold, run by run: an inner run, or one with more of the
 * query on both sides, is a whole word (`whole`); the first may be the end of a longer word (`end`), the last the
 * start of one (`start`). Undefined for fewer than two runs.
 */
export function queryRuns(query: string): Array<{ run: string; is: 'whole' | 'end' | 'start' }> | undefined {
  const folded = indexFold(query)
  const runs = [...folded.matchAll(RUN)]
  if (runs.length < 2) return undefined
  return runs.map((m, i) => {
    const before = i > 0 || m.index > 0
    const after = i < runs.length - 1 || m.index + m[0].length < folded.length
    return { run: m[0], is: before && after ? 'whole' : before ? 'start' : 'end' }
  })
}

/** the vocabulary's MATCH for the words holding `run` (a trigram phrase: exact for 3+ code points) */
export const vocabularyMatch = (run: string) => `"${run}"`

/** the run index's MATCH for the passages holding any of `terms` (runs: no quote, no space in them) */
export const runsMatch = (terms: string[]) => terms.map((t) => `"${t}"`).join(' OR ')
