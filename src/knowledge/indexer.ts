import { Worker } from 'node:worker_threads'
import { workerEntry } from '../worker-entry.js'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import type Database from 'better-sqlite3'
import type { FastifyBaseLogger } from 'fastify'
import { passageRanges, type ChunkOptions } from '../ingest/chunker.js'
import { PASSAGE_INDEXES, passageWindows } from './passages.js'
import type { JobQueue } from '../jobs/queue.js'
import { preparedWrite } from '../db/prepared.js'
import { and, eq, ne, sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { knowledgeDocuments } from '../../schema/tables/knowledge.js'
import { newWriteIntent, releaseHolder, writeIntentOf } from '../db/write-intent.js'
import type { KnowledgeFiles } from './files.js'
import type { IndexMessage, IndexReply, IndexTask } from './index-worker.js'
import { PAIRS_BEHIND_SQL } from './phrase-index.js'
import { remakeIfMadeOtherwise } from './phrase-catch-up.js'
import { openSearchConnection, TRIGRAM_TABLE, trigramsBehind } from './trigram-file.js'
import { mergeWanted } from './fts-segments.js'

/** the characters of an upload's text counted per turn (with the 64 KB pieces of intake.ts): young garbage */
const COUNT_WINDOW_CHARS = 64 * 1024
/** how long one counting step may hold the event loop */
const SLICE_MS = 25
const entry = workerEntry(import.meta.url, 'index-worker')
/**
 * The worker holds a 1 MB window of text and its passages at a time: a small young generation and a bounded old
 * one make its isolate collect early instead of growing towards V8's defaults (peak RSS of a 50 MB ingest).
 */
const WORKER_HEAP = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 256 }
/** an idle index worker (merges done) ends after this long; the next task starts another */
const IDLE_CLOSE_MS = 5000

/**
 * The index worker (src/knowledge/index-worker.ts) seen from the server: started on the first task, ended
 * when idle. A task resolves once its passages are committed; a worker that dies fails its tasks (the job
 * runner retries them from `indexed_count`).
 */
function indexThread(file: string, intent: Int32Array, log: FastifyBaseLogger, onTaskEnd: () => void) {
  type Slot = { worker: Worker; exited: Promise<void> }
  let current: Slot | undefined
  const pending = new Map<number, { resolve: () => void; reject: (err: Error) => void; slot: Slot }>()
  let nextId = 1
  let idleTimer: NodeJS.Timeout | undefined

  function spawn(): Slot {
    const worker = new Worker(entry.script, { eval: entry.eval,
      workerData: { file, intent }, resourceLimits: WORKER_HEAP })
    worker.unref()
    const slot: Slot = { worker, exited: new Promise((resolve) => worker.once('exit', () => resolve())) }
    worker.on('message', (m: IndexReply) => {
      if ('warning' in m) { log.warn(m.warning); return }
      if ('idle' in m) {
        if (slot === current && pending.size === 0) {
          clearTimeout(idleTimer)
          idleTimer = setTimeout(retire, IDLE_CLOSE_MS).unref()
        }
        return
      }
      const p = pending.get(m.id)
      if (!p) return
      pending.delete(m.id)
      onTaskEnd()
      if (m.error === undefined) p.resolve()
      else p.reject(new Error(m.error))
    })
    worker.on('error', (err) => log.error({ err }, 'index worker failed'))
    worker.on('exit', () => {
      // a worker ended while it held the lock (terminated, crashed) cannot signal its end
      if (current === slot || current === undefined) releaseHolder(intent)
      if (current === slot) current = undefined
      onTaskEnd()
      for (const [id, p] of pending) {
        if (p.slot === slot) { pending.delete(id); p.reject(new Error('the index worker stopped')) }
      }
    })
    return slot
  }

  function retire() {
    if (!current || pending.size > 0) return
    current.worker.postMessage({ close: true } satisfies IndexMessage)
    current = undefined
  }

  function send(message: (id: number) => IndexMessage, signal?: AbortSignal): Promise<void> {
    clearTimeout(idleTimer)
    const slot = current ??= spawn()
    const id = nextId++
    const stop = () => slot.worker.postMessage({ stop: id } satisfies IndexMessage)
    signal?.addEventListener('abort', stop, { once: true })
    return new Promise<void>((resolve, reject) => {
      pending.set(id, { resolve, reject, slot })
      slot.worker.postMessage(message(id))
    }).finally(() => signal?.removeEventListener('abort', stop))
  }

  return {
    index: (task: Omit<IndexTask, 'id'>, signal?: AbortSignal) => send((id) => ({ task: { ...task, id } }), signal),
    purge: (documentId: string) => send((id) => ({ purge: id, documentId })),
    /** starts the worker for its idle work only: the pair index's catch-up (resolves at once) */
    catchUp: () => send((id) => ({ catchUp: id })),
    /** stops the tasks in progress (they fail as interrupted) and ends the worker */
    async close() {
      clearTimeout(idleTimer)
      const slot = current
      current = undefined
      if (!slot) return
      slot.worker.postMessage({ close: true } satisfies IndexMessage)
      const timeout = setTimeout(() => { void slot.worker.terminate() }, 5000)
      await slot.exited
      clearTimeout(timeout)
    }
  }
}

/**
 * Indexing of knowledge documents, on the index worker. `knowledge.index` stores a document's passages in
 * short transactions (resuming from `indexed_count` after a restart); `knowledge.purge` removes the passages
 * of a deleted document the same way. `indexNow` runs the same work while an upload request waits, for
 * read-your-writes, under a job claimed in the document's own transaction.
 */
