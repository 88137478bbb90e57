/**
 * The run index (migration 0024): each passage's runs of letters, digits and marks (its words, folded as the
 * trigram index folds case: the pair index's runs, src/knowledge/pairs.ts) without positions, and the vocabulary
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
import type Database from 'better-sqlite3'
import { indexFold } from './fold.js'
import { passageTokens, RUN } from './pairs.js'

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

/**
 * The characters of the vocabulary words a catch-up remembers as there (each a copy: a word of 13+ characters matched
 * in a passage is a slice of the whole passage's text, which it would keep alive): past this many it starts over, the
 * words every passage has coming back first. Longer words are not remembered (looked up each time).
 */
const KNOWN_CHARS = 1_000_000
const KNOWN_WORD_MAX = 64

/** passages read at a time by the pair index's catch-up */
const PAIRS_BATCH = 64

/**
 * The catch-up of the pair and run indexes (pairs.ts, this file), which share a mark (`knowledge_pairs_state`), for
 * the index worker: one write transaction a call, of the next passages in rowid order, each with its pair tokens, its
 * runs and its new words, until `stop()` (asked after each passage: a long passage takes a while to index, and a
 * server write that arrives meanwhile waits for the transaction). Answers how many passages it indexed: 0 once none
 * is left.
 *
 * A passage's runs not in the vocabulary yet are added in the same transaction (a passage in the index always has its
 * words there). The words it has seen committed are remembered (at most KNOWN_CHARS characters): looking each run up in
 * the table took two thirds of the catch-up's time. Only the index worker writes the vocabulary, and it is emptied
 * only when tokens are made anew (`made_with`, at a start): the catch-up forgets what it remembered when that
 * changes.
 */
export function pairCatchUp(sqlite: Database.Database) {
  const state = sqlite.prepare(`SELECT indexed_through AS through, made_with AS madeWith FROM knowledge_pairs_state`)
  const setThrough = sqlite.prepare(`UPDATE knowledge_pairs_state SET indexed_through = ?`)
  const insertPairs = sqlite.prepare(`INSERT INTO knowledge_passages_pairs (rowid, near, far, head)
    VALUES (?, ?, ?, ?)`)
  const unpaired = sqlite.prepare(`SELECT rowid, text FROM knowledge_passages WHERE rowid > ? ORDER BY rowid
    LIMIT ${PAIRS_BATCH}`)
  const insertRuns = sqlite.prepare(`INSERT INTO knowledge_passages_runs (rowid, runs) VALUES (?, ?)`)
  const addTerm = sqlite.prepare(`INSERT INTO knowledge_run_terms (term) VALUES (?) ON CONFLICT DO NOTHING
    RETURNING id`).pluck()
  const indexTerm = sqlite.prepare(`INSERT INTO knowledge_run_terms_fts (rowid, term) VALUES (?, ?)`)
  // in the vocabulary, committed (`chars`: their characters), while its tokens are made the same way (`madeWith`: a
  // process of another version empties the vocabulary when it starts)
  let known = new Set<string>()
  let chars = 0
  let madeWith: string | undefined
  // looked up or added in this transaction (known once it commits)
  const seen = new Set<string>()

  const slice = sqlite.transaction((stop: () => boolean): number => {
    const now = state.get() as { through: number; madeWith: string }
    if (now.madeWith !== madeWith) {
      known = new Set()
      chars = 0
      madeWith = now.madeWith
    }
    let mark = now.through
    let added = 0
    for (let more = true; more;) {
      const rows = unpaired.all(mark) as Array<{ rowid: number; text: string }>
      more = rows.length === PAIRS_BATCH
      for (const row of rows) {
        const tokens = passageTokens(row.text)
        insertPairs.run(row.rowid, tokens.near, tokens.far, tokens.head)
        insertRuns.run(row.rowid, tokens.runs.join(' '))
        for (const run of tokens.runs) {
          // a run of one UTF-16 unit is not kept (pairs.ts asks none); one of 2 is, for the words a query's last run
          // begins and the ends a first run of one character stands for (pairs.ts); under the trigram index too,
          // where it gives no trigram (the index's rows are its content table's, as its integrity check wants)
          if (run.length < 2 || known.has(run) || seen.has(run)) continue
          seen.add(run)
          const id = addTerm.get(run) as number | undefined
          if (id !== undefined) indexTerm.run(id, run)
        }
        mark = row.rowid
        added++
        if (stop()) {
          more = false
          break
        }
      }
    }
    if (added > 0) setThrough.run(mark)
    return added
  }).immediate

  return function catchUp(stop: () => boolean): number {
    // (inside another transaction its commit would not be the one that keeps the words)
    if (sqlite.inTransaction) throw new Error('the pair catch-up runs in a transaction of its own')
    try {
      const added = slice(stop)
      for (const word of seen) {
        if (word.length > KNOWN_WORD_MAX) continue
        if (chars + word.length > KNOWN_CHARS) {
          known = new Set()
          chars = 0
        }
        // a copy of its own, not a slice of the passage's text
        known.add((' ' + word).slice(1))
        chars += word.length
      }
      return added
    } finally {
      seen.clear()
    }
  }
}
