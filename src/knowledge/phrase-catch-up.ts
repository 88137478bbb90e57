/**
 * The catch-up and rebuild of the pair index (src/knowledge/phrase-index.ts) and the run index with its vocabulary
 * (src/knowledge/word-vocabulary.ts): one mark (`knowledge_pairs_state.indexed_through`) for both, written by the
 * index worker. No server-side imports: the index worker loads this.
 */
import type Database from 'better-sqlite3'
import { passageTokens, PAIRS_VERSION } from './phrase-index.js'

/**
 * Pair and run tokens made by another Node.js (its Unicode version splits the words), SQLite (its case folding) or
 * version of the pair tokens might not match this one's queries: the indexes are emptied (and the vocabulary, which
 * sheds the words of deleted passages) for the catch-up to fill them again. Run at start.
 */
export function remakeIfMadeOtherwise(sqlite: Database.Database) {
  const madeWith = `pairs ${PAIRS_VERSION}, unicode ${process.versions.unicode}, sqlite ${sqlite
    .prepare('SELECT sqlite_version()').pluck().get() as string}`
  if (sqlite.prepare(`SELECT made_with FROM knowledge_pairs_state`).pluck().get() !== madeWith) {
    sqlite.transaction(() => {
      sqlite.exec(`INSERT INTO knowledge_passages_pairs (knowledge_passages_pairs) VALUES ('delete-all');
        INSERT INTO knowledge_passages_runs (knowledge_passages_runs) VALUES ('delete-all');
        INSERT INTO knowledge_run_terms_fts (knowledge_run_terms_fts) VALUES ('delete-all');
        DELETE FROM knowledge_run_terms`)
      sqlite.prepare(`UPDATE knowledge_pairs_state SET indexed_through = 0, made_with = ?`).run(madeWith)
    })()
  }
}

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
 * The catch-up of the pair and run indexes (phrase-index.ts, this file), which share a mark (`knowledge_pairs_state`),
 * for the index worker: one write transaction a call, of the next passages in rowid order, each with its pair tokens,
 * its runs and its new words, until `stop()` (asked after each passage: a long passage takes a while to index, and a
 * server write that arrives meanwhile waits for the transaction). Answers how many passages it indexed: 0 once none is
 * left.
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
          // a run of one UTF-16 unit is not kept (phrase-index.ts asks none); one of 2 is, for the words a query's last
          // run begins and the ends a first run of one character stands for (phrase-index.ts); under the trigram index
          // too, where it gives no trigram (the index's rows are its content table's, as its integrity check wants)
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