export function createIndexer(deps: { sqlite: Database.Database; jobs: JobQueue; files: KnowledgeFiles;
  log: FastifyBaseLogger; onTaskEnd?: () => void; onIndexed?: (documentId: string) => void }) {
  const { sqlite, jobs, files } = deps
  const db = drizzle(sqlite)
  const docs = knowledgeDocuments
  const byId = db.select({ status: docs.status, textPath: docs.textPath }).from(docs)
    .where(eq(docs.id, sql.placeholder('id'))).prepare()
  const markProcessing = preparedWrite(sqlite, db.update(docs)
    .set({ status: 'processing', updatedAt: sql`${sql.placeholder('now')}` })
    .where(and(eq(docs.id, sql.placeholder('id')), ne(docs.status, 'processing'))))
  // the server connection's writes in progress (src/db/write-intent.ts): the worker lets them in first
  const thread = indexThread(sqlite.name, writeIntentOf(sqlite) ?? newWriteIntent(), deps.log,
    deps.onTaskEnd ?? (() => {}))

  remakeIfMadeOtherwise(sqlite)
  // passages the pair index has not reached (a restart mid-way, or a database from before migration 0019): the
  // worker catches up in the background; searches use the trigram index for them meanwhile
  const pairsBehind = sqlite.prepare(PAIRS_BEHIND_SQL).pluck()
  // and an index whose ingest merge settings (automerge off, src/knowledge/index-worker.ts) were left by a process
  // stopped mid-ingest: FTS5 keeps them with the index, and its segments would pile up until the next upload
  const mergesLeftOff = sqlite.prepare(PASSAGE_INDEXES.map((t) => `SELECT 1 FROM ${t}_config
    WHERE k = 'automerge' AND v = 0`).join(' UNION ALL ')).pluck()
  // and passages or deletes the trigram file has not reached (a restart mid-ingest: src/knowledge/trigram-file.ts)
  // and an index with a merge left in progress or worth merging into one segment (a process stopped before its idle
  // merges were done, or an upgrade: src/knowledge/fts-segments.ts)
  const peek = openSearchConnection(sqlite.name)
  let trigramsLate, unmerged
  try {
    trigramsLate = trigramsBehind(peek)
    unmerged = [...PASSAGE_INDEXES, `trigrams.${TRIGRAM_TABLE}`].some((t) => mergeWanted(peek, t)())
  } finally {
    peek.close()
  }
  // and indexed documents without a character filter (src/knowledge/short-query-filter.ts: an upgrade, a stop before
  // idle)
  const filtersLacking = sqlite.prepare(`SELECT 1 FROM knowledge_documents d WHERE d.status = 'indexed'
    AND d.chunk_count > 0 AND NOT EXISTS (SELECT 1 FROM knowledge_document_grams g WHERE g.document_id = d.id)
    LIMIT 1`).pluck()
  // and indexed documents without a title (indexed before titles and heading paths were stored: outline-backfill.ts)
  const untitled = sqlite.prepare(`SELECT 1 FROM knowledge_documents WHERE title IS NULL AND +status = 'indexed'
    LIMIT 1`).pluck()
  if (pairsBehind.get() === 1 || mergesLeftOff.get() === 1 || trigramsLate || unmerged ||
    filtersLacking.get() === 1 || untitled.get() === 1) {
    thread.catchUp().catch((err: unknown) => deps.log.warn({ err }, 'the pair index could not catch up'))
  }

  /** tells the workspace event stream of a document the worker has finished */
  const indexed = (documentId: string) => {
    if (deps.onIndexed && byId.get({ id: documentId })?.status === 'indexed') deps.onIndexed(documentId)
  }

  jobs.register('knowledge.index', async (payload, ctx) => {
    const { documentId } = payload
    const doc = byId.get({ id: documentId })
    if (!doc || doc.status === 'indexed') return
    markProcessing.run({ now: new Date().toISOString(), id: documentId })
    await thread.index({ documentId, textFile: files.abs(doc.textPath) }, ctx.signal)
    indexed(documentId)
  }, { maxAttempts: 5, backoffMs: 2000 })

  // a deleted document's passages leave the word index after its row: once they are gone, the organization's version
  // is raised, so that search figures cached for it (reader-statistics.ts: df, avgdl) stop counting them
  const documentsChanged = sqlite.prepare(`UPDATE knowledge_listing_versions SET version = version + 1
    WHERE customer_id = ?`)
  jobs.register('knowledge.purge', async (payload) => {
    await thread.purge(payload.documentId)
    if (payload.customerId) documentsChanged.run(payload.customerId)
  }, { maxAttempts: 5 })

  return {
    /**
     * Indexes a just-created document while its upload waits, under the job claimed with it: when this
     * fails, the job goes back to the runner, which resumes where it stopped.
     */
    async indexNow(documentId: string, text: string, jobId: string) {
      try {
        const doc = byId.get({ id: documentId })
        if (doc) {
          await thread.index({ documentId, textFile: files.abs(doc.textPath), text, jobId })
          indexed(documentId)
        } else jobs.complete(jobId)
      } catch (err) {
        deps.log.warn({ err, documentId }, 'indexing at upload failed: left to the background job')
        jobs.release(jobId, err instanceof Error ? err.message : String(err))
      }
    },

    /** ends the index worker (tasks in progress fail as interrupted; their jobs resume at the next start) */
    close: () => thread.close(),

    /** The number of passages of a text given in pieces, a window at a time. */
    async countPieces(pieces: AsyncIterable<string>, options: ChunkOptions): Promise<number> {
      let count = 0
      for await (const { decided } of passageWindows(pieces, options, COUNT_WINDOW_CHARS)) {
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
