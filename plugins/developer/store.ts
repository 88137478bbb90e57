import type Database from 'better-sqlite3'

const DAY_MS = 86_400_000

export function createUsageStore(sqlite: Database.Database) {
  const ownedKey = sqlite.prepare(`SELECT id FROM api_keys WHERE id = ? AND user_id = ?`)
  const perDay = sqlite.prepare(`SELECT day, count FROM key_usage_daily WHERE key_id = ? AND day >= ? ORDER BY day`)

  return {
    /** Requests per UTC day for the last `days` days, today last; undefined when the key is not the user's. */
    sparkline(userId: string, keyId: string, days: number, now = Date.now()): number[] | undefined {
      if (!ownedKey.get(keyId, userId)) return undefined
      const today = Math.floor(now / DAY_MS) * DAY_MS
      const firstDay = new Date(today - (days - 1) * DAY_MS).toISOString().slice(0, 10)
      const counts = new Map((perDay.all(keyId, firstDay) as Array<{ day: string; count: number }>).map((r) => [r.day, r.count]))
      return Array.from({ length: days }, (_, i) =>
        counts.get(new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10)) ?? 0)
    }
  }
}
