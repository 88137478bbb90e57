import type Database from 'better-sqlite3'

export interface ListingCache {
  /**
   * The answer kept under `key` for a reader of organization `customerId` if no document of the organization
   * changed since it was rendered; else `render()`'s, kept. The key must name everything else the answer
   * depends on (reader, workspaces, filters, page).
   */
  page(customerId: string, key: string, render: () => string): Buffer
  /**
   * Another connection of this process has written documents (the index worker's task ended): the next
   * request of every organization reads its version back instead of waiting out `externalCheckMs`.
   */
  recheck(): void
  /** pages kept now */
  readonly size: number
}

export interface ListingCacheOptions {
  /** bytes of answers kept at most; past it the cache starts over (default 8 MiB) */
  maxBytes?: number
  /** how often an organization's version is read back for writes by other connections, in ms (default 50) */
  externalCheckMs?: number
  /** the clock (tests) */
  now?: () => number
}

let instances = 0

/**
 * Rendered knowledge listing pages, kept as the bytes sent. Correct by construction, not by expiry: migration
 * 0017's triggers raise an organization's version (`knowledge_listing_versions`) in the same statement as any
 * insert, update or delete of its documents or their tags, whichever connection or thread writes.
 *  - A write through this connection (routes, the indexer, a repair by hand) also runs a temporary trigger on
 *    that table which renews the organization's pages in the same statement: the next request renders afresh.
 *  - A write by another connection (a worker thread's, another process's) is seen when the organization's
 *    version is read back, at most `externalCheckMs` after the previous read. Reading it on every request would
 *    cost a read transaction, a large share of a bare Fastify request, for writes that are rare and never made on
 *    a request's behalf.
 * Each page is kept with the organization's generation taken before it was rendered, and served only while
 * that is still the generation. Membership and credentials are not in it: they are checked before (auth
 * cache), and the reader's workspaces are part of the key.
 */
export function createListingCache(sqlite: Database.Database, options: ListingCacheOptions = {}): ListingCache {
  const maxBytes = options.maxBytes ?? 8 << 20
  const externalCheckMs = options.externalCheckMs ?? 50
  const now = options.now ?? Date.now
  // raw: a table of migration 0017 written by triggers only, read back once per organization and interval
  const versionStmt = sqlite.prepare('SELECT version FROM knowledge_listing_versions WHERE customer_id = ?').pluck()
  const versionOf = (customerId: string) => (versionStmt.get(customerId) as number | undefined) ?? 0

  /** per organization: a local generation, raised on every change seen, and the stored version last read */
  const orgs = new Map<string, { generation: number; version: number; checkedAt: number }>()
  const entries = new Map<string, { generation: number; body: Buffer }>()
  let bytes = 0

  const fn = `cairn_listing_${++instances}_changed`
  sqlite.function(fn, { deterministic: false }, (customerId: unknown) => {
    const org = orgs.get(customerId as string)
    // a local generation, not the stored version: a change rolled back afterwards costs a render, never a stale page
    if (org) org.generation++
    return null
  })
  for (const event of ['INSERT', 'UPDATE']) {
    sqlite.exec(`CREATE TEMP TRIGGER cairn_listing_${instances}_${event.toLowerCase()} AFTER ${event}
      ON main.knowledge_listing_versions BEGIN SELECT ${fn}(NEW.customer_id); END`)
  }

  function generationOf(customerId: string): number {
    const t = now()
    let org = orgs.get(customerId)
    if (!org) {
      org = { generation: 0, version: versionOf(customerId), checkedAt: t }
      orgs.set(customerId, org)
    } else if (t - org.checkedAt >= externalCheckMs) {
      org.checkedAt = t
      const version = versionOf(customerId)
      if (version !== org.version) {
        org.version = version
        org.generation++
      }
    }
    return org.generation
  }

  return {
    page(customerId, key, render) {
      // inside a transaction the rows read may still be rolled back: never kept
      if (sqlite.inTransaction) return Buffer.from(render())
      const generation = generationOf(customerId)
      const full = `${customerId}\0${key}`
      const hit = entries.get(full)
      if (hit && hit.generation === generation) return hit.body
      const body = Buffer.from(render())
      if (hit) bytes -= hit.body.length
      if (bytes + body.length > maxBytes) {
        entries.clear()
        bytes = 0
      }
      entries.set(full, { generation, body })
      bytes += body.length
      return body
    },
    recheck() {
      for (const org of orgs.values()) org.checkedAt = -Infinity
    },
    get size() {
      return entries.size
    }
  }
}
