import type Database from 'better-sqlite3'

/** Tables a cache depends on, each with the columns whose update matters (undefined: any column). */
export type WatchedTables = Record<string, string[] | undefined>

export interface TableCache {
  /**
   * The value kept under `key`, else `load()`'s (kept unless undefined). Never kept while the connection is
   * inside a transaction: what it reads there may still be rolled back.
   */
  get<T>(key: string, load: () => T | undefined): T | undefined
  /** forget everything (done by itself whenever a watched table changes) */
  clear(): void
  readonly size: number
}

export interface TableCacheOptions {
  /** names the cache's function and triggers: letters, digits and _ */
  name: string
  /** the tables its values are read from */
  tables: WatchedTables
  /** entries kept at most; past it the cache starts over (default 10,000) */
  maxEntries?: number
  /** how often writes by other connections are looked for, in ms (default 1000) */
  externalCheckMs?: number
}

let instances = 0

/**
 * Values read from the database on hot paths (credentials, users and memberships on every request; key
 * usage), kept in memory so such a request costs no database read. Correct by construction, not by expiry:
 *  - every write through this connection to a watched table (whatever code makes it, an API route, a
 *    cascade, a test editing rows) runs a temporary trigger that empties the cache in the same statement;
 *  - writes by other connections (the sqlite3 shell, another process) change `PRAGMA data_version`, which is
 *    read at most once per `externalCheckMs`: such edits take effect within that time.
 * The triggers are TEMP: they live only in this connection and are not part of the schema, so other programs
 * opening the database never see them or the function they call.
 */
export function createTableCache(sqlite: Database.Database, options: TableCacheOptions): TableCache {
  if (!/^\w+$/.test(options.name)) throw new Error(`invalid cache name: ${options.name}`)
  const maxEntries = options.maxEntries ?? 10_000
  const externalCheckMs = options.externalCheckMs ?? 1000
  const entries = new Map<string, unknown>()

  // a function and triggers of this instance's own (two caches never share, nor replace, each other's)
  const tag = `cairn_${options.name}_${++instances}`
  const fn = `${tag}_changed`
  sqlite.function(fn, { deterministic: false }, () => {
    entries.clear()
    return null
  })
  for (const [table, columns] of Object.entries(options.tables)) {
    const update = columns ? `UPDATE OF ${columns.join(', ')}` : 'UPDATE'
    for (const [event, name] of [['INSERT', 'insert'], [update, 'update'], ['DELETE', 'delete']] as const) {
      sqlite.exec(`CREATE TEMP TRIGGER ${tag}_${table}_${name} AFTER ${event} ON main.${table} BEGIN
        SELECT ${fn}(); END`)
    }
  }

  // a pragma, read on hot paths: no Drizzle form
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck()
  let version = dataVersion.get()
  let checkedAt = Date.now()

  function noticeExternalWrites() {
    const now = Date.now()
    if (now - checkedAt < externalCheckMs) return
    checkedAt = now
    const current = dataVersion.get()
    if (current !== version) {
      version = current
      entries.clear()
    }
  }

  return {
    get<T>(key: string, load: () => T | undefined): T | undefined {
      if (sqlite.inTransaction) return load()
      noticeExternalWrites()
      const hit = entries.get(key)
      if (hit !== undefined) return hit as T
      const value = load()
      if (value !== undefined) {
        if (entries.size >= maxEntries) entries.clear()
        entries.set(key, value)
      }
      return value
    },
    clear() {
      entries.clear()
    },
    get size() {
      return entries.size
    }
  }
}
