import { Worker } from 'node:worker_threads'
import { workerEntry } from '../worker-entry.js'
import type { FastifyBaseLogger } from 'fastify'
import { EmbeddingsNotConfiguredError, type SearchHit, type SearchMode } from './search.js'
import { EmbeddingError, type EmbeddingConfig } from './embeddings.js'
import type { DocFilters, Reader } from './readers.js'
import type { SearchRequest } from './search-worker.js'

const entry = workerEntry(import.meta.url, 'search-worker')
/**
 * A search reads passages' texts by the hundred and lets them go at once: V8's default young generation grows to tens
 * of MB a thread, and with it the process kept 20–35 MB more (a 50 MB ingest's peak RSS 281–308 MB, against 264–269
 * with 8 MB, `bench ingest`); searches at 1,000,000 passages took as long (`bench search`, alternated)
 */
const SEARCH_HEAP = { maxYoungGenerationSizeMb: 8 }

type Reply = { id: number; hits?: SearchHit[]; error?: { kind: string; message: string } }

/**
 * Passage search on worker threads, each with a read-only connection (WAL: readers see every committed
 * write and never wait for the writer). Workers start when needed (the first search, or all busy); a request goes to an
 * idle or the least busy one.
 */
export function createSearchPool(file: string,
  options: { size: number; embeddings?: Required<Pick<EmbeddingConfig, 'baseUrl' | 'model'>> & EmbeddingConfig;
    log?: FastifyBaseLogger; sweep?: boolean; /** each worker's SQLite page cache */ cacheMb?: number }) {
  const workers: Array<{ worker: Worker; busy: number }> = []
  const pending = new Map<number,
    { resolve: (hits: SearchHit[]) => void; reject: (err: Error) => void; slot: { busy: number } }>()
  let nextId = 1
  let closed = false

  // the first worker (and the next one, should it die) also back-fills the character filters (grams.ts)
  let sweeper: Worker | undefined
  function spawn() {
    const sweep = !sweeper && options.sweep !== false
    const worker = new Worker(entry.script,
      { eval: entry.eval, workerData: { file, embeddings: options.embeddings, sweep, cacheMb: options.cacheMb },
        resourceLimits: SEARCH_HEAP })
    if (sweep) sweeper = worker
    const slot = { worker, busy: 0 }
    worker.on('message', (m: Reply) => {
      if (m.error?.kind === 'sweep') options.log?.error({ err: m.error }, 'character filter back-fill stopped')
      const p = pending.get(m.id)
      if (!p) return
      pending.delete(m.id)
      p.slot.busy--
      if (m.hits) p.resolve(m.hits)
      else if (m.error?.kind === 'not-configured') p.reject(new EmbeddingsNotConfiguredError())
      else if (m.error?.kind === 'embedding') p.reject(new EmbeddingError(m.error.message))
      else p.reject(new Error(m.error?.message ?? 'search failed'))
    })
    // a worker that dies fails its requests and is replaced on the next search
    worker.on('error', (err) => options.log?.error({ err }, 'search worker failed'))
    worker.on('exit', () => {
      if (sweeper === worker) sweeper = undefined
      workers.splice(workers.indexOf(slot), 1)
      for (const [id,
        p] of pending) if (p.slot === slot) { pending.delete(id); p.reject(new Error('the search worker stopped')) }
    })
    workers.push(slot)
    return slot
  }

  return {
    get semanticEnabled() { return !!options.embeddings },

    search(reader: Reader, filters: DocFilters, query: string, limit: number,
      mode: SearchMode = 'hybrid'): Promise<SearchHit[]> {
      if (closed) return Promise.reject(new Error('search is closed'))
      if (mode === 'semantic' && !options.embeddings) return Promise.reject(new EmbeddingsNotConfiguredError())
      // an idle worker if there is one; a new one only while every worker is busy
      const idle = workers.find((w) => w.busy === 0)
      const slot = idle ??
        (workers.length < options.size ? spawn() : workers.reduce((a, b) => (b.busy < a.busy ? b : a)))
      const id = nextId++
      slot.busy++
      return new Promise<SearchHit[]>((resolve, reject) => {
        pending.set(id, { resolve, reject, slot })
        const request: SearchRequest = { id, reader, filters, query, limit, mode }
        slot.worker.postMessage(request)
      })
    },

    async close() {
      closed = true
      await Promise.all(workers.map((w) => w.worker.terminate()))
    }
  }
}

export type SearchPool = ReturnType<typeof createSearchPool>
