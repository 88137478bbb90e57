import fsp from 'node:fs/promises'
import { randomUUID } from 'node:crypto'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import type Database from 'better-sqlite3'
import type { FastifyBaseLogger } from 'fastify'
import { passageRanges, type ChunkOptions, type Passage } from '../ingest/chunker.js'
import { decodeUtf8Sliced } from '../ingest/text.js'
import type { JobQueue } from '../jobs/queue.js'
import type { KnowledgeFiles } from './files.js'

/** how long one indexing, counting or purge step may hold the event loop */
const SLICE_MS = 25

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
export function createIndexer(deps: { sqlite: Database.Database; jobs: JobQueue; files: KnowledgeFiles; log: FastifyBaseLogger }) {
  const { sqlite, jobs, files } = deps
  const byId = sqlite.prepare(`SELECT id, status, indexed_count, chunk_size, chunk_overlap, text_path FROM knowledge_documents WHERE id = ?`)
  const insertPassage = sqlite.prepare(`INSERT INTO knowledge_passages (id, document_id, chunk_index, text) VALUES (?, ?, ?, ?)`)
  const progress = sqlite.prepare(`UPDATE knowledge_documents SET indexed_count = ?, status = ?, updated_at = ? WHERE id = ?`)
  const finish = sqlite.prepare(`UPDATE knowledge_documents SET indexed_count = ?, chunk_count = ?, status = 'indexed', updated_at = ? WHERE id = ?`)
  const purgeSome = sqlite.prepare(`DELETE FROM knowledge_passages WHERE rowid IN
    (SELECT rowid FROM knowledge_passages WHERE document_id = ? LIMIT 200)`)

  /** One slice: passages until the time budget is spent; the last one also ends the claimed job. */
  const writeSlice = sqlite.transaction((documentId: string, text: string, ranges: Iterator<Passage>, from: number, jobId?: string) => {
    if (!byId.get(documentId)) {
      if (jobId) jobs.complete(jobId)
      return { next: from, done: true }
    }
    const deadline = performance.now() + SLICE_MS
    let next = from
    let done = false
    while (performance.now() < deadline) {
      const r = ranges.next()
      if (r.done) { done = true; break }
      insertPassage.run(randomUUID(), documentId, next, text.slice(r.value.start, r.value.end))
      next++
    }
    const now = new Date().toISOString()
    if (done) {
      finish.run(next, next, now, documentId)
      if (jobId) jobs.complete(jobId)
    } else {
      progress.run(next, 'processing', now, documentId)
    }
    return { next, done }
  }).immediate

  async function index(doc: IndexRow, text: string, signal?: AbortSignal, jobId?: string) {
    const ranges = passageRanges(text, { chunkSize: doc.chunk_size, chunkOverlap: doc.chunk_overlap })
    for (let i = 0; i < doc.indexed_count; i++) ranges.next()
    let next = doc.indexed_count
    for (;;) {
      if (signal?.aborted) throw new Error('interrupted by shutdown')
      const slice = writeSlice(doc.id, text, ranges, next, jobId)
      next = slice.next
      if (slice.done) return
      await yieldToLoop()
    }
  }

  jobs.register('knowledge.index', async (payload, ctx) => {
    const { documentId } = payload as { documentId: string }
    const doc = byId.get(documentId) as IndexRow | undefined
    if (!doc || doc.status === 'indexed') return
    progress.run(doc.indexed_count, 'processing', new Date().toISOString(), documentId)
    const text = await decodeUtf8Sliced(await fsp.readFile(files.abs(doc.text_path)), yieldToLoop)
    await index(doc, text, ctx.signal)
  }, { maxAttempts: 5, backoffMs: 2000 })

  jobs.register('knowledge.purge', async (payload) => {
    const { documentId } = payload as { documentId: string }
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
        if (doc) await index(doc, text, undefined, jobId)
        else jobs.complete(jobId)
      } catch (err) {
        deps.log.warn({ err, documentId }, 'indexing at upload failed: left to the background job')
        jobs.release(jobId, err instanceof Error ? err.message : String(err))
      }
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
