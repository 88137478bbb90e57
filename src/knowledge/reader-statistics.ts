/**
 * The figures the words path plans and ranks with, cached per search worker: the corpus size and mean passage length
 * in words (BM25's N and avgdl), how many passages each reader reads (from the organization's shares), and how many
 * passages of the whole index hold a term. Never needed exact: stale figures move scores a little, never which
 * passages can be found.
 */
import type Database from 'better-sqlite3'
import type { DocFilters, Reader } from './readers.js'
import { WORD_TOKEN } from './word-ranking.js'

/** `probe`: how many of a term's newest postings estimate its passages (the words settings' `probe`) */
export function createReaderStatistics(sqlite: Database.Database, probe: number) {
  const PROBE = probe
  const listingVersion = sqlite.prepare('SELECT version FROM knowledge_listing_versions WHERE customer_id = ?')
    .pluck()
  const corpusSize = sqlite.prepare(`SELECT coalesce(max(rowid), 0) FROM knowledge_passages`).pluck()
  const sampleTexts = sqlite.prepare(`SELECT text FROM knowledge_passages WHERE rowid >= ? LIMIT 200`).pluck()
  /** an organization's passages by who may read them: a scope, its workspace or owner (null when not the scope's) */
  type Share = { scope: string; workspace: string | null; owner: string | null; n: number }
  type OrgShares = { version: number | undefined; shares: Share[] }
  // (migration 0027's table, kept by triggers with the documents)
  const sharesSql = (where: string) => `SELECT ${where ? '' : 'customer_id, '}scope, nullif(workspace, '') AS workspace,
      nullif(owner, '') AS owner, passages AS n
    FROM knowledge_reader_shares ${where}`
  const orgShares = sqlite.prepare(sharesSql('WHERE customer_id = ?'))
  const allShares = sqlite.prepare(sharesSql(''))
  const allVersions = sqlite.prepare('SELECT customer_id, version FROM knowledge_listing_versions').raw()

  /**
   * Cached per worker, never needed exact: the corpus size and mean passage length in words (BM25's N and
   * avgdl) and how much each reader reads. Stale figures move
   * scores a little, never which passages can be found.
   */
  return createWordStats()

  function createWordStats() {
    let corpus = { at: 0, n: 0, avgWords: 0 }
    const orgs = new Map<string, OrgShares>()
    const readable = new Map<string, { of: OrgShares; passages: number }>()
    const withTerm = new Map<string, { at: number; passages: number }>()
    return {
      /** passages of the whole index holding a term, estimated by `count` from its newest PROBE postings */
      passagesWith(term: string[], count: (probe: number) => number) {
        const key = term.join(' ')
        let r = withTerm.get(key)
        if (!r || performance.now() - r.at > 60_000) {
          if (withTerm.size > 100_000) withTerm.clear()
          withTerm.set(key, (r = { at: performance.now(), passages: count(PROBE) }))
        }
        return r.passages
      },
      corpus() {
        if (corpus.n === 0 || performance.now() - corpus.at > 60_000) {
          const n = corpusSize.get() as number
          // (the passages sampled again only when some were added: 200 of them read, each a page on a cold cache)
          if (n === corpus.n && corpus.avgWords > 0) {
            corpus.at = performance.now()
            return corpus
          }
          const texts = sampleTexts.all(Math.floor(n / 2)) as string[]
          const words = texts.reduce((sum, t) => sum + (t.match(WORD_TOKEN)?.length ?? 0), 0)
          const avgWords = Math.max(1, words / Math.max(texts.length, 1))
          corpus = { at: performance.now(), n: Math.max(n, 1), avgWords }
        }
        return corpus
      },
      /**
       * From the organization's passages by who may read them (its `shares`, migration 0027: a row per scope and
       * workspace or owner), read again when its documents change (migration 0017's version, raised by any document
       * write). `warm` reads every organization's at once.
       */
      readable(reader: Reader, filters: DocFilters) {
        const org = shares(reader.customerId)
        const key = JSON.stringify([reader, filters.scope])
        let r = readable.get(key)
        if (!r || r.of !== org) {
          if (readable.size > 10_000) readable.clear()
          const workspaces = new Set(reader.workspaceIds)
          let passages = 0
          for (const s of org.shares) {
            if (filters.scope && s.scope !== filters.scope) continue
            if (s.scope === 'organization' || (s.scope === 'workspace' && workspaces.has(s.workspace!)) ||
              (s.scope === 'personal' && s.owner === reader.userId)) passages += s.n
          }
          readable.set(key, (r = { of: org, passages }))
        }
        return r.passages
      },
      /** every organization's shares, read in one pass (a worker's start) */
      warm() {
        const versions = new Map(allVersions.all() as Array<[string, number]>)
        const read = new Map<string, Share[]>()
        for (const { customer_id: id, ...s } of allShares.all() as Array<Share & { customer_id: string }>) {
          let list = read.get(id)
          if (!list) read.set(id, (list = []))
          list.push(s)
        }
        for (const [id, list] of read) orgs.set(id, { version: versions.get(id), shares: list })
      }
    }
    function shares(customerId: string): OrgShares {
      const version = listingVersion.get(customerId) as number | undefined
      let org = orgs.get(customerId)
      if (!org || org.version !== version) {
        if (orgs.size > 10_000) orgs.clear()
        orgs.set(customerId, (org = { version, shares: orgShares.all(customerId) as Share[] }))
      }
      return org
    }
  }
}

export type ReaderStatistics = ReturnType<typeof createReaderStatistics>
