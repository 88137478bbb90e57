import type Database from 'better-sqlite3'

export interface ListingCache {
  /**
   * The answer kept under `key` for a reader of organization `customerId`, if it was rendered at the
   * organization's current listing version; else `render()`'s, kept. The key must name everything else the
   * answer depends on (reader, workspaces, filters, page).
   */
  page(customerId: string, key: string, render: () => string): string
  /** pages kept now */
  readonly size: number
}

export interface ListingCacheOptions {
  /** characters of answers kept at most; past it the cache starts over (default 8 MiB) */
  maxChars?: number
}

/**
 * Rendered knowledge listing pages. Correct by construction, not by expiry: migration 0017's triggers raise an
 * organization's version (`knowledge_listing_versions`) in the same statement as any insert, update or delete of
 * its documents or their tags, whichever connection or thread writes it (the indexer's status and progress
 * included). Each answer is kept with the version read before it was rendered, and served only while that is
 * still the version: a write committed between the two reads makes the entry stale at once, never the reverse.
 * Membership and credentials are not in the version: they are checked before (auth cache), and the reader's
 * workspaces are part of the key.
 */
export function createListingCache(sqlite: Database.Database, options: ListingCacheOptions = {}): ListingCache {
  const maxChars = options.maxChars ?? 8 << 20
  // raw: a table of migration 0017 written by triggers only, read on every listing (one pluck by primary key)
  const versionOf = sqlite.prepare('SELECT version FROM knowledge_listing_versions WHERE customer_id = ?').pluck()
  const entries = new Map<string, { version: number; text: string }>()
  let chars = 0

  return {
    page(customerId, key, render) {
      // inside a transaction the rows read may still be rolled back: never kept
      if (sqlite.inTransaction) return render()
      const version = (versionOf.get(customerId) as number | undefined) ?? 0
      const full = `${customerId}\0${key}`
      const hit = entries.get(full)
      if (hit && hit.version === version) return hit.text
      const text = render()
      if (hit) chars -= hit.text.length
      if (chars + text.length > maxChars) {
        entries.clear()
        chars = 0
      }
      entries.set(full, { version, text })
      chars += text.length
      return text
    },
    get size() {
      return entries.size
    }
  }
}
