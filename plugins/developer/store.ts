import type Database from 'better-sqlite3'
import { and, eq, gte, sql } from 'drizzle-orm'
import type { Db } from '../../src/db/index.js'
import { createTableCache } from '../../src/db/table-cache.js'
import { apiKeys } from '../../schema/tables/api-keys.js'
import { keyUsageDaily } from '../../schema/tables/developer.js'

const DAY_MS = 86_400_000

export function createUsageStore(db: Db, sqlite: Database.Database) {
  // one statement: the key must be the user's (no row otherwise), with its per-day counts if any
  const perDay = db.select({ day: keyUsageDaily.day, count: keyUsageDaily.count }).from(apiKeys)
    .leftJoin(keyUsageDaily,
      and(eq(keyUsageDaily.keyId, apiKeys.id), gte(keyUsageDaily.day, sql.placeholder('firstDay'))))
    .where(and(eq(apiKeys.id, sql.placeholder('keyId')), eq(apiKeys.userId, sql.placeholder('userId'))))
    .prepare()

  // dashboards poll usage: the counts are kept in memory until the next batch of the request log lands
  const cache = createTableCache(sqlite,
    { name: 'usage', tables: { key_usage_daily: undefined, api_keys: ['id', 'user_id'] } })

  // the labels (YYYY-MM-DD) of the last n days, oldest first: made once per day and length, not per request
  let labelsDay = -1
  const labelsByLength = new Map<number, string[]>()
  function dayLabels(today: number, days: number): string[] {
    if (today !== labelsDay) { labelsDay = today; labelsByLength.clear() }
    let labels = labelsByLength.get(days)
    if (!labels) {
      labels = Array.from({ length: days },
        (_, i) => new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10))
      labelsByLength.set(days, labels)
    }
    return labels
  }

  return {
    /** Requests per UTC day for the last `days` days, today last; undefined when the key is not the user's. */
    sparkline(userId: string, keyId: string, days: number, pending: Map<string, number>,
      now = Date.now()): number[] | undefined {
      const labels = dayLabels(Math.floor(now / DAY_MS) * DAY_MS, days)
      const firstDay = labels[0]
      const counts = cache.get(`${userId}\0${keyId}\0${firstDay}`, () => {
        const rows = perDay.all({ firstDay, keyId, userId })
        return rows.length === 0 ? undefined
          : new Map(rows.filter((r) => r.day !== null).map((r) => [r.day!, r.count!]))
      })
      if (!counts) return undefined
      return labels.map((day) => (counts.get(day) ?? 0) + (pending.get(day) ?? 0))
    }
  }
}
