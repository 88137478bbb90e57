import type Database from 'better-sqlite3'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { readableWhere, readableParams, type Reader, type DocFilters, type KnowledgeStore } from './store.js'

export interface SearchHit {
  document: { id: string; fileName: string; fileType: string; category: string; scope: string }
  chunk: { id: string; text: string; chunkIndex: number }
  score?: number
  snippet: string
}

interface HitRow {
  id: string
  text: string
  chunk_index: number
  doc_id: string
  file_name: string
  file_type: string
  category: string
  scope: string
  uploaded_at?: string
}

const SNIPPET_RADIUS = 80
/**
 * How many of the newest matching readable passages are ranked. A query matching fewer is ranked exactly;
 * a broader one (a common fragment can match a quarter of a corpus) is ranked among its newest matches,
 * which keeps every 3+ character search an index look-up that stops early.
 */
export const RANK_CANDIDATES = 200
const K1 = 1.2
const B = 0.75

/** An FTS5 string literal: inside double quotes every character is literal; quotes are doubled. */
export function ftsPhrase(query: string): string {
  return `"${query.replace(/"/g, '""')}"`
}

function toHit(r: HitRow, snippet: string): SearchHit {
  return {
    document: { id: r.doc_id, fileName: r.file_name, fileType: r.file_type, category: r.category, scope: r.scope },
    chunk: { id: r.id, text: r.text, chunkIndex: r.chunk_index },
    snippet
  }
}

/** A window of text around the first match, the match in <mark>…</mark>. */
function snippetAround(text: string, at: number, length: number): string {
  const from = Math.max(0, at - SNIPPET_RADIUS)
  const to = Math.min(text.length, at + length + SNIPPET_RADIUS)
  return (from > 0 ? '…' : '') + text.slice(from, at) + '<mark>' + text.slice(at, at + length) + '</mark>' +
    text.slice(at + length, to) + (to < text.length ? '…' : '')
}

/**
 * Passage search (CONTRACT.md §5): case-insensitive substring matching in the documents the reader can
 * read. 3+ characters: the trigram index, ranked by BM25 then newest document (among RANK_CANDIDATES
 * newest matches). Shorter: a scan, newest document first, in slices between which the event loop runs,
 * stopping at `limit` matches.
 */
export function createSearch(sqlite: Database.Database, store: KnowledgeStore) {
  // newest matches first (FTS5 walks its rowids backwards and stops at the cap)
  const ftsSql = (filters: DocFilters) => `
    SELECT p.id, p.text, p.chunk_index, d.id AS doc_id, d.file_name, d.file_type, d.category, d.scope, d.uploaded_at
    FROM knowledge_passages_fts
    JOIN knowledge_passages p ON p.rowid = knowledge_passages_fts.rowid
    JOIN knowledge_documents d ON d.id = p.document_id
    WHERE knowledge_passages_fts MATCH @match AND ${readableWhere(filters)}
    ORDER BY knowledge_passages_fts.rowid DESC
    LIMIT ${RANK_CANDIDATES}`

  /**
   * BM25 of a one-phrase query: the phrase's IDF is the same for every passage, so the order is that of
   * the term-frequency part, tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)), which is the score reported.
   */
  function rank(rows: HitRow[], needle: string, limit: number): SearchHit[] {
    if (rows.length === 0) return []
    const avg = rows.reduce((n, r) => n + r.text.length, 0) / rows.length
    const scored = rows.map((r) => {
      const folded = r.text.toLowerCase()
      let tf = 0
      let first = -1
      for (let at = folded.indexOf(needle); at >= 0; at = folded.indexOf(needle, at + 1)) {
        if (first < 0) first = at
        tf++
      }
      // the index folds case a little differently from JavaScript in rare scripts: it matched, so count one
      tf = Math.max(tf, 1)
      const score = (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * r.text.length) / avg))
      return { r, score, first }
    })
    scored.sort((a, b) => b.score - a.score || (b.r.uploaded_at! < a.r.uploaded_at! ? -1 : b.r.uploaded_at! > a.r.uploaded_at! ? 1 : 0) ||
      a.r.chunk_index - b.r.chunk_index)
    return scored.slice(0, limit).map(({ r, score, first }) => ({
      ...toHit(r, first >= 0 ? snippetAround(r.text, first, needle.length) : r.text.slice(0, SNIPPET_RADIUS * 2)),
      score: Math.round(score * 1e6) / 1e6
    }))
  }

  const docsSql = (filters: DocFilters) => `SELECT d.id, d.file_name, d.file_type, d.category, d.scope
    FROM knowledge_documents d WHERE ${readableWhere(filters)} ORDER BY d.uploaded_at DESC, d.id DESC`
  const passagesFrom = sqlite.prepare(`SELECT id, text, chunk_index FROM knowledge_passages
    WHERE document_id = ? AND chunk_index >= ? ORDER BY chunk_index LIMIT ?`)

  async function scan(reader: Reader, filters: DocFilters, needle: string, limit: number): Promise<SearchHit[]> {
    const docs = store.prepared(docsSql(filters)).all(readableParams(reader, filters)) as
      Array<{ id: string; file_name: string; file_type: string; category: string; scope: string }>
    const hits: SearchHit[] = []
    let sliceStart = performance.now()
    for (const d of docs) {
      for (let from = 0; ; ) {
        const rows = passagesFrom.all(d.id, from, 500) as Array<{ id: string; text: string; chunk_index: number }>
        for (const p of rows) {
          const at = p.text.toLowerCase().indexOf(needle)
          if (at < 0) continue
          hits.push(toHit({ ...p, doc_id: d.id, file_name: d.file_name, file_type: d.file_type, category: d.category, scope: d.scope },
            snippetAround(p.text, at, needle.length)))
          if (hits.length >= limit) return hits
        }
        if (rows.length < 500) break
        from = rows[rows.length - 1].chunk_index + 1
        if (performance.now() - sliceStart > 20) { await yieldToLoop(); sliceStart = performance.now() }
      }
    }
    return hits
  }

  return {
    async search(reader: Reader, filters: DocFilters, query: string, limit: number): Promise<SearchHit[]> {
      if ([...query].length >= 3) {
        const rows = store.prepared(ftsSql(filters)).all({ ...readableParams(reader, filters), match: ftsPhrase(query) }) as HitRow[]
        return rank(rows, query.toLowerCase(), limit)
      }
      return scan(reader, filters, query.toLowerCase(), limit)
    }
  }
}
