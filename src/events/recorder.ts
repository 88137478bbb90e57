export interface RecorderOptions {
  /** recording starts once this many wait */
  batch: number
  /** or once the oldest has waited this long */
  delayMs: number
  /** items per call of `record` (one transaction), with a turn of the event loop between two */
  chunk: number
}

export interface Recorder<T> {
  /** recorded with others, within `delayMs` */
  later(item: T): void
  /** recorded before this returns, with everything waiting */
  now(item: T): void
  /** records everything waiting, now */
  flush(): void
}

/**
 * Records `items` (in order): all of them, or as many of the first as it answers, at least one (the rest are
 * handed to it again, at the next turn).
 */
export type RecordFn<T> = (items: T[]) => number | void

/**
 * Batches writes that may wait a little (finished webhook attempts): a commit costs far more than a row, so they
 * are recorded together, in transactions of `chunk` items with a turn of the event loop between two, so that the
 * requests that came in meanwhile are served between them instead of after the whole batch. Each item is
 * recorded exactly once, in the order it came.
 */
export function createRecorder<T>(record: RecordFn<T>, opts: RecorderOptions): Recorder<T> {
  const waiting: T[] = []
  let timer: NodeJS.Timeout | undefined
  let inTurns = false

  /** hands `record` the next chunk, and removes what it recorded */
  function recordChunk() {
    const chunk = waiting.slice(0, opts.chunk)
    const n = record(chunk) ?? chunk.length
    waiting.splice(0, Math.max(1, Math.min(n, chunk.length)))
  }
  function flush() {
    if (timer) { clearTimeout(timer); timer = undefined }
    while (waiting.length > 0) recordChunk()
  }
  function chunkPerTurn() {
    if (timer) { clearTimeout(timer); timer = undefined }
    if (waiting.length > 0) recordChunk()
    inTurns = waiting.length > 0
    if (inTurns) setImmediate(chunkPerTurn)
  }
  return {
    later(item) {
      waiting.push(item)
      if (inTurns) return
      if (waiting.length < opts.batch) timer ??= setTimeout(chunkPerTurn, opts.delayMs)
      else {
        inTurns = true
        setImmediate(chunkPerTurn)
      }
    },
    now(item) {
      waiting.push(item)
      flush()
    },
    flush
  }
}
