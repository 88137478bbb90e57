import { Worker } from 'node:worker_threads'
import { workerEntry } from '../worker-entry.js'
import type { FastifyBaseLogger } from 'fastify'
import { EmbeddingsNotConfiguredError, QueryRefusedError, type SearchHit, type SearchMode, type SearchWarning }
  from './search.js'
import { EmbeddingError, type EmbeddingConfig } from './embeddings.js'
import type { DocFilters, Reader } from './readers.js'
import type { SearchSettingsOverrides } from './search-settings.js'
import type { Plan } from './planner.js'
import type { SearchRequest, SearchReply, SearchWork } from './search-worker.js'
import { repetitionProblem } from './query.js'
import type { KindHit, KindsRequest } from '../search/kinds.js'

const entry = workerEntry(import.meta.url, 'search-worker')
/**
 * A search reads passages' texts by the hundred and lets them go at once: V8's default young generation grows to tens
 * of MB a thread, and the process keeps them (`npm run bench -- ingest`, peak RSS); searches take as long with this
 * (`npm run bench -- search`)
 */
const SEARCH_HEAP = { maxYoungGenerationSizeMb: 8 }
/**
 * A search told to stop (its budget spent, or its worker wanted by another organization) answers at its next look at
 * the clock; one that has not answered this long after (one SQLite statement running on) gets an empty partial
 * answer, and its worker is stopped and replaced
 */
export const STOP_GRACE_MS = 500

/**
 * a search's answer: `partial` when it stopped at its time budget, or was stopped, before it was done; `warnings`
 * when a part of hybrid could not run (the embedding server unreachable)
 */
export interface SearchAnswer { hits: SearchHit[]; partial: boolean; warnings: SearchWarning[];
  /** the path the search took and why (planner.ts) */ plan?: Plan }
export interface UnifiedAnswer { passages: SearchHit[]; kinds: KindHit[]; partial: boolean; warnings: SearchWarning[] }

type Job = {
  org: string
  request: SearchWork
  resolve: (reply: SearchReply) => void
  reject: (err: Error) => void
}
type Slot = {
  worker: Worker
  /** set to 1 to tell the running search to stop and answer what it has */
  stop: Int32Array
  job?: Job & { id: number; started?: boolean; stopping?: boolean; timer?: NodeJS.Timeout }
}

/**
 * Passage search (and unified search's other kinds) on worker threads, each with a read-only connection (WAL:
 * readers see every committed write and never wait for the writer). Workers start when needed, up to `size`; each
 * runs one search at a time.
 *
 * Scheduled fairly per organization: searches wait in one queue per organization, and a free worker takes the next
 * search of the organization with the fewest running, round-robin among equals, so one organization's searches never
 * wait behind another's queue. An organization runs on more than one worker only while no other waits: when another
 * organization's search finds every worker busy, the newest search of an organization holding more than one is told
 * to stop. Each search has a time budget (`budgetMs`); a search past it, or told to stop, answers what it found,
 * flagged `partial`. A worker stuck in one long statement is replaced after STOP_GRACE_MS, and its thread counts as
 * its organization's running search until it has ended.
 */
