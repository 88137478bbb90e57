import fs from 'node:fs'
import os from 'node:os'

/**
 * Sets the scheduling priority of `id` (a thread's TID or a process's PID) `by` niceness steps below this process's
 * (at most to 19), so that it runs on the cores the other threads leave idle. From the process's (its main thread's)
 * niceness: a thread started by a lowered thread inherits its niceness. Elsewhere, or if refused, `id` keeps its
 * priority. Returns the new niceness, or undefined when unchanged.
 */
export function lowerPriority(id: number, by: number): number | undefined {
  try {
    const niceness = Math.min(19, os.getPriority(process.pid) + by)
    os.setPriority(id, niceness)
    return niceness
  } catch {
    return undefined
  }
}

/** lowerPriority for the calling thread: Linux sets niceness per thread, the TID the last part of /proc/thread-self */
export function lowerThreadPriority(by: number): number | undefined {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop())
    return Number.isInteger(tid) && tid > 0 ? lowerPriority(tid, by) : undefined
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
