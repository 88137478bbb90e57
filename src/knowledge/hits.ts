/** What every search path hands on: a passage found, with its score, and the search's time budget. */
import type { HitRow } from './index-walk.js'

/** a candidate; its snippet is made only if it is returned */
export interface Scored { row: HitRow; score: number; snippet: () => string }

/**
 * A search's time budget: `expired` is asked between steps (and every few ms inside the long ones); a search that
 * finds it spent stops there, answers what it found, and sets `cut` (the answer is then partial).
 */
export interface SearchBudget { expired(): boolean; cut: boolean }

/** thrown inside a step when the budget is spent: the step then adds nothing */
export class BudgetSpent extends Error {}
