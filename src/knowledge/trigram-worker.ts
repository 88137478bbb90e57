// The trigram worker: the only writer of the trigram file (src/knowledge/trigrams.ts), started by the index worker.
// It follows the passages the index worker commits (and the deletes it queues) in transactions of its own file,
// on a core of its own, and says how far it has come through shared memory.
import { parentPort, workerData } from 'node:worker_threads'
import { setImmediate, setTimeout as sleep } from 'node:timers/promises'
import { CELL, openTrigrams, type TrigramProgress } from './trigrams.js'


/**
 * How long one transaction indexes. Nothing waits for this file's write lock (searches read its log), only an
 * upload's answer for the worker to reach its passages; fewer, larger commits write fewer FTS5 segments.
 */
const STEP_MS = 200
/** pages merged per step when caught up (a step is ~1–20 ms of CPU; new passages are taken between steps) */
const MERGE_PAGES = 500
/** the wait after a failed step before the next */
const RETRY_MS = 200

const { file, shared } = workerData as { file: string; shared: BigInt64Array }
let closing = false

function publish(p: TrigramProgress) {
  Atomics.store(shared, CELL.through, BigInt(p.indexedThrough))
  Atomics.store(shared, CELL.deleted, BigInt(p.deletedThrough))
  Atomics.notify(shared, CELL.through)
}

function setIdle(idle: boolean) {
  Atomics.store(shared, CELL.idle, idle ? 1n : 0n)
  Atomics.notify(shared, CELL.idle)
}

async function run() {
  let trigrams
  try {
    trigrams = openTrigrams(file)
    // merges are this worker's own steps, between its catch-ups: a commit only writes its segment (~10 % less CPU
    // for a 50 MB ingest than FTS5's crisis merges at 64 segments a level)
    trigrams.merging('ingest')
  } catch (err) {
    trigrams?.close()
    Atomics.store(shared, CELL.failed, 1n)
    Atomics.notify(shared, CELL.through)
    parentPort!.postMessage({ warning: `the trigram index could not open: ${(err as Error).message}` })
    return
  }
  publish(trigrams.progress())
  let merged = false
  while (!closing) {
    const seen = Atomics.load(shared, CELL.poke)
    try {
      const r = trigrams.step(STEP_MS)
      if (r.worked) {
        setIdle(false)
        merged = false
        publish(r.progress)
        await setImmediate()
        continue
      }
      if (!merged) {
        merged = !trigrams.mergeStep(MERGE_PAGES)
        await setImmediate()
        continue
      }
    } catch (err) {
      parentPort!.postMessage({ warning: `the trigram index could not follow: ${(err as Error).message}` })
      await sleep(RETRY_MS)
      continue
    }
    setIdle(true)
    // new passages, deletes or the end
    const wait = Atomics.waitAsync(shared, CELL.poke, seen)
    if (wait.async) await wait.value
  }
  try {
    trigrams.merging('normal')
  } finally {
    trigrams.close()
  }
}

parentPort!.on('message', (m: 'close') => {
  if (m !== 'close') return
  closing = true
  Atomics.add(shared, CELL.poke, 1n)
  Atomics.notify(shared, CELL.poke)
})

run().catch((err: Error) => {
  parentPort!.postMessage({ warning: `the trigram worker failed: ${err.message}` })
}).finally(() => {
  setIdle(true)
  parentPort!.close()
})
