import { randomFillSync } from 'node:crypto'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import type Database from 'better-sqlite3'
import type { FastifyBaseLogger } from 'fastify'
import { passageRanges, type ChunkOptions, type Passage } from '../ingest/chunker.js'
import { textFilePieces } from '../ingest/text.js'
import type { JobQueue } from '../jobs/queue.js'
import type { KnowledgeFiles } from './files.js'

/** how long one indexing, counting or purge step may hold the event loop */
const SLICE_MS = 25
/** the bytes of a text file read at a time by the background indexer */
const WINDOW_BYTES = 4 * 1024 * 1024

/**
 * The passages of a text given in pieces, a window at a time. The chunker's only state is where the
 * next passage starts, and a passage depends on at most the `chunkSize + 1` characters from its start:
 * each window yields the passages it fully decides, and the next window starts where the first
 * undecided one does. Together the windows give exactly chunkText's passages.
 */
export async function* passageWindows(pieces: AsyncIterable<string>, options: ChunkOptions,
  minChars = WINDOW_BYTES / 4) {
  const source = pieces[Symbol.asyncIterator]()
  let window = ''
  let eof = false
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
    yield { window, decided, last: eof }
    if (eof) return
    window = window.slice(rest)
  }
}

const idBytes = Buffer.alloc(16)
/**
 * A time-ordered UUID (version 7, RFC 9562) for a passage: consecutive passages land next to each other in
 * the unique index on `id`, so a slice's commit rewrites a page or two of it rather than one random page per
 * passage (at a million passages that index no longer stays in the page cache).
 */
