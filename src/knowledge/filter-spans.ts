/**
 * What a category or tag filter leaves a reader, as rowid ranges the words and substring walks keep to, and the
 * check of candidates against a filter too scattered to walk inside.
 */
import type Database from 'better-sqlite3'
import { readableParams, readableWhere, type DocFilters, type Reader } from './readers.js'
import type { KnowledgeStore } from './store.js'
import type { ReaderStatistics } from './reader-statistics.js'
import type { SearchSettings } from './search-settings.js'
import { mergeRuns, runDocsSql, type DocRuns, type RunDoc } from './doc-runs.js'

/** a category or tag filter's documents as the reader sees them */
export interface FilterSpan {
  /** the documents (counted up to spanDocs + 1) */
  docs: number
  passages: number
  /** whether it leaves out none of the reader's passages */
  all: boolean
  /** their passages' rowid ranges [lo, hi), newest first, neighbours merged; undefined past spanDocs documents */
  ranges?: Array<[bigint, bigint]>
}

export function createFilterSpans(sqlite: Database.Database, store: KnowledgeStore, stats: ReaderStatistics,
  runsOf: DocRuns, settings: SearchSettings) {
  const { maxRanges: MAX_RANGES, spanDocs: SPAN_DOCS, checkBatch: FILTER_BATCH, maxChecks: FILTER_CHECKS } =
    settings.filters
  const FILTERED_DOCS = settings.words.filteredDocs
  const listingVersion = sqlite.prepare('SELECT version FROM knowledge_listing_versions WHERE customer_id = ?')
    .pluck()

  /**
   * What a category or tag filter leaves the reader: its documents' rowid ranges, newest first, neighbours merged
   * (a document's passages are written together; undefined past SPAN_DOCS documents), its passages, and whether it
   * leaves out none of the reader's. Cached per reader and filter until the organization's documents change
   * (migration 0017's version, raised by any document or tag write, and by each slice an ingest writes): a search
   * with that filter does not read its documents' ranges again, whatever other organizations write.
   */
  function filterSpan(reader: Reader, filters: DocFilters): FilterSpan {
    const key = JSON.stringify([reader.customerId, reader.userId, reader.workspaceIds, filters.scope ?? null,
      filters.category ?? null, filters.tags ?? null])
    const version = listingVersion.get(reader.customerId) as number | undefined
    const kept = spans.get(key)
    if (kept && kept.version === version) return kept.span
    const params = readableParams(reader, filters)
    const { n: passages } = store.prepared(readablePassages(filters)).get(params) as { n: number }
    const readable = stats.readable(reader, { scope: filters.scope })
    const docs = store.prepared(runDocsSql(filters)).all({ ...params, most: SPAN_DOCS + 1 }) as RunDoc[]
    let ranges: Array<[bigint, bigint]> | undefined
    const all = passages === readable && passages > 0
    // (a filter leaving out nothing is walked as without it: its ranges are never read)
    if (!all && docs.length <= SPAN_DOCS) {
      // newest first
      const merged = mergeRuns(docs.filter((d) => d.chunk_count > 0).flatMap((d) => runsOf(d))).reverse()
      ranges = merged.map(([lo, hi]) => [BigInt(lo), BigInt(hi) + 1n])
    }
    const span: FilterSpan = { docs: docs.length, passages, all, ranges }
    if (spans.size >= 1000) spans.clear()
    spans.set(key, { version, span })
    return span
  }
  const spans = new Map<string, { version: number | undefined; span: FilterSpan }>()

  /**
   * The rowid ranges of a category or tag filter's passages (filterSpan); 'all' when it leaves out none of the
   * reader's; undefined when there are more than `FILTERED_DOCS` documents or MAX_RANGES ranges (walked as
   * without the filter).
   */
  function filteredRanges(reader: Reader, filters: DocFilters): Array<[bigint, bigint]> | 'all' | undefined {
    const span = filterSpan(reader, filters)
    if (span.docs === 0 || span.ranges?.length === 0) return []
    if (span.all) return 'all'
    // (each range costs every walk a statement or more: many scattered documents are walked as without the filter)
    return span.docs > FILTERED_DOCS || !span.ranges || span.ranges.length > MAX_RANGES ? undefined : span.ranges
  }
  const readablePassages = (filters: DocFilters) => `SELECT coalesce(sum(d.chunk_count), 0) AS n
    FROM knowledge_documents d
    WHERE ${readableWhere(filters)}`
  const inFilterSql = (filters: DocFilters) => `SELECT p.rowid FROM knowledge_passages p
    JOIN knowledge_documents d ON d.id = p.document_id
    WHERE p.rowid IN (SELECT value FROM json_each(@rowids)) AND ${readableWhere(filters)}`
  /**
   * The first `most` of `rowids` (best first) whose passages the filter keeps: those in its ranges (exact: a
   * document's runs of rowids, see doc-runs.ts) when known, else checked by their documents a batch at a time (at most
   * FILTER_CHECKS)
   */
  function passingFilter(reader: Reader, filters: DocFilters, span: FilterSpan, rowids: number[],
    most: number): number[] {
    const ranges = span.ranges
    // ranges newest first, each [lo, hi): the first whose lo is at or below the rowid holds it if hi is above
    const holds = (rowid: number) => {
      const r = BigInt(rowid)
      let a = 0
      let b = ranges!.length
      while (a < b) {
        const m = (a + b) >> 1
        if (ranges![m][0] > r) a = m + 1
        else b = m
      }
      return a < ranges!.length && r < ranges![a][1]
    }
    if (ranges) {
      const out: number[] = []
      for (const rowid of rowids) if (holds(rowid) && out.push(rowid) >= most) break
      return out
    }
    const params = readableParams(reader, filters)
    const out: number[] = []
    for (let at = 0; at < rowids.length && out.length < most && at < FILTER_CHECKS; at += FILTER_BATCH) {
      const batch = rowids.slice(at, at + FILTER_BATCH)
      const kept = new Set(store.prepared(inFilterSql(filters)).pluck().all({ ...params,
        rowids: JSON.stringify(batch) }) as number[])
      for (const rowid of batch) if (kept.has(rowid) && out.length < most) out.push(rowid)
    }
    return out
  }
  return { span: filterSpan, ranges: filteredRanges, passing: passingFilter }
}

export type FilterSpans = ReturnType<typeof createFilterSpans>
