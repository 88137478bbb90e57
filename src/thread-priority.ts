import fs from 'node:fs'
import os from 'node:os'

/**
 * Sets the calling thread's scheduling priority `by` niceness steps below the process's (at most to 19), so that
 * it runs on the cores the other threads leave idle. Linux sets niceness per thread: the TID is the last part of
 * /proc/thread-self. Elsewhere, or if refused, the thread keeps the process's priority. Returns the new niceness,
 * or undefined when unchanged.
 */
export function lowerThreadPriority(by: number): number | undefined {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop())
    if (!Number.isInteger(tid) || tid <= 0) return undefined
    // from the process's (its main thread's) niceness: a thread started by a lowered thread inherits its niceness
    const niceness = Math.min(19, os.getPriority(process.pid) + by)
    os.setPriority(tid, niceness)
    return niceness
  } catch {
    return undefined
  }
}

/**
 * How many niceness steps below the process the background indexing runs: the index and trigram workers and the
 * extraction processes. Their work can wait; requests, searches and the webhooks' fan-out should not wait for it.
 * The figures, with and without: docs/design/knowledge-search.md#where-the-code-is (`npm run bench --
 * tenant-fairness`).
 */
export const BACKGROUND_NICENESS = 4
