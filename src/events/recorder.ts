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
 * Batches writes that may wait a little (finished webhook attempts): a commit costs far more than a row, so they
 * are recorded together, in transactions of `chunk` items with a turn of the event loop between two, so that the
 * requests that came in meanwhile are served between them instead of after the whole batch. Each item is
 * handed to `record` exactly once, in the order it came.
 */
export function createRecorder<T>(record: (items: T[]) => void, opts: RecorderOptions): Recorder<T> {
  const waiting: T[] = []
  let timer: NodeJS.Timeout | undefined
  let inTurns = false

  function flush() {
    if (timer) { clearTimeout(timer); timer = undefined }
    while (waiting.length > 0) record(waiting.splice(0, opts.chunk))
  }
  function chunkPerTurn() {
    if (timer) { clearTimeout(timer); timer = undefined }
    if (waiting.length > 0) record(waiting.splice(0, opts.chunk))
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
