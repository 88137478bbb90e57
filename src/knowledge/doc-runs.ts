/**
 * Where a document's passages are in the word index: the runs of consecutive rowids holding them. Filters walk
 * inside a filter's documents' runs (filter-spans.ts); the words path counts and recognises the reader's own passages
 * by the runs of every document they read (reader-statistics.ts).
 */
import type Database from 'better-sqlite3'
import { readableWhere, type DocFilters } from './readers.js'

/** a document as its runs are worked out from */
export type RunDoc = { id: string; chunk_count: number; indexed_count: number; status: string; updated_at: string;
  lo: number | null; hi: number | null }

/** the readable documents of a filter with what their runs are worked out from (at most @most) */
export const runDocsSql = (filters: DocFilters) => `SELECT d.id, d.chunk_count, d.indexed_count, d.status,
    d.updated_at, d.first_passage_rowid AS lo, d.last_passage_rowid AS hi
  FROM knowledge_documents d
  WHERE ${readableWhere(filters)} LIMIT +@most`

export function createDocRuns(sqlite: Database.Database) {
  // a document's first and last passages hold its lowest and highest rowids: its passages are written in order
  // (src/knowledge/index-worker.ts), each rowid above every one before
  const docRowids = sqlite.prepare(`SELECT
    (SELECT rowid FROM knowledge_passages WHERE document_id = @id ORDER BY chunk_index LIMIT 1) AS lo,
    (SELECT rowid FROM knowledge_passages WHERE document_id = @id ORDER BY chunk_index DESC LIMIT 1) AS hi`)
  const docRowidList = sqlite.prepare(`SELECT rowid FROM knowledge_passages WHERE document_id = ? ORDER BY rowid`)
    .pluck()
  const kept = new Map<string, { at: string; runs: Array<[number, number]> }>()

  /**
   * The runs of consecutive rowids holding a document's passages, [lo, hi] each: one, its first and last, unless
   * passages of other documents were written between its slices (an upload during a background ingest), when its
   * rowids are read and split. An indexed document's are kept while it is unchanged (its `updated_at`): the
   * organization's version moves with every write to any of its documents (an ingest's progress, 40 times a
   * second), and what is made of the runs is then worked out again from these, reading only the documents that
   * changed.
   */
  return function runsOf(d: RunDoc): Array<[number, number]> {
    const known = kept.get(d.id)
    if (known && known.at === d.updated_at) return known.runs
    // its first and last rowids from its row (the index worker writes them): two look-ups in the passages' index per
    // document otherwise, each a page read on a cold cache; a row written before migration 0022 took effect (or by
    // a test) may not have them
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
      if (kept.size >= 100_000) kept.clear()
      kept.set(d.id, { at: d.updated_at, runs })
    }
    return runs
  }
}

export type DocRuns = ReturnType<typeof createDocRuns>

/** runs of rowids ([lo, hi] each) in ascending order, those that touch or overlap merged into one */
export function mergeRuns(runs: Array<[number, number]>): Array<[number, number]> {
  const merged: Array<[number, number]> = []
  for (const [lo, hi] of [...runs].sort((x, y) => x[0] - y[0])) {
    const last = merged[merged.length - 1]
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi)
    else merged.push([lo, hi])
  }
  return merged
}
