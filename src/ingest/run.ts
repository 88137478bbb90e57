import { Worker } from 'node:worker_threads'
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

export interface WorkerLimits {
  timeoutMs: number
  maxHeapMb: number
  maxUncompressedBytes: number
  /** extraction workers running at once */
  concurrency: number
}

export const DEFAULT_WORKER_LIMITS: WorkerLimits = {
  timeoutMs: 60_000,
  maxHeapMb: 1024,
  maxUncompressedBytes: 256 * 1024 * 1024,
  concurrency: 2
}

// Compiled, the worker is plain JS. From source (tsx, tap) it is TypeScript, and a worker thread does not
// inherit the parent's module hooks: a small bootstrap registers tsx (a dev dependency) first.
const fromSource = fileURLToPath(import.meta.url).endsWith('.ts')
const workerUrl = new URL(fromSource ? './extract-worker.ts' : './extract-worker.js', import.meta.url)
// pdf.js loads before tsx registers: through tsx's module hooks it took seconds in every new worker (tests)
const PRELOAD = ['pdfjs-dist/legacy/build/pdf.mjs', 'pdfjs-dist/legacy/build/pdf.worker.mjs']
const sourceBootstrap = `Promise.all(${JSON.stringify(PRELOAD)}.map((m) => import(m)))
  .then(() => import('tsx/esm/api')).then(({ register }) => { register(); return import(${JSON.stringify(workerUrl.href)}) })`

export function createExtractor(limits: WorkerLimits = DEFAULT_WORKER_LIMITS) {
  /** idle workers, kept warm (pdf.js and mammoth stay loaded); a worker that failed is never reused */
  const idle: Worker[] = []
  const all = new Set<Worker>()
  let running = 0
  const waiting: Array<() => void> = []

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

  async function slot(): Promise<() => void> {
    if (running >= limits.concurrency) await new Promise<void>((resolve) => waiting.push(resolve))
    running++
    return () => {
      running--
      waiting.shift()?.()
    }
  }

  function run(worker: Worker, job: ExtractJob) {
    return new Promise<{ result?: { textLength: number; chunkCount: number }; error?: Error; reusable: boolean }>((resolve) => {
      const done = (outcome: { result?: { textLength: number; chunkCount: number }; error?: Error; reusable: boolean }) => {
        clearTimeout(timer)
        worker.off('message', onMessage).off('error', onError).off('exit', onExit)
        resolve(outcome)
      }
      const onMessage = (o: ExtractOutcome) => done(o.ok
        ? { result: { textLength: o.textLength, chunkCount: o.chunkCount }, reusable: true }
        : { error: o.unreadable ? new UnreadableFileError(o.message) : new Error(o.message), reusable: true })
      const onError = (err: Error & { code?: string }) => done({
        error: err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new UnreadableFileError('Text extraction needed more memory than allowed: refused') : err,
        reusable: false
      })
      const onExit = (code: number) => done({ error: new UnreadableFileError(`Text extraction stopped unexpectedly (exit ${code})`), reusable: false })
      const timer = setTimeout(() => done({
        error: new UnreadableFileError(`Text extraction took longer than ${Math.round(limits.timeoutMs / 1000)} s: refused`), reusable: false
      }), limits.timeoutMs)
      worker.on('message', onMessage).on('error', onError).on('exit', onExit)
      worker.postMessage(job)
    })
  }

  /**
   * Extracts `source` into the text file `target` in a pooled worker with a time and heap limit.
   * Rejects with UnreadableFileError for a file that cannot be read within the limits.
   */
  async function extract(source: string, target: string, kind: ExtractorKind, chunk: ChunkOptions) {
    const release = await slot()
    const worker = idle.pop() ?? spawn()
    try {
      const outcome = await run(worker, { source, target, kind, chunk, limits: { maxUncompressedBytes: limits.maxUncompressedBytes } })
      if (outcome.reusable) idle.push(worker)
      else void worker.terminate()
      if (outcome.error) throw outcome.error
      return outcome.result!
    } finally {
      release()
    }
  }

  /** Stops every worker (at shutdown). */
  async function close() {
    idle.length = 0
    await Promise.all([...all].map((w) => w.terminate()))
  }

  return { extract, close }
}

export type Extractor = ReturnType<typeof createExtractor>
