/**
 * Which characters and character pairs a document's passages hold (lower-cased as substring search folds
 * them), as a Bloom filter per document (table knowledge_document_grams, migration 0016). A 1–2 character
 * query cannot use the trigram index and scans passages; a document whose filter lacks one of the query's
 * characters or pairs cannot hold it and is skipped. The filter never answers "absent" wrongly; a document
 * without a filter (not yet summarized) or whose passage count changed is scanned as before.
 */
import type Database from 'better-sqlite3'
import { setImmediate as yieldToLoop } from 'node:timers/promises'

/** bits per filter: about 1,500 distinct grams in an English document of 200 passages fill ~13 % with 3 hashes */
export const GRAM_BITS = 32_768
const HASHES = 3

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** the bit positions of a character (b = -1) or a pair of code points */
function positions(a: number, b: number, out: Uint32Array) {
  const h1 = mix(Math.imul(a, 0x9e3779b1) ^ (b + 1))
  const h2 = mix(h1 ^ 0x5bd1e995) | 1
  for (let i = 0; i < HASHES; i++) out[i] = (h1 + Math.imul(i, h2)) & (GRAM_BITS - 1)
}

/** A filter being filled, passage by passage. */
export function gramFilter() {
  const bits = new Uint32Array(GRAM_BITS / 32)
  const at = new Uint32Array(HASHES)
  const set = (a: number, b: number) => {
    positions(a, b, at)
    for (const p of at) bits[p >>> 5] |= 1 << (p & 31)
  }
  return {
    add(text: string) {
      const folded = text.toLowerCase()
      let prev = -1
      for (let i = 0; i < folded.length; i++) {
        const c = folded.codePointAt(i)!
        if (c > 0xffff) i++
        set(c, -1)
        if (prev >= 0) set(prev, c)
        prev = c
      }
    },
    bytes: () => Buffer.from(bits.buffer)
  }
}

/** The grams a lower-cased text holding `needle` must have: its characters and its pairs. */
export function needleGrams(needle: string): Array<[number, number]> {
  const cps = [...needle].map((c) => c.codePointAt(0)!)
  return [...cps.map((c): [number, number] => [c, -1]), ...cps.slice(1).map((c, i): [number, number] => [cps[i], c])]
}

/** false when the filter proves no passage holds every gram */
export function mayHold(filter: Uint8Array, grams: Array<[number, number]>): boolean {
  const at = new Uint32Array(HASHES)
  for (const [a, b] of grams) {
    positions(a, b, at)
    for (const p of at) if ((filter[p >>> 3] & (1 << (p & 7))) === 0) return false
  }
  return true
}

/**
 * The per-document filters a search connection reads, cached: a filter describes an indexed document's
 * passages, which never change afterwards, so a cached one is right for as long as its document exists
 * (`passages` is checked against the document's chunk count at every use).
 */
export function gramFilters(sqlite: Database.Database) {
  const load = sqlite.prepare(`SELECT document_id, passages, bits FROM knowledge_document_grams
    WHERE document_id IN (SELECT value FROM json_each(?))`)
  const page = sqlite.prepare(`SELECT document_id, passages, bits FROM knowledge_document_grams
    WHERE document_id > ? ORDER BY document_id LIMIT 256`)
  const cache = new Map<string, { passages: number; bits: Uint8Array }>()
  return {
    /** reads every filter into the cache, 256 at a time between searches (a worker's first short query is fast) */
    async warm() {
      for (let after = ''; cache.size < 16_384; await yieldToLoop()) {
        const rows = page.all(after) as Array<{ document_id: string; passages: number; bits: Buffer }>
        if (rows.length === 0) return
        for (const r of rows) cache.set(r.document_id, { passages: r.passages, bits: new Uint8Array(r.bits) })
        after = rows[rows.length - 1].document_id
      }
    },
    /** each document's filter when it has one covering `chunk_count` passages */
    of(docs: Array<{ doc_id: string; chunk_count: number }>): Map<string, Uint8Array> {
      const out = new Map<string, Uint8Array>()
      const missing: string[] = []
      for (const d of docs) {
        const c = cache.get(d.doc_id)
        if (c && c.passages === d.chunk_count) out.set(d.doc_id, c.bits)
        else missing.push(d.doc_id)
      }
      if (missing.length === 0) return out
      // about 4 KB a document: 16,384 documents are 64 MB; past that the cache starts over
      if (cache.size + missing.length > 16_384) cache.clear()
      const chunks = new Map(docs.map((d) => [d.doc_id, d.chunk_count]))
      for (let i = 0; i < missing.length; i += 5_000) {
        const rows = load.all(JSON.stringify(missing.slice(i, i + 5_000))) as
          Array<{ document_id: string; passages: number; bits: Buffer }>
        for (const r of rows) {
          const bits = new Uint8Array(r.bits)
          cache.set(r.document_id, { passages: r.passages, bits })
          if (chunks.get(r.document_id) === r.passages) out.set(r.document_id, bits)
        }
      }
      return out
    }
  }
}

/**
 * The back-fill: indexed documents without a filter get one, a document at a time, read in one read transaction
 * and written in a short one that checks the document is still indexed with as many passages. Run by the index
 * worker while it is idle (src/knowledge/index-worker.ts), on its write connection, its writes after the server's
 * waiting ones. Restart-safe: the work left is always "indexed documents lacking a filter".
 */
export function filterBackfill(sqlite: Database.Database) {
  const lacking = sqlite.prepare(`SELECT d.id FROM knowledge_documents d
    WHERE d.status = 'indexed' AND d.chunk_count > 0
      AND NOT EXISTS (SELECT 1 FROM knowledge_document_grams g WHERE g.document_id = d.id)
    ORDER BY d.uploaded_at DESC LIMIT ${BACKFILL_BATCH}`).pluck()
  const docOf = sqlite.prepare(`SELECT chunk_count FROM knowledge_documents WHERE id = ? AND status = 'indexed'`)
    .pluck()
  const passages = sqlite.prepare(`SELECT text FROM knowledge_passages WHERE document_id = ?`).pluck()
  const write = sqlite.prepare(`INSERT OR REPLACE INTO knowledge_document_grams (document_id, passages, bits)
    SELECT id, @passages, @bits FROM knowledge_documents WHERE id = @id AND status = 'indexed'
      AND chunk_count = @passages`)
  /** a document's filter, when it is indexed and its passages are all there */
  const read = sqlite.transaction((id: string) => {
    const count = docOf.get(id) as number | undefined
    if (count === undefined) return undefined
    const filter = gramFilter()
    let n = 0
    for (const text of passages.iterate(id) as Iterable<string>) { filter.add(text); n++ }
    return n === count ? { passages: n, bits: filter.bytes() } : undefined
  })
  return {
    /** the documents lacking a filter now, newest first (at most BACKFILL_BATCH) */
    lacking: () => lacking.all() as string[],
    read,
    /** stores a filter read by `read` when its document is still indexed with as many passages: whether it did */
    write: (id: string, f: { passages: number; bits: Uint8Array }) => write.run({ id, ...f }).changes > 0,
    /** the documents lacking a filter now: filters made (tests) */
    batch() {
      return (lacking.all() as string[]).filter((id) => {
        const f = read(id)
        return f !== undefined && write.run({ id, ...f }).changes > 0
      }).length
    }
  }
}

/** documents looked up at a time by the back-fill */
export const BACKFILL_BATCH = 50
