import fs from 'node:fs'
import type { FastifyBaseLogger } from 'fastify'

/**
 * Whether `err` says that storage ran out: SQLite's SQLITE_FULL, the system's ENOSPC or EDQUOT (a quota of the
 * file system). Errors that crossed a thread boundary keep only their message, so the messages count too.
 * Running out of space is a state, not a crash: requests answer 507 (src/http/errors.ts), background work waits
 * (diskFullPause) and tries again.
 */
export function isDiskFull(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const { code, message } = err as { code?: unknown; message?: unknown }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return true
  return typeof message === 'string' && /database or disk is full|\bENOSPC\b|no space left on device/i.test(message)
}

/** below this, a file system counts as full */
const LOW_SPACE_BYTES = 1024 * 1024

/**
 * Whether the file system holding `dir` is (all but) full: under 1 MB free, or no free inode. For errors that do not
 * say so themselves: a migration that finds the disk full is rolled back by SQLite, and the migrator's own ROLLBACK
 * then fails and takes the place of the SQLITE_FULL.
 */
export function noSpaceLeft(dir: string): boolean {
  try {
    const s = fs.statfsSync(dir)
    return s.bavail * s.bsize < LOW_SPACE_BYTES || (s.files > 0 && s.ffree === 0)
  } catch {
    return false
  }
}

/** the first wait after a write found the disk full, doubled at each failure that follows */
const FIRST_WAIT_MS = 1000
const LONGEST_WAIT_MS = 60_000

export interface DiskFullPause {
  /** ms left before the work may try to write again (0: go on) */
  left(): number
  /** a write failed for lack of space: the work waits, longer each time; returns the wait in ms */
  failed(err: unknown): number
  /** a write went through: the work is no longer waiting */
  succeeded(): void
  readonly paused: boolean
}

/**
 * The waiting of one piece of background work (the job queue, the developer log's flush) while the disk is full:
 * one warning when it starts waiting and one line when it resumes, not one per attempt.
 */
export function diskFullPause(log: FastifyBaseLogger, what: string,
  options: { firstWaitMs?: number; longestWaitMs?: number } = {}): DiskFullPause {
  const first = options.firstWaitMs ?? FIRST_WAIT_MS
  const longest = options.longestWaitMs ?? LONGEST_WAIT_MS
  let failures = 0
  let until = 0
  return {
    left: () => Math.max(0, until - Date.now()),
    failed(err) {
      // failures during the same wait (jobs side by side) do not lengthen it
      if (Date.now() < until) return until - Date.now()
      const wait = Math.min(first * 2 ** failures, longest)
      if (failures === 0) {
        log.warn({ error: (err as Error)?.message, retryInMs: wait }, `disk full: ${what} paused until space is freed`)
      }
      failures++
      until = Date.now() + wait
      return wait
    },
    succeeded() {
      if (failures === 0) return
      log.info({ attempts: failures }, `disk space available again: ${what} resumed`)
      failures = 0
      until = 0
    },
    get paused() { return failures > 0 }
  }
}
