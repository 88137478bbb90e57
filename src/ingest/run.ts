import { Worker } from 'node:worker_threads'
import { EventEmitter } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { ExtractorKind } from './formats.js'
import type { ChunkOptions } from './chunker.js'
import type { ExtractLimits } from './extract.js'
import { UnreadableFileError } from './text.js'

export interface ExtractJob {
  source: string
  target: string
  kind: ExtractorKind
  chunk: ChunkOptions
  limits: ExtractLimits
}

export type ExtractOutcome =
  | { ok: true; textLength: number; chunkCount: number }
  | { ok: false; unreadable: boolean; message: string }

export interface WorkerLimits extends ExtractLimits {
  /** the longest one file may take */
  timeoutMs: number
  maxHeapMb: number
  /** extraction workers running at once; one caller holds at most concurrency - 1 of them (at least 1) */
  concurrency: number
}

export const DEFAULT_WORKER_LIMITS: WorkerLimits = {
  timeoutMs: 60_000,
  maxHeapMb: 1024,
  maxUncompressedBytes: 256 * 1024 * 1024,
  maxPdfPages: 5000,
  pdfPageTimeoutMs: 5000,
  concurrency: 2
}

/** What the pool reports, for tests and logs: `queued`, `start` and `end`, each with the caller and source. */
export interface ExtractEvent { caller: string; source: string }

// Compiled, the worker is plain JS. From source (tsx, tap) it is TypeScript, and a worker thread does not
// inherit the parent's module hooks: a small bootstrap registers tsx (a dev dependency) first.
const fromSource = fileURLToPath(import.meta.url).endsWith('.ts')
const workerUrl = new URL(fromSource ? './extract-worker.ts' : './extract-worker.js', import.meta.url)
// pdf.js loads before tsx registers: through tsx's module hooks it took seconds in every new worker (tests)
const PRELOAD = ['pdfjs-dist/legacy/build/pdf.mjs', 'pdfjs-dist/legacy/build/pdf.worker.mjs']
const sourceBootstrap = `Promise.all(${JSON.stringify(PRELOAD)}.map((m) => import(m)))
  .then(() => import('tsx/esm/api'))
  .then(({ register }) => { register(); return import(${JSON.stringify(workerUrl.href)}) })`

export function createExtractor(limits: WorkerLimits = DEFAULT_WORKER_LIMITS) {
  /** idle workers, kept warm (pdf.js and mammoth stay loaded); a worker that failed is never reused */
  const idle: Worker[] = []
  const all = new Set<Worker>()
  let running = 0
  const perCaller = Math.max(1, limits.concurrency - 1)
  const runningBy = new Map<string, number>()
  /** files waiting, per caller */
  const waiting = new Map<string, Array<() => void>>()
  /** when each caller was last handed a worker: the one served longest ago goes first (round robin) */
  const lastServed = new Map<string, number>()
  let turn = 0
  const events = new EventEmitter()

  function spawn(): Worker {
    const worker = new Worker(fromSource ? sourceBootstrap : workerUrl, {
      eval: fromSource,
      resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb, maxYoungGenerationSizeMb: 64 }
    })
    worker.unref()
    all.add(worker)
    worker.once('exit', () => all.delete(worker))
    return worker
  }

  /** Hands free workers to waiting callers in turn, never more than `perCaller` to one caller. */
  function pump() {
    while (running < limits.concurrency) {
      let chosen: string | undefined
      for (const caller of waiting.keys()) {
        if ((runningBy.get(caller) ?? 0) >= perCaller) continue
        if (chosen === undefined || (lastServed.get(caller) ?? -1) < (lastServed.get(chosen) ?? -1)) chosen = caller
      }
      if (chosen === undefined) return
      const queue = waiting.get(chosen)!
      const go = queue.shift()!
      if (queue.length === 0) waiting.delete(chosen)
      lastServed.set(chosen, ++turn)
      running++
      runningBy.set(chosen, (runningBy.get(chosen) ?? 0) + 1)
      go()
    }
  }

  async function slot(caller: string): Promise<() => void> {
    await new Promise<void>((resolve) => {
      const queue = waiting.get(caller)
      if (queue) queue.push(resolve)
      else waiting.set(caller, [resolve])
      pump()
    })
    return () => {
      running--
      const n = runningBy.get(caller)! - 1
      if (n === 0) runningBy.delete(caller)
      else runningBy.set(caller, n)
      if (n === 0 && !waiting.has(caller)) lastServed.delete(caller)
      pump()
    }
  }

  function run(worker: Worker, job: ExtractJob) {
    return new Promise<{ result?: { textLength: number;
      chunkCount: number }; error?: Error; reusable: boolean }>((resolve) => {
      const done = (outcome: { result?: { textLength: number; chunkCount: number }; error?: Error;
        reusable: boolean }) => {
        clearTimeout(timer)
        worker.off('message', onMessage).off('error', onError).off('exit', onExit)
        resolve(outcome)
      }
      const onMessage = (o: ExtractOutcome) => done(o.ok
        ? { result: { textLength: o.textLength, chunkCount: o.chunkCount }, reusable: true }
        : { error: o.unreadable ? new UnreadableFileError(o.message) : new Error(o.message), reusable: true })
      const onError = (err: Error & { code?: string }) => done({
        error: err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new UnreadableFileError('Text extraction needed more memory than allowed: refused') : err,
        reusable: false
      })
      const onExit = (code: number) =>
        done({ error: new UnreadableFileError(`Text extraction stopped unexpectedly (exit ${code})`), reusable: false })
      const timer = setTimeout(() => done({
        error: new UnreadableFileError(
          `Text extraction took longer than ${Math.round(limits.timeoutMs / 1000)} s: refused`),
        reusable: false
      }), limits.timeoutMs)
      worker.on('message', onMessage).on('error', onError).on('exit', onExit)
      worker.postMessage(job)
    })
  }

  /**
   * Extracts `source` into the text file `target` in a pooled worker with a time and heap limit, taking
   * turns with other callers (an organization, say). Rejects with UnreadableFileError for a file that
   * cannot be read within the limits.
   */
  async function extract(source: string, target: string, kind: ExtractorKind, chunk: ChunkOptions, caller = '') {
    events.emit('queued', { caller, source } satisfies ExtractEvent)
    const release = await slot(caller)
    events.emit('start', { caller, source } satisfies ExtractEvent)
    const worker = idle.pop() ?? spawn()
    try {
      const { maxUncompressedBytes, maxPdfPages, pdfPageTimeoutMs } = limits
      const outcome = await run(worker,
        { source, target, kind, chunk, limits: { maxUncompressedBytes, maxPdfPages, pdfPageTimeoutMs } })
      if (outcome.reusable) idle.push(worker)
      else void worker.terminate()
      if (outcome.error) throw outcome.error
      return outcome.result!
    } finally {
      release()
      events.emit('end', { caller, source } satisfies ExtractEvent)
    }
  }

  /** Stops every worker (at shutdown). */
  async function close() {
    idle.length = 0
    await Promise.all([...all].map((w) => w.terminate()))
  }

  return { extract, close, events }
}

export type Extractor = ReturnType<typeof createExtractor>
