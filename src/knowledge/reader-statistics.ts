/**
 * The figures the words path plans and ranks with, counted over what the caller reads and nothing else: how many
 * passages the reader reads (BM25's N, from the organization's shares), their mean length in words (avgdl) and how
 * many of them hold a term (df). Nothing another organization uploads changes them, so it changes neither a
 * caller's ranking nor their scores (docs/design/knowledge-search.md, "Tenant-private statistics"). Each reader's
 * figures are cached in the worker until the organization's documents change.
 */
import type Database from 'better-sqlite3'
import type { DocFilters, DocScope, Reader } from './readers.js'
import { readableParams, readerTokens } from './readers.js'
import { ftsPhrase } from './query.js'
import { wordCount } from './word-ranking.js'
import type { KnowledgeStore } from './store.js'
import { mergeRuns, runDocsSql, type DocRuns, type RunDoc } from './doc-runs.js'

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
  /** whether a passage is the reader's */
  holds(rowid: number): boolean
  /** the reader's passages holding a term, worked out by `count` once per term until the documents change */
  passagesWith(term: string[], count: () => number): number
}

/**
 * The reader's passages as runs of rowids (doc-runs.ts), ascending, with how many passages the runs from each one on
 * hold: every readable document is read once per organization version (a few ms for thousands of documents).
 */
interface OwnRuns { lo: number[]; hi: number[]; from: number[] }

export function createReaderStatistics(sqlite: Database.Database, store: KnowledgeStore, runsOf: DocRuns) {
  const listingVersion = sqlite.prepare('SELECT version FROM knowledge_listing_versions WHERE customer_id = ?')
    .pluck()
  const textsWithin = sqlite.prepare(`SELECT text FROM knowledge_passages WHERE rowid BETWEEN ? AND ?
    ORDER BY rowid DESC LIMIT +?`).pluck()
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

  const lastRowid = sqlite.prepare('SELECT coalesce(max(rowid), 0) FROM knowledge_passages').pluck()
  let size = { at: -Infinity, rowids: 0 }
  return {
    readable: readableBy,
    /**
     * the passages' highest rowid, read at most once a minute: how the words path walks (whether a reader reads most
     * of the index), never what it finds or how it ranks
     */
    indexSize() {
      if (performance.now() - size.at > 60_000) size = { at: performance.now(), rowids: lastRowid.get() as number }
      return size.rowids
    },
    /** the reader's figures for a search in `scope` (all the reader reads when none) */
    view(reader: Reader, scope?: DocScope): ReaderView {
      const org = shares(reader.customerId)
      const tokens = readerTokens(reader, scope)
      const readersMatch = tokens.length ? `{readers}: (${tokens.map(ftsPhrase).join(' OR ')})` : ''
      const key = `${reader.customerId} ${readersMatch}`
      let cached = views.get(key)
      if (!cached || cached.of !== org) {
        if (views.size > 10_000) views.clear()
        const view = createView(reader, scope, readersMatch, readableBy(reader, { scope }))
        views.set(key, (cached = { of: org, view }))
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

  function createView(reader: Reader, scope: DocScope | undefined, readersMatch: string, passages: number): ReaderView {
    let avg: number | undefined
    let runs: OwnRuns | undefined
    const withTerm = new Map<string, number>()
    const own = () => (runs ??= ownRuns(reader, scope))
    /** the first run ending at or above `rowid` */
    const runAt = (rowid: number) => {
      const { hi } = own()
      let a = 0
      let b = hi.length
      while (a < b) {
        const m = (a + b) >> 1
        if (hi[m] < rowid) a = m + 1
        else b = m
      }
      return a
    }
    return {
      readersMatch,
      passages,
      avgWords() {
        if (avg === undefined) {
          // the newest LENGTH_SAMPLE of the reader's passages, run by run from the newest
          const { lo, hi } = own()
          const texts: string[] = []
          for (let k = hi.length - 1; k >= 0 && texts.length < LENGTH_SAMPLE; k--) {
            texts.push(...textsWithin.all(lo[k], hi[k], LENGTH_SAMPLE - texts.length) as string[])
          }
          const words = texts.reduce((sum, t) => sum + wordCount(t), 0)
          avg = Math.max(1, words / Math.max(texts.length, 1))
        }
        return avg
      },
      newerThan(rowid) {
        const { lo, hi, from } = own()
        const k = runAt(rowid)
        return k >= hi.length ? 0 : hi[k] - Math.max(lo[k], rowid) + 1 + (from[k + 1] ?? 0)
      },
      holds(rowid) {
        const k = runAt(rowid)
        return k < own().hi.length && own().lo[k] <= rowid
      },
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

  /** the runs of every document the reader reads in `scope` (doc-runs.ts), merged and counted */
  function ownRuns(reader: Reader, scope: DocScope | undefined): OwnRuns {
    const docs = store.prepared(runDocsSql({ scope })).all({ ...readableParams(reader, { scope }),
      most: Number.MAX_SAFE_INTEGER }) as RunDoc[]
    const runs = mergeRuns(docs.flatMap((d) => runsOf(d)))
    const lo = runs.map((r) => r[0])
    const hi = runs.map((r) => r[1])
    const from = new Array<number>(lo.length + 1).fill(0)
    for (let k = lo.length - 1; k >= 0; k--) from[k] = from[k + 1] + hi[k] - lo[k] + 1
    return { lo, hi, from }
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
