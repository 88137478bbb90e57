// The trigram worker: the only writer of the trigram file (src/knowledge/trigram-file.ts), started by the index worker.
// It follows the passages the index worker commits (and the deletes it queues) in transactions of its own file,
// on a core of its own, and says how far it has come through shared memory.
import { parentPort, workerData } from 'node:worker_threads'
import { setImmediate, setTimeout as sleep } from 'node:timers/promises'
import fs from 'node:fs'
import { BACKGROUND_NICENESS, lowerThreadPriority } from '../thread-priority.js'
import { CELL, openTrigrams, trigramFile, type Trigrams, type TrigramProgress } from './trigram-file.js'

// background work, below the requests and searches (src/thread-priority.ts)
lowerThreadPriority(BACKGROUND_NICENESS)

/** pages merged per step when caught up (a step is ~1–20 ms of CPU; new passages are taken between steps) */
const MERGE_PAGES = 500
/** the wait after a failed step before the next, doubled at each failure in a row up to RETRY_MAX_MS */
const RETRY_MS = 200
const RETRY_MAX_MS = 2000
/**
 * The worker checkpoints its log itself once caught up (its commits are the ingest's critical path: SQLite's own
 * checkpoints inside them would lengthen it), or while it is still behind once the log
 * has grown past this
 */
const WAL_MAX_BYTES = 512 * 1024 * 1024

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

const wal = `${trigramFile(file)}-wal`
function walBytes() {
  return fs.statSync(wal, { throwIfNoEntry: false })?.size ?? 0
}

let trigrams: Trigrams | undefined
function checkpoint() {
  // one that cannot finish now (a search reading an older snapshot) is only late: the next one copies the rest. Even
  // so it syncs the log first: what was committed before it is on disk
  const deleted = Atomics.load(shared, CELL.deleted)
  try {
    trigrams?.sqlite.pragma('main.wal_checkpoint(PASSIVE)')
    Atomics.store(shared, CELL.durable, deleted)
  } catch { /* next time */ }
}

async function run() {
  try {
    trigrams = openTrigrams(file)
    // merges are this worker's own steps, once it has caught up: a commit only writes its segments
    trigrams.merging('ingest')
    trigrams.sqlite.pragma('wal_autocheckpoint = 0')
  } catch (err) {
    trigrams?.close()
    Atomics.store(shared, CELL.failed, 1n)
    Atomics.notify(shared, CELL.through)
    parentPort!.postMessage({ warning: `the trigram index could not open: ${(err as Error).message}` })
    return
  }
  publish(trigrams.progress())
  let merged = false
  let failures = 0
  while (!closing) {
    const seen = Atomics.load(shared, CELL.poke)
    try {
      const r = trigrams.step()
      if (r.worked) {
        setIdle(false)
        // the ingest settings still (the trigram worker of a retired index worker, closing meanwhile, sets FTS5's
        // defaults back)
        if (trigrams.mergingNow() !== 'ingest') trigrams.merging('ingest')
        merged = false
        publish(r.progress)
        if (walBytes() > WAL_MAX_BYTES) checkpoint()
        failures = 0
        await setImmediate()
        continue
      }
      // merges once the index worker has nothing in progress: while it writes passages they would be redone anyway,
      // and took a third of this worker's CPU during a 50 MB ingest
      if (!merged && Atomics.load(shared, CELL.tasks) === 0n) {
        merged = !trigrams.mergeStep(MERGE_PAGES, true)
        if (walBytes() > WAL_MAX_BYTES) checkpoint()
        failures = 0
        await setImmediate()
        continue
      }
    } catch (err) {
      // said at the first failure and then at each doubling of their count; waits grow to RETRY_MAX_MS
      failures++
      if ((failures & (failures - 1)) === 0) {
        parentPort!.postMessage({ warning: `the trigram index could not follow (${failures} time(s)): ` +
          (err as Error).message })
      }
      await sleep(Math.min(RETRY_MS * 2 ** (failures - 1), RETRY_MAX_MS))
      continue
    }
    failures = 0
    if (merged) checkpoint()
    setIdle(merged)
    // new passages, deletes, the index worker's tasks ended, or the end
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
