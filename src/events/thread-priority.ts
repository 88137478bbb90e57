import fs from 'node:fs'
import os from 'node:os'

/**
 * Lowers the calling thread's scheduling priority by `by` niceness steps (at most to 19), so that it runs on the
 * cores the other threads leave idle. Linux sets niceness per thread: the TID is the last part of
 * /proc/thread-self. Elsewhere, or if refused, the thread keeps the process's priority. Returns the new niceness,
 * or undefined when unchanged.
 */
export function lowerThreadPriority(by: number): number | undefined {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop())
    if (!Number.isInteger(tid) || tid <= 0) return undefined
    const niceness = Math.min(19, os.getPriority(tid) + by)
    os.setPriority(tid, niceness)
    return niceness
  } catch {
    return undefined
  }
}
