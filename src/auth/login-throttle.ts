/**
 * Per-account login throttle, beside the per-IP rate limit (issue 13). Two counters of consecutive
 * failures, each forgotten after `forgetMs` without a failure and reset by a success:
 * - per account and client address: from the 5th failure on, a lock of 1 s doubling with each further
 *   failure, at most 5 min — a guesser from one place slows to a crawl;
 * - per account from anywhere: from the 20th failure on, a lock of 1 s doubling, at most 60 s — spreading the
 *   guesses over many addresses does not help either, yet the real owner (from their own address) waits at most
 *   a minute, however long the attack goes on.
 * Attempts during a lock are refused without counting, so they do not lengthen it. Unknown emails are
 * throttled the same way, so a lock says nothing about whether an account exists.
 */
export interface ThrottleRule { after: number; maxLockMs: number }
export interface LoginThrottleOptions {
  perAddress?: ThrottleRule
  perAccount?: ThrottleRule
  forgetMs?: number
  /** entries kept at most (oldest dropped first) */
  maxEntries?: number
  now?: () => number
}

export const LOGIN_THROTTLE_DEFAULTS = {
  perAddress: { after: 5, maxLockMs: 5 * 60_000 },
  perAccount: { after: 20, maxLockMs: 60_000 },
  forgetMs: 15 * 60_000,
  maxEntries: 100_000
}

interface Entry { failures: number; lockedUntil: number; lastFailure: number }

export function createLoginThrottle(options: LoginThrottleOptions = {}) {
  const o = { ...LOGIN_THROTTLE_DEFAULTS, ...options }
  const now = options.now ?? Date.now
  const entries = new Map<string, Entry>()

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
    entries.delete(key)
    entries.set(key, e)
    if (entries.size > o.maxEntries) entries.delete(entries.keys().next().value!)
  }
  const keys = (email: string, address: string) => [`a\0${email}`, `p\0${email}\0${address}`] as const

  return {
    /** milliseconds until a login for this account from this address may be tried again; 0: now */
    retryAfterMs(email: string, address: string): number {
      const t = now()
      let wait = 0
      for (const key of keys(email, address)) wait = Math.max(wait, (current(key, t)?.lockedUntil ?? 0) - t)
      return wait
    },
    failed(email: string, address: string) {
      const t = now()
      const [account, pair] = keys(email, address)
      fail(account, o.perAccount, t)
      fail(pair, o.perAddress, t)
    },
    succeeded(email: string, address: string) {
      for (const key of keys(email, address)) entries.delete(key)
    }
  }
}
export type LoginThrottle = ReturnType<typeof createLoginThrottle>
