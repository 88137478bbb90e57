// The row timestamps, in a module of their own: the search worker's stores use them without loading the database
// module (its migrations, outbox and checkpointer)
let lastStamp = 0
/**
 * The current time as ISO 8601 with milliseconds, strictly increasing within the thread: rows written in the same
 * millisecond still sort in the order they were made ("newest first", chain order).
 */
export function nowIso(): string {
  lastStamp = Math.max(Date.now(), lastStamp + 1)
  return new Date(lastStamp).toISOString()
}
