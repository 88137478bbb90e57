import { randomFillSync } from 'node:crypto'
import type Database from 'better-sqlite3'
import { passageRanges, type ChunkOptions, type Passage } from '../ingest/chunker.js'

// Passages as the index worker, the upload's count and the bench's seed make them: no server-side imports here,
// so that the index worker's thread loads little.

/** the bytes of a text file read at a time by the background indexer */
const WINDOW_BYTES = 4 * 1024 * 1024

/**
 * The passages of a text given in pieces, a window at a time. The chunker's only state is where the
 * next passage starts, and a passage depends on at most the `chunkSize + 1` characters from its start:
 * each window yields the passages it fully decides, and the next window starts where the first
 * undecided one does. Together the windows give exactly chunkText's passages. `offset`: where the window starts
 * in the whole text (a passage's range in the text is its range in the window plus it).
 */
export async function* passageWindows(pieces: AsyncIterable<string>, options: ChunkOptions,
  minChars = WINDOW_BYTES / 4) {
  const source = pieces[Symbol.asyncIterator]()
  let window = ''
  /** where the window starts in the whole text */
  let offset = 0
  let eof = false
  try {
    for (;;) {
      while (!eof && window.length < minChars) {
        const r = await source.next()
        if (r.done) eof = true
        else window += r.value
      }
      const decided: Passage[] = []
      let rest = window.length
      for (const r of passageRanges(window, options)) {
        if (!eof && r.start + options.chunkSize + 1 > window.length) { rest = r.start; break }
        decided.push(r)
      }
      yield { window, offset, decided, last: eof }
      if (eof) return
      window = window.slice(rest)
      offset += rest
    }
  } finally {
    // a consumer that stops early (a failed task) ends the source too: its file is closed now, not by the GC
    if (!eof) await source.return?.()
  }
}

/** the FTS5 indexes over the passages in the main database: words, word pairs, runs (the trigrams: trigram-file.ts) */
export const PASSAGE_INDEXES = ['knowledge_passages_words', 'knowledge_passages_pairs', 'knowledge_passages_runs']

const idBytes = Buffer.alloc(16)
/** random bytes drawn 4 KB at a time: one `randomFillSync` per passage cost ~2.5–11 µs, a copy from here ~0.2 */
const randomPool = Buffer.alloc(4096)
let randomLeft = 0
/**
 * A time-ordered UUID (version 7, RFC 9562) for a passage: consecutive passages land next to each other in
 * the unique index on `id`, so a slice's commit rewrites a page or two of it rather than one random page per
 * passage (at a million passages that index no longer stays in the page cache).
 */
export function passageId(now = Date.now()): string {
  if (randomLeft < 10) { randomFillSync(randomPool); randomLeft = randomPool.length }
  randomLeft -= 10
  randomPool.copy(idBytes, 6, randomLeft, randomLeft + 10)
  idBytes.writeUIntBE(now, 0, 6)
  idBytes[6] = (idBytes[6] & 0x0f) | 0x70
  idBytes[8] = (idBytes[8] & 0x3f) | 0x80
  const h = idBytes.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/**
 * Writes passages with their index entries: the passages table and the word index with the document's readers
 * token (migration 0014 removed the insert triggers that did this row by row); the trigram index follows from
 * its own file and thread (src/knowledge/trigram-file.ts). A passage takes a rowid above every passage ever deleted
 * (migration 0023), so that a rowid the trigram file still holds for a deleted passage names no other. Every
 * writer of passages goes through it; the document row must exist first.
 */
export function passageWriter(sqlite: Database.Database) {
  const insertPassage = sqlite.prepare(`INSERT INTO knowledge_passages (rowid, id, document_id, chunk_index, text,
    heading_path) VALUES (max((SELECT rowid_high FROM knowledge_trigram_state),
      (SELECT coalesce(max(rowid), 0) FROM knowledge_passages)) + 1, ?, ?, ?, ?, ?)`)
  const insertWords = sqlite.prepare(`INSERT INTO knowledge_passages_words (rowid, text, readers) VALUES (?, ?, ?)`)
  const readersOf = sqlite.prepare(`SELECT token FROM knowledge_passage_readers WHERE document_id = ?`).pluck()
  return {
    /** the readers token of a document (see readerTokens); undefined when the document is gone */
    readers: (documentId: string) => readersOf.get(documentId) as string | null | undefined,
    /** its rowid; `headingPath` as stored (src/ingest/outline.ts storedHeadingPath) */
    insert(documentId: string, readers: string | null, chunkIndex: number, text: string,
      headingPath: string | null = null): number {
      const { lastInsertRowid } = insertPassage.run(passageId(), documentId, chunkIndex, text, headingPath)
      insertWords.run(lastInsertRowid, text, readers)
      return Number(lastInsertRowid)
    }
  }
}