export function createSearchPool(file: string,
  options: { size: number; embeddings?: Required<Pick<EmbeddingConfig, 'baseUrl' | 'model'>> & EmbeddingConfig;
    log?: FastifyBaseLogger; /** each worker's SQLite page cache */ cacheMb?: number;
    /** each search's time budget on a worker, in ms */ budgetMs?: number;
    /** overrides of the search's tuned bounds (src/knowledge/search-settings.ts) */
    settings?: SearchSettingsOverrides }) {
  const budgetMs = options.budgetMs ?? 2000
  const workers: Slot[] = []
  /** each organization's waiting searches */
  const queues = new Map<string, Job[]>()
  /** each organization's searches on a worker, with the threads of its stopped ones still running */
  const running = new Map<string, number>()
  /** when (nextId) each organization with searches waiting or running was last served */
  const served = new Map<string, number>()
  let nextId = 1
  let closed = false

  function spawn(): Slot {
    const stop = new Int32Array(new SharedArrayBuffer(4))
    const worker = new Worker(entry.script,
      { eval: entry.eval, workerData: { file, embeddings: options.embeddings, cacheMb: options.cacheMb,
        settings: options.settings, stop },
      resourceLimits: SEARCH_HEAP })
    const slot: Slot = { worker, stop }
    worker.on('message', (m: SearchReply) => {
      const job = slot.job
      if (!job || job.id !== m.id) return
      if (m.started) {
        // timed from its start on the worker (a new worker's first search waits for its thread to load); the worker
        // keeps to the budget itself: this only for a statement that runs on past it
        job.started = true
        job.timer = setTimeout(() => abandon(slot), job.stopping ? STOP_GRACE_MS : budgetMs + STOP_GRACE_MS)
        return
      }
      finish(slot)
      job.resolve(m)
      pump()
    })
    // a worker that dies fails its search and is replaced on the next one
    worker.on('error', (err) => options.log?.error({ err }, 'search worker failed'))
    worker.on('exit', () => {
      const at = workers.indexOf(slot)
      if (at >= 0) workers.splice(at, 1)
      const job = slot.job
      if (job) {
        finish(slot)
        job.reject(new Error('the search worker stopped'))
      }
      pump()
    })
    workers.push(slot)
    return slot
  }

  function finish(slot: Slot) {
    const job = slot.job!
    clearTimeout(job.timer)
    slot.job = undefined
    ended(job.org)
  }

  function ended(org: string) {
    running.set(org, running.get(org)! - 1)
    if (running.get(org) !== 0) return
    running.delete(org)
    if (!queues.has(org)) served.delete(org)
  }

  /** a search that did not answer in time: an empty partial answer, and its worker replaced */
  function abandon(slot: Slot) {
    const job = slot.job!
    options.log?.warn({ org: job.org }, 'a search did not stop within its grace: its worker is replaced')
    clearTimeout(job.timer)
    slot.job = undefined
    workers.splice(workers.indexOf(slot), 1)
    // (its organization's count falls when the thread has really ended)
    slot.worker.removeAllListeners('exit')
    slot.worker.once('exit', () => {
      ended(job.org)
      pump()
    })
    void slot.worker.terminate()
    job.resolve({ id: job.id, hits: [], kinds: [], partial: true })
    pump()
  }

  function tellToStop(slot: Slot) {
    const job = slot.job!
    if (job.stopping) return
    job.stopping = true
    Atomics.store(slot.stop, 0, 1)
    if (!job.started) return
    clearTimeout(job.timer)
    job.timer = setTimeout(() => abandon(slot), STOP_GRACE_MS)
  }

  /** the organization whose search goes next: the fewest running, the one served longest ago among equals */
  function nextOrg(): string | undefined {
    let best: string | undefined
    for (const org of queues.keys()) {
      if (best === undefined) { best = org; continue }
      const d = (running.get(org) ?? 0) - (running.get(best) ?? 0)
      if (d < 0 || (d === 0 && (served.get(org) ?? 0) < (served.get(best) ?? 0))) best = org
    }
    return best
  }

  function pump() {
    while (!closed) {
      const org = nextOrg()
      if (org === undefined) return
      let slot = workers.find((w) => !w.job)
      if (!slot && workers.length < options.size) slot = spawn()
      if (!slot) {
        if ((running.get(org) ?? 0) === 0) makeRoom()
        return
      }
      const queue = queues.get(org)!
      const job = queue.shift()!
      if (queue.length === 0) queues.delete(org)
      running.set(org, (running.get(org) ?? 0) + 1)
      const id = nextId++
      served.set(org, id)
      Atomics.store(slot.stop, 0, 0)
      slot.job = { ...job, id }
      slot.worker.postMessage({ ...job.request, id, budgetMs } satisfies SearchRequest)
    }
  }

  /**
   * Another organization waits with no search running and every worker busy: the newest search of an organization
   * holding more than one worker is told to stop (one for each such waiting organization)
   */
  function makeRoom() {
    const stopping = workers.filter((w) => w.job?.stopping)
    let waiting = [...queues.keys()].filter((org) => !running.has(org)).length - stopping.length
    // each organization's searches not told to stop
    const share = new Map<string, number>()
    for (const w of workers) if (w.job && !w.job.stopping) share.set(w.job.org, (share.get(w.job.org) ?? 0) + 1)
    for (const slot of workers.filter((w) => w.job && !w.job.stopping).sort((a, b) => b.job!.id - a.job!.id)) {
      if (waiting <= 0) return
      const org = slot.job!.org
      if (share.get(org)! <= 1) continue
      share.set(org, share.get(org)! - 1)
      tellToStop(slot)
      waiting--
    }
  }

  function submit(org: string, request: Job['request']): Promise<SearchReply> {
    if (closed) return Promise.reject(new Error('search is closed'))
    const problem = repetitionProblem(request.query)
    if (problem) return Promise.reject(new QueryRefusedError(problem))
    return new Promise<SearchReply>((resolve, reject) => {
      const queue = queues.get(org)
      if (queue) queue.push({ org, request, resolve, reject })
      else queues.set(org, [{ org, request, resolve, reject }])
      pump()
    })
  }

  async function run(reader: Reader, filters: DocFilters, query: string, limit: number,
    mode: SearchMode = 'hybrid'): Promise<SearchAnswer> {
    if (mode === 'semantic' && !options.embeddings) throw new EmbeddingsNotConfiguredError()
    const m = await submit(reader.customerId, { kind: 'passages', reader, filters, query, limit, mode })
    if (m.error?.kind === 'not-configured') throw new EmbeddingsNotConfiguredError()
    if (m.error?.kind === 'embedding') throw new EmbeddingError(m.error.message)
    if (m.error) throw new Error(m.error.message)
    return { hits: m.hits ?? [], partial: m.partial ?? false, warnings: m.warnings ?? [], plan: m.plan }
  }

  return {
    get semanticEnabled() { return !!options.embeddings },

    /** the passages, flagged `partial` when the search stopped before it was done; QueryRefusedError: 400 */
    run,

    /** the passages alone (the assistant's tools, workflow steps): a refused query finds nothing */
    async search(reader: Reader, filters: DocFilters, query: string, limit: number,
      mode: SearchMode = 'hybrid'): Promise<SearchHit[]> {
      return (await run(reader, filters, query, limit, mode).catch((err: unknown) => {
        if (err instanceof QueryRefusedError) return { hits: [], partial: false, warnings: [] }
        throw err
      })).hits
    },

    /** unified search's (src/search/search.ts): hybrid passages, then the other kinds (src/search/kinds.ts) */
    async unified(reader: Reader, request: KindsRequest): Promise<UnifiedAnswer> {
      const m = await submit(reader.customerId, { kind: 'unified', reader, ...request })
      if (m.error?.kind === 'embedding') throw new EmbeddingError(m.error.message)
      if (m.error) throw new Error(m.error.message)
      return { passages: m.hits ?? [], kinds: m.kinds ?? [], partial: m.partial ?? false, warnings: m.warnings ?? [] }
    },

    async close() {
      closed = true
      for (const queue of queues.values()) for (const job of queue) job.reject(new Error('search is closed'))
      queues.clear()
      await Promise.all(workers.map((w) => w.worker.terminate()))
    }
  }
}

export type SearchPool = ReturnType<typeof createSearchPool>
