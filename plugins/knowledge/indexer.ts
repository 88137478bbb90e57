import fsp from 'node:fs/promises'
import { randomUUID } from 'node:crypto'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { passageRanges } from '../../src/ingest/chunker.js'
import type { KnowledgeStore } from './store.js'
import type { KnowledgeFiles } from './files.js'

/** how long one indexing or purge transaction may hold the event loop */
const SLICE_MS = 25

/**
 * Background jobs of the knowledge base: `knowledge.index` stores a document's passages in short
 * transactions (resuming from `indexed_count` after a restart); `knowledge.purge` removes the passages
 * of a deleted document the same way.
 */
export function registerKnowledgeJobs(app: FastifyInstance, store: KnowledgeStore, files: KnowledgeFiles) {
  const sqlite = app.sqlite
  const exists = sqlite.prepare(`SELECT 1 FROM knowledge_documents WHERE id = ?`)
  const insertPassage = sqlite.prepare(`INSERT INTO knowledge_passages (id, document_id, chunk_index, text) VALUES (?, ?, ?, ?)`)
  const progress = sqlite.prepare(`UPDATE knowledge_documents SET indexed_count = ?, status = ?, updated_at = ? WHERE id = ?`)
  const finish = sqlite.prepare(`UPDATE knowledge_documents SET indexed_count = ?, chunk_count = ?, status = 'indexed', updated_at = ? WHERE id = ?`)
  const purgeSome = sqlite.prepare(`DELETE FROM knowledge_passages WHERE rowid IN
    (SELECT rowid FROM knowledge_passages WHERE document_id = ? LIMIT 200)`)

  /** One slice: passages until the time budget is spent. Returns the next index, or undefined when the document is gone. */
  const writeSlice = sqlite.transaction((documentId: string, text: string, ranges: Generator<{ start: number; end: number }>, from: number) => {
    if (!exists.get(documentId)) return { next: from, done: true, gone: true }
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
    if (done) finish.run(next, next, now, documentId)
    else progress.run(next, 'processing', now, documentId)
    return { next, done, gone: false }
  }).immediate

  app.jobs.register('knowledge.index', async (payload, ctx) => {
    const { documentId } = payload as { documentId: string }
    const doc = store.getForJob(documentId)
    if (!doc || doc.status === 'indexed') return
    progress.run(doc.indexed_count, 'processing', new Date().toISOString(), documentId)
    const text = await fsp.readFile(files.abs(doc.text_path), 'utf8')
    const ranges = passageRanges(text, { chunkSize: doc.chunk_size, chunkOverlap: doc.chunk_overlap })
    for (let i = 0; i < doc.indexed_count; i++) ranges.next()
    let next = doc.indexed_count
    for (;;) {
      if (ctx.signal.aborted) throw new Error('interrupted by shutdown')
      const slice = writeSlice(documentId, text, ranges, next)
      next = slice.next
      if (slice.done) break
      await yieldToLoop()
    }
  }, { maxAttempts: 5, backoffMs: 2000 })

  app.jobs.register('knowledge.purge', async (payload) => {
    const { documentId } = payload as { documentId: string }
    while (purgeSome.run(documentId).changes > 0) await yieldToLoop()
  }, { maxAttempts: 5 })
}
