/**
 * The figures the words path plans and ranks with, counted over what the caller reads and nothing else: how many
 * passages the reader reads (BM25's N, from the organization's shares), their mean length in words (avgdl) and how
 * many of them hold a term (df). Nothing another organization uploads changes them, so it changes neither a
 * caller's ranking nor their scores (docs/design/knowledge-search.md, "Tenant-private statistics"). Each reader's
 * figures are cached in the worker until the organization's documents change.
 */
import type Database from 'better-sqlite3'
import type { DocFilters, DocScope, Reader } from './readers.js'
import { readerTokens } from './readers.js'
import { ftsPhrase } from './query.js'
import { wordCount } from './word-ranking.js'

/** passages of the reader read to work out their mean length: the newest, so the figure is the same on every worker */
const LENGTH_SAMPLE = 200

/** what the words path asks of a reader: every figure counts the reader's passages only */
export interface ReaderView {
  /** the word index's MATCH part selecting the reader's passages, empty when the reader reads nothing */
  readersMatch: string
  /** passages the reader reads */
  passages: number
  /** their mean length in words, from the newest LENGTH_SAMPLE */
  avgWords(): number
  /** how many of the reader's passages have a rowid at or above `rowid` */
  newerThan(rowid: number): number
  /** the reader's passages holding a term, worked out by `count` once per term until the documents change */
  passagesWith(term: string[], count: () => number): number
}

export function createReaderStatistics(sqlite: Database.Database) {
  const listingVersion = sqlite.prepare('SELECT version FROM knowledge_listing_versions WHERE customer_id = ?')
    .pluck()
  const newest = sqlite.prepare(`SELECT p.text FROM knowledge_passages p WHERE p.rowid IN (
      SELECT rowid FROM knowledge_passages_words WHERE knowledge_passages_words MATCH ? ORDER BY rowid DESC LIMIT +?)`)
    .pluck()
  const countFrom = sqlite.prepare(`SELECT count(*) FROM knowledge_passages_words
    WHERE knowledge_passages_words MATCH ? AND rowid >= ?`).pluck()
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

  const orgs = new Map<string, OrgShares>()
  const readable = new Map<string, { of: OrgShares; passages: number }>()
  const views = new Map<string, { of: OrgShares; view: ReaderView }>()

  return {
    readable: readableBy,
    /** the reader's figures for a search in `scope` (all the reader reads when none) */
    view(reader: Reader, scope?: DocScope): ReaderView {
      const org = shares(reader.customerId)
      const tokens = readerTokens(reader, scope)
      const readersMatch = tokens.length ? `{readers}: (${tokens.map(ftsPhrase).join(' OR ')})` : ''
      const key = `${reader.customerId} ${readersMatch}`
      let cached = views.get(key)
      if (!cached || cached.of !== org) {
        if (views.size > 10_000) views.clear()
        views.set(key, (cached = { of: org, view: createView(readersMatch, readableBy(reader, { scope })) }))
      }
      return cached.view
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

  function createView(readersMatch: string, passages: number): ReaderView {
    let avg: number | undefined
    const withTerm = new Map<string, number>()
    return {
      readersMatch,
      passages,
      avgWords() {
        if (avg === undefined) {
          const texts = readersMatch ? newest.all(readersMatch, LENGTH_SAMPLE) as string[] : []
          const words = texts.reduce((sum, t) => sum + wordCount(t), 0)
          avg = Math.max(1, words / Math.max(texts.length, 1))
        }
        return avg
      },
      newerThan: (rowid) => readersMatch ? countFrom.get(readersMatch, rowid) as number : 0,
      passagesWith(term, count) {
        const key = term.join(' ')
        let n = withTerm.get(key)
        if (n === undefined) {
          if (withTerm.size > 10_000) withTerm.clear()
          withTerm.set(key, (n = count()))
        }
        return n
      }
    }
  }

  /**
   * From the organization's passages by who may read them (its `shares`, migration 0027: a row per scope and
   * workspace or owner), read again when its documents change (migration 0017's version, raised by any document
   * write).
   */
  function readableBy(reader: Reader, filters: DocFilters) {
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

export type ReaderStatistics = ReturnType<typeof createReaderStatistics>
