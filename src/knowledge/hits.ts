/**
 * What every search path hands on: a passage found, with its score, and the search's time budget; and what a
 * returned hit is told of where its passage is.
 */
import type Database from 'better-sqlite3'
import type { HitRow } from './index-walk.js'
import { readHeadingPath } from '../ingest/outline.js'

/** a candidate; its snippet is made only if it is returned */
export interface Scored { row: HitRow; score: number; snippet: () => string }

/**
 * A search's time budget: `expired` is asked between steps (and every few ms inside the long ones); a search that
 * finds it spent stops there, answers what it found, and sets `cut` (the answer is then partial).
 */
export interface SearchBudget { expired(): boolean; cut: boolean }

/** thrown inside a step when the budget is spent: the step then adds nothing */
export class BudgetSpent extends Error {}

/**
 * The heading paths of passages, by passage id: one look-up for the hits a search returns (at most 100), instead of
 * a column more in every candidate row each search path reads. A passage without one (no headings above it, or its
 * document not yet reached by the back-fill: src/knowledge/outline-backfill.ts) has the empty path.
 */
export function headingPaths(sqlite: Database.Database) {
  const read = sqlite.prepare(`SELECT id, heading_path FROM knowledge_passages
    WHERE id IN (SELECT value FROM json_each(?)) AND heading_path IS NOT NULL`)
  return (ids: string[]): Map<string, string[]> => {
    if (ids.length === 0) return new Map()
    const rows = read.all(JSON.stringify(ids)) as Array<{ id: string; heading_path: string }>
    return new Map(rows.map((r) => [r.id, readHeadingPath(r.heading_path)]))
  }
}
