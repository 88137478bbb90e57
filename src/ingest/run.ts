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

// from source (tsx, tap) the worker is the .ts file and inherits the loader through execArgv
const self = fileURLToPath(import.meta.url)
const workerUrl = new URL(self.endsWith('.ts') ? './extract-worker.ts' : './extract-worker.js', import.meta.url)

export function createExtractor(limits: WorkerLimits = DEFAULT_WORKER_LIMITS) {
  let running = 0
  const waiting: Array<() => void> = []

  async function slot(): Promise<() => void> {
    if (running >= limits.concurrency) await new Promise<void>((resolve) => waiting.push(resolve))
    running++
    return () => {
      running--
      waiting.shift()?.()
    }
  }

  /**
   * Extracts `source` into the text file `target`, in a worker with a time and heap limit.
   * Rejects with UnreadableFileError for a file that cannot be read within the limits.
   */
  async function extract(source: string, target: string, kind: ExtractorKind, chunk: ChunkOptions) {
    const release = await slot()
    try {
      return await new Promise<{ textLength: number; chunkCount: number }>((resolve, reject) => {
        const job: ExtractJob = { source, target, kind, chunk, limits: { maxUncompressedBytes: limits.maxUncompressedBytes } }
        const worker = new Worker(workerUrl, {
          workerData: job,
          execArgv: process.execArgv,
          resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb, maxYoungGenerationSizeMb: 64 }
        })
        let settled = false
        const finish = (fn: () => void) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          fn()
          void worker.terminate()
        }
        const timer = setTimeout(() => finish(() => reject(new UnreadableFileError(
          `Text extraction took longer than ${Math.round(limits.timeoutMs / 1000)} s: refused`))), limits.timeoutMs)
        worker.on('message', (outcome: ExtractOutcome) => finish(() => {
          if (outcome.ok) resolve({ textLength: outcome.textLength, chunkCount: outcome.chunkCount })
          else if (outcome.unreadable) reject(new UnreadableFileError(outcome.message))
          else reject(new Error(outcome.message))
        }))
        worker.on('error', (err: Error & { code?: string }) => finish(() => reject(err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new UnreadableFileError('Text extraction needed more memory than allowed: refused')
          : err)))
        worker.on('exit', (code) => finish(() => reject(new UnreadableFileError(`Text extraction stopped unexpectedly (exit ${code})`))))
      })
    } finally {
      release()
    }
  }

  return { extract }
}

export type Extractor = ReturnType<typeof createExtractor>
