import type Database from 'better-sqlite3'

const DAY_MS = 86_400_000

export function createUsageStore(sqlite: Database.Database) {
  // one statement: the key must be the user's (no row otherwise), with its per-day counts if any
  const perDay = sqlite.prepare(
    `SELECT k.id, u.day, u.count FROM api_keys k
     LEFT JOIN key_usage_daily u ON u.key_id = k.id AND u.day >= ?
     WHERE k.id = ? AND k.user_id = ?`
  )

  return {
    /** Requests per UTC day for the last `days` days, today last; undefined when the key is not the user's. */
    sparkline(userId: string, keyId: string, days: number, pending: Map<string, number>, now = Date.now()): number[] | undefined {
      const today = Math.floor(now / DAY_MS) * DAY_MS
      const firstDay = new Date(today - (days - 1) * DAY_MS).toISOString().slice(0, 10)
      const rows = perDay.all(firstDay, keyId, userId) as Array<{ day: string | null; count: number | null }>
      if (rows.length === 0) return undefined
      const counts = new Map(rows.filter((r) => r.day !== null).map((r) => [r.day!, r.count!]))
      return Array.from({ length: days }, (_, i) => {
        const day = new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10)
        return (counts.get(day) ?? 0) + (pending.get(day) ?? 0)
      })
    }
  }
}