export function passageId(now = Date.now()): string {
  randomFillSync(idBytes, 6, 10)
  idBytes.writeUIntBE(now, 0, 6)
  idBytes[6] = (idBytes[6] & 0x0f) | 0x70
  idBytes[8] = (idBytes[8] & 0x3f) | 0x80
  const h = idBytes.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/**
 * Writes passages with their index entries: the passages table, the trigram index and the word index with
 * the document's readers token (migration 0014 removed the insert triggers that did this row by row). Every
 * writer of passages goes through it; the document row must exist first.
 */
export function passageWriter(sqlite: Database.Database) {
  const insertPassage = sqlite.prepare(`INSERT INTO knowledge_passages (id, document_id, chunk_index, text)
    VALUES (?, ?, ?, ?)`)
  const insertTrigrams = sqlite.prepare(`INSERT INTO knowledge_passages_fts (rowid, text) VALUES (?, ?)`)
  const insertWords = sqlite.prepare(`INSERT INTO knowledge_passages_words (rowid, text, readers) VALUES (?, ?, ?)`)
  const readersOf = sqlite.prepare(`SELECT token FROM knowledge_passage_readers WHERE document_id = ?`).pluck()
  return {
    /** the readers token of a document (see readerTokens); undefined when the document is gone */
    readers: (documentId: string) => readersOf.get(documentId) as string | null | undefined,
    insert(documentId: string, readers: string | null, chunkIndex: number, text: string) {
      const { lastInsertRowid } = insertPassage.run(passageId(), documentId, chunkIndex, text)
      insertTrigrams.run(lastInsertRowid, text)
      insertWords.run(lastInsertRowid, text, readers)
    }
  }
}

interface IndexRow {
  id: string
  status: string
  indexed_count: number
  chunk_size: number
  chunk_overlap: number
  text_path: string
}

/**
 * Indexing of knowledge documents. `knowledge.index` stores a document's passages in short
 * transactions (resuming from `indexed_count` after a restart); `knowledge.purge` removes the passages
 * of a deleted document the same way. `indexNow` runs the same work inside an upload request, for
 * read-your-writes, under a job claimed in the document's own transaction.
 */
export function createIndexer(deps: { sqlite: Database.Database; jobs: JobQueue; files: KnowledgeFiles;
  log: FastifyBaseLogger }) {
  const { sqlite, jobs, files } = deps
  const byId = sqlite.prepare(`SELECT id, status, indexed_count, chunk_size, chunk_overlap, text_path
    FROM knowledge_documents WHERE id = ?`)
  const writer = passageWriter(sqlite)
  const progress = sqlite.prepare(`UPDATE knowledge_documents SET indexed_count = ?, status = ?, updated_at = ?
    WHERE id = ?`)
  const finish = sqlite.prepare(`UPDATE knowledge_documents
    SET indexed_count = ?, chunk_count = ?, status = 'indexed', updated_at = ? WHERE id = ?`)
  const purgeSome = sqlite.prepare(`DELETE FROM knowledge_passages WHERE rowid IN
    (SELECT rowid FROM knowledge_passages WHERE document_id = ? LIMIT 200)`)

  /**
   * One slice: passages until the time budget is spent. The document is indexed once `passages` runs out
   * and it was the `last` batch of them; that slice also ends the claimed job.
   */
  const writeSlice = sqlite.transaction((documentId: string, passages: Iterator<string>, from: number, last: boolean,
    jobId?: string) => {
    const readers = writer.readers(documentId)
    if (readers === undefined) {
      if (jobId) jobs.complete(jobId)
      return { next: from, exhausted: true, gone: true }
    }
    const deadline = performance.now() + SLICE_MS
    let next = from
    let exhausted = false
    while (performance.now() < deadline) {
      const r = passages.next()
      if (r.done) { exhausted = true; break }
      writer.insert(documentId, readers, next, r.value)
      next++
    }
    const now = new Date().toISOString()
    if (exhausted && last) {
      finish.run(next, next, now, documentId)
      if (jobId) jobs.complete(jobId)
    } else {
      progress.run(next, 'processing', now, documentId)
    }
    return { next, exhausted, gone: false }
  }).immediate

  /** Writes `passages` (numbered from `from`) in slices; false when the document was deleted meanwhile. */
  async function write(documentId: string, passages: Iterator<string>, from: number, last: boolean,
    signal?: AbortSignal, jobId?: string) {
    let next = from
    for (;;) {
      if (signal?.aborted) throw new Error('interrupted by shutdown')
      const slice = writeSlice(documentId, passages, next, last, jobId)
      next = slice.next
      if (slice.gone) return { next, gone: true }
      if (slice.exhausted) return { next, gone: false }
      await yieldToLoop()
    }
  }

  function* texts(text: string, ranges: Iterable<Passage>) {
    for (const r of ranges) yield text.slice(r.start, r.end)
  }

  /**
   * Indexes a document's text file a window at a time (see passageWindows), so that a 50 MB text is
   * never held whole. The first `indexed_count` passages (written before a restart) are counted, not
   * written again.
   */
  async function indexFile(doc: IndexRow, signal: AbortSignal) {
    const options = { chunkSize: doc.chunk_size, chunkOverlap: doc.chunk_overlap }
    let seen = 0
    let next = doc.indexed_count
    for await (const { window, decided, last } of passageWindows(textFilePieces(files.abs(doc.text_path), WINDOW_BYTES,
      'utf8'), options)) {
      const fresh = decided.filter(() => seen++ >= doc.indexed_count)
      const { next: after, gone } = await write(doc.id, texts(window, fresh), next, last, signal)
      next = after
      if (gone) return
      await yieldToLoop()
    }
  }

  async function index(doc: IndexRow, text: string, jobId: string) {
    const ranges = passageRanges(text, { chunkSize: doc.chunk_size, chunkOverlap: doc.chunk_overlap })
    for (let i = 0; i < doc.indexed_count; i++) ranges.next()
    await write(doc.id, texts(text, { [Symbol.iterator]: () => ranges }), doc.indexed_count, true, undefined, jobId)
  }

  jobs.register('knowledge.index', async (payload, ctx) => {
    const { documentId } = payload
    const doc = byId.get(documentId) as IndexRow | undefined
    if (!doc || doc.status === 'indexed') return
    progress.run(doc.indexed_count, 'processing', new Date().toISOString(), documentId)
    await indexFile(doc, ctx.signal)
  }, { maxAttempts: 5, backoffMs: 2000 })

  jobs.register('knowledge.purge', async (payload) => {
    const { documentId } = payload
    while (purgeSome.run(documentId).changes > 0) await yieldToLoop()
  }, { maxAttempts: 5 })

  return {
    /**
     * Indexes a just-created document inside the request, under the job claimed with it: when this
     * fails, the job goes back to the runner, which resumes where it stopped.
     */
    async indexNow(documentId: string, text: string, jobId: string) {
      try {
        const doc = byId.get(documentId) as IndexRow | undefined
        if (doc) await index(doc, text, jobId)
        else jobs.complete(jobId)
      } catch (err) {
        deps.log.warn({ err, documentId }, 'indexing at upload failed: left to the background job')
        jobs.release(jobId, err instanceof Error ? err.message : String(err))
      }
    },

    /** The number of passages of a text given in pieces, a window at a time. */
    async countPieces(pieces: AsyncIterable<string>, options: ChunkOptions): Promise<number> {
      let count = 0
      for await (const { decided } of passageWindows(pieces, options)) {
        count += decided.length
        await yieldToLoop()
      }
      return count
    },

    /** The number of passages of `text`, counted a slice at a time. */
    async countPassages(text: string, options: ChunkOptions): Promise<number> {
      const ranges = passageRanges(text, options)
      let count = 0
      for (;;) {
        const deadline = performance.now() + SLICE_MS
        for (let i = 0; ; i++) {
          if (ranges.next().done) return count
          count++
          if (i % 256 === 255 && performance.now() > deadline) break
        }
        await yieldToLoop()
      }
    }
  }
}

export type Indexer = ReturnType<typeof createIndexer>
