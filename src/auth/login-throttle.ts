/**
 * Per-account login throttle, beside the per-address rate limit. Two counters of consecutive failures, each
 * forgotten after `forgetMs` without a failure and reset by a success:
 * - per account and client address: from the 5th failure on, a lock of 1 s doubling with each further
 *   failure, at most 5 min — a guesser from one place slows to a crawl;
 * - per account from anywhere: from the 20th failure on, the account is under lock for a period of 1 s doubling
 *   with each failure that starts one, at most 60 s. During a period, each address may make one attempt: an
 *   address that has failed on the account since the period began waits for its end. So guesses spread over many
 *   addresses are slowed to one per address and period, yet no attacker can keep the real owner out: from an
 *   address that has not failed meanwhile the owner may try at once, and after a failure waits at most until the
 *   period ends, a minute at most, however long the attack goes on (a lock shared by all would be taken again by
 *   the attacker the moment it ends).
 * Attempts refused during a lock are not counted, so they do not lengthen it. Unknown emails are throttled the
 * same way, so a lock says nothing about whether an account exists. The client address is the one
 * CAIRN_TRUST_PROXY lets a reverse proxy name: without it, every client behind the proxy shares its address.
 */
import { createHmac } from 'node:crypto'
import type Database from 'better-sqlite3'

export interface ThrottleRule { after: number; maxLockMs: number }

export interface ThrottleEntry { failures: number; lockedUntil: number; lastFailure: number }
/** where the counters live: in memory (tests, the default) or in SQLite (sqliteThrottleStore: kept across restarts) */
export interface ThrottleStore {
  get(key: string): ThrottleEntry | undefined
  set(key: string, entry: ThrottleEntry): void
  delete(key: string): void
  /** forgets the entries whose last failure is before `before` and whose lock has ended by `now` */
  prune(before: number, now: number): void
}
export interface LoginThrottleOptions {
  perAddress?: ThrottleRule
  perAccount?: ThrottleRule
  forgetMs?: number
  /** entries kept at most in memory (oldest dropped first) */
  maxEntries?: number
  now?: () => number
  /** default: in memory, up to maxEntries */
  store?: ThrottleStore
}

export const LOGIN_THROTTLE_DEFAULTS = {
  perAddress: { after: 5, maxLockMs: 5 * 60_000 },
  perAccount: { after: 20, maxLockMs: 60_000 },
  forgetMs: 15 * 60_000,
  maxEntries: 100_000
}

/** counters in memory, the oldest dropped past `maxEntries` (a restart forgets them) */
export function memoryThrottleStore(maxEntries = LOGIN_THROTTLE_DEFAULTS.maxEntries): ThrottleStore {
  const entries = new Map<string, ThrottleEntry>()
  return {
    get: (key) => entries.get(key),
    set(key, entry) {
      entries.delete(key)
      entries.set(key, entry)
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
    },
    delete: (key) => { entries.delete(key) },
    prune(before, now) {
      for (const [key, e] of entries) if (e.lastFailure < before && e.lockedUntil <= now) entries.delete(key)
    }
  }
}

/**
 * Counters in the `login_failures` table (migration 0021), so a restart does not hand an attacker fresh guesses.
 * Keys are stored as HMAC-SHA-256 digests under `secret` (a file of the data dir): the table names no account or
 * address, and a copy of the database alone cannot tell them (a plain hash of a known email could be recomputed,
 * and an IPv4 address found from it in 2^32 tries). At most `maxEntries` rows, the oldest pruned first.
 */
export function sqliteThrottleStore(sqlite: Database.Database, secret: string,
  maxEntries = LOGIN_THROTTLE_DEFAULTS.maxEntries): ThrottleStore {
  const digest = (key: string) => createHmac('sha256', secret).update(key).digest('hex')
  const get = sqlite.prepare<[string], { failures: number; lockedUntil: number; lastFailure: number }>(
    `SELECT failures, locked_until AS lockedUntil, last_failure AS lastFailure FROM login_failures WHERE key = ?`)
  const set = sqlite.prepare(`INSERT INTO login_failures (key, failures, locked_until, last_failure)
    VALUES (@key, @failures, @lockedUntil, @lastFailure) ON CONFLICT (key) DO UPDATE SET failures = excluded.failures,
    locked_until = excluded.locked_until, last_failure = excluded.last_failure`)
  const remove = sqlite.prepare(`DELETE FROM login_failures WHERE key = ?`)
  const prune = sqlite.prepare(`DELETE FROM login_failures WHERE last_failure < ? AND locked_until <= ?`)
  const trim = sqlite.prepare(`DELETE FROM login_failures WHERE key IN
    (SELECT key FROM login_failures ORDER BY last_failure DESC LIMIT -1 OFFSET +?)`)
  return {
    get: (key) => get.get(digest(key)),
    set: (key, e) => { set.run({ key: digest(key), ...e }) },
    delete: (key) => { remove.run(digest(key)) },
    prune: (before, now) => {
      prune.run(before, now)
      trim.run(maxEntries)
    }
  }
}

/** the store is pruned of forgotten counters at most this often */
const PRUNE_EVERY_MS = 60_000

export function createLoginThrottle(options: LoginThrottleOptions = {}) {
  const o = { ...LOGIN_THROTTLE_DEFAULTS, ...options }
  const now = options.now ?? Date.now
  const entries = options.store ?? memoryThrottleStore(o.maxEntries)
  let prunedAt = -Infinity

  const current = (key: string, t: number) => {
    const e = entries.get(key)
    if (e && t - e.lastFailure > o.forgetMs && e.lockedUntil <= t) { entries.delete(key); return undefined }
    return e
  }
  const fail = (key: string, rule: ThrottleRule, t: number) => {
    const e = current(key, t) ?? { failures: 0, lockedUntil: 0, lastFailure: t }
    e.failures++
    e.lastFailure = t
    if (e.failures >= rule.after) {
      e.lockedUntil = t + Math.min(rule.maxLockMs, 1000 * 2 ** Math.min(30, e.failures - rule.after))
    }
    entries.set(key, e)
  }
  /**
   * the account's counter, its lock period (`lastFailure` the period's start, `lockedUntil` its end) and the pair's
   * counter
   */
  const keys = (email: string, address: string) =>
    [`a\0${email}`, `l\0${email}`, `p\0${email}\0${address}`] as const

  return {
    /** milliseconds until a login for this account from this address may be tried again; 0: now */
    retryAfterMs(email: string, address: string): number {
      const t = now()
      const [, periodKey, pairKey] = keys(email, address)
      const pair = current(pairKey, t)
      let wait = (pair?.lockedUntil ?? 0) - t
      // the account's period holds back only the addresses that have failed since it began
      const period = current(periodKey, t)
      if (period && pair && pair.lastFailure >= period.lastFailure) wait = Math.max(wait, period.lockedUntil - t)
      return Math.max(0, wait)
    },
    failed(email: string, address: string) {
      const t = now()
      const [accountKey, periodKey, pairKey] = keys(email, address)
      const account = current(accountKey, t) ?? { failures: 0, lockedUntil: 0, lastFailure: t }
      account.failures++
      account.lastFailure = t
      entries.set(accountKey, account)
      // a failure during a period counts towards the next one's length, and does not make this one longer
      const rule = o.perAccount
      if (account.failures >= rule.after && !((current(periodKey, t)?.lockedUntil ?? 0) > t)) {
        const length = Math.min(rule.maxLockMs, 1000 * 2 ** Math.min(30, account.failures - rule.after))
        entries.set(periodKey, { failures: account.failures, lockedUntil: t + length, lastFailure: t })
      }
      fail(pairKey, o.perAddress, t)
      // counters of accounts never tried again would stay: forgotten ones go now and then
      if (t - prunedAt > PRUNE_EVERY_MS) {
        prunedAt = t
        entries.prune(t - o.forgetMs, t)
      }
    },
    succeeded(email: string, address: string) {
      for (const key of keys(email, address)) entries.delete(key)
    }
  }
}
export type LoginThrottle = ReturnType<typeof createLoginThrottle>
