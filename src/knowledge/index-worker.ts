// The index worker: its own write connection, the indexing code of src/knowledge/indexer.ts. FTS5 tokenizing
// and segment writes (most of an ingest's CPU) never run on the event loop of the server.
import { parentPort, workerData } from 'node:worker_threads'
import { setImmediate, setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import type { SqlRow } from '../db/prepared.js'
import type { knowledgeDocuments } from '../../schema/tables/knowledge.js'
import { passageRanges, type Passage } from '../ingest/chunker.js'
import { textFilePieces } from '../ingest/text.js'
import { PASSAGE_INDEXES, passageWindows, passageWriter } from './passages.js'
import { holdingWriteLock, INTENT } from '../db/write-intent.js'
import { openThreadWriter } from '../db/connection.js'
import { PAIRS_BEHIND_SQL } from './phrase-index.js'
import { pairCatchUp } from './phrase-catch-up.js'
import { Worker } from 'node:worker_threads'
import { workerEntry } from '../worker-entry.js'
import { CELL, CELLS } from './trigram-file.js'
import { idleMerger } from './fts-segments.js'
import { BACKFILL_BATCH, filterBackfill } from './short-query-filter.js'
import { documentOutline, documentTitle, fileTitle, hasOutline, OutlineReader, passageHeadingPath,
  storedHeadingPath, type Outline } from '../ingest/outline.js'
import { OUTLINE_BATCH, outlineBackfill } from './outline-backfill.js'
import { BACKGROUND_NICENESS, lowerThreadPriority } from '../thread-priority.js'

// background work, below the requests and searches (src/thread-priority.ts)
lowerThreadPriority(BACKGROUND_NICENESS)

/** A document to index: from its text file, or from `text` (at upload) under the claimed job `jobId`. */
export interface IndexTask { id: number; documentId: string; textFile: string; text?: string; jobId?: string }
export type IndexMessage = { task: IndexTask } | { stop: number } | { purge: number; documentId: string }
  | { close: true } | { catchUp: number }
/** a task's end; `idle` once nothing is left to do, merges included */
export type IndexReply = { id: number; error?: string } | { idle: true } | { warning: string }

/**
 * How long one transaction may insert passages. The commit then writes FTS5 segments; a writer on another
 * connection (the server's) waits at most about this long plus that commit.
 */
const TXN_MS = 25
/**
 * The same for an upload's own task (at most 1 MB of text, its request waiting): one transaction, unless the
 * server's writes end it early, makes fewer FTS5 segments and commits, so the upload answers sooner
 * (`npm run bench -- ingest`). Background tasks keep TXN_MS.
 */
const URGENT_TXN_MS = 1000
/** the step of the worker's waits: for the server's writes, for uploads' tasks to end */
const GAP_MS = 2
/**
 * FTS5 pages merged per step, while indexing and when idle (see idleMerge). A step cannot be cut short, and a
 * write of the server arriving meanwhile waits for it holding the event loop (src/db/write-intent.ts): a step's
 * cost grows with its pages (`npm run bench -- ingest`, the event loop's delay).
 */
const MERGE_PAGES = 64
/** merge steps per index after each background transaction: about the 200 pages of one step before */
const MERGE_STEPS = 3

/** the bytes of a text file read at a time (a window holds at least a quarter as many characters) */
const WINDOW_BYTES = 1024 * 1024
/** the longest the worker lets the server's writes go first before its next transaction */
const YIELD_MAX_MS = 1000
/**
 * How often the worker checkpoints the log, after a commit and with the lock released (SQLite's own automatic
 * checkpoint runs inside the commit's call, so the flag that lets the server's writes in would stay set
 * through it)
 */
const CHECKPOINT_MS = 250

const { file, intent } = workerData as { file: string; intent: Int32Array }
// this connection checkpoints the log itself between its transactions (see checkpoint): under a sustained ingest
// the checkpoint thread's PASSIVE pass never catches up with the writer, and the log would never restart
const sqlite = openThreadWriter(file)

const byId = sqlite.prepare(`SELECT status, indexed_count, chunk_size, chunk_overlap, file_name, file_type
  FROM knowledge_documents WHERE id = ?`)
const lastPassage = sqlite.prepare(`SELECT last_passage_rowid FROM knowledge_documents WHERE id = ?`).pluck()
const writer = passageWriter(sqlite)
// with the rowids of its first and last passages so far (a filter's ranges are read from them: doc-runs.ts),
// and its title from its text; a document without a title is one indexed before titles, whose earlier passages lack
// their heading paths: it keeps none until the back-fill (outline-backfill.ts) has done all of them
const progress = sqlite.prepare(`UPDATE knowledge_documents SET indexed_count = @next, status = 'processing',
  updated_at = @now, first_passage_rowid = coalesce(first_passage_rowid, @lo),
  last_passage_rowid = coalesce(@hi, last_passage_rowid), title = iif(title IS NULL, NULL, @title) WHERE id = @id`)
// once the trigram file has its passages too (trigramsReach)
const finish = sqlite.prepare(`UPDATE knowledge_documents SET chunk_count = indexed_count, status = 'indexed',
  updated_at = @now WHERE id = @id`)
const completeJob = sqlite.prepare(`DELETE FROM jobs WHERE id = ?`)
// 50 at a time: a server write waits for the batch (the word index's deletes; the trigram file's follow from the queue)
const purgeSome = sqlite.prepare(`DELETE FROM knowledge_passages WHERE rowid IN
  (SELECT rowid FROM knowledge_passages WHERE document_id = ? LIMIT 50)`)
const FTS_TABLES = PASSAGE_INDEXES
const merges = FTS_TABLES.map((t) => sqlite.prepare(`INSERT INTO ${t} (${t}, rank) VALUES ('merge', ${MERGE_PAGES})`))

/**
 * FTS5's merge settings (stored with each index). `normal` is FTS5's default: a commit that writes a segment
 * also merges, 4 segments of a level into one. While indexing, `ingest`: commits only write their
 * segment (a write of the server waiting for one waits for less), the worker merges 16 segments at a time in
 * bounded steps between its transactions (each byte of the index is rewritten about half as often), and once idle
 * the normal setting and idleMerge bring the levels back to 4 segments.
 */
const MERGING = {
  normal: { automerge: 4, usermerge: 4, crisismerge: 16 },
  ingest: { automerge: 0, usermerge: 16, crisismerge: 64 }
} as const
let merging: keyof typeof MERGING | undefined
/** each index's idle merges, a step a call (src/knowledge/fts-segments.ts), under the normal settings */
const idleSteps = FTS_TABLES.map((t) => idleMerger(sqlite, t, MERGE_PAGES, MERGING.normal.usermerge))
// (FTS5 takes a command's name as a literal only)
const configure = Object.fromEntries(Object.entries(MERGING).map(([name, settings]) => [name,
  FTS_TABLES.flatMap((t) => Object.entries(settings).map(([key, value]) =>
    sqlite.prepare(`INSERT INTO ${t} (${t}, rank) VALUES ('${key}', ${value})`)))])) as
  Record<keyof typeof MERGING, Database.Statement[]>
const writeMerging = sqlite.transaction((to: keyof typeof MERGING) => {
  for (const c of configure[to]) c.run()
}).immediate
function setMerging(to: keyof typeof MERGING) {
  writeMerging(to)
  merging = to
}

type DocRow = Pick<SqlRow<typeof knowledgeDocuments>, 'status' | 'indexed_count' | 'chunk_size' | 'chunk_overlap'
  | 'file_name' | 'file_type'>
/** a passage to write: its text and its heading path as stored */
type PassageText = { text: string; headingPath: string | null }

/** One transaction: passages until the time budget is spent (the document is finished once trigrams follow). */
const writeSlice = sqlite.transaction((documentId: string, title: string, passages: Iterator<PassageText>,
  from: number, jobId?: string) => {
  const readers = writer.readers(documentId)
  if (readers === undefined) {
    if (jobId) completeJob.run(jobId)
    return { next: from, exhausted: true, gone: true }
  }
  const deadline = performance.now() + (jobId !== undefined ? URGENT_TXN_MS : TXN_MS)
  let next = from
  let exhausted = false
  let lo: number | null = null
  let hi: number | null = null
  // a write of the server's connection waiting for the lock ends the transaction early (after one passage at
  // least: the worker's turn may come while such writes keep coming)
  for (let first = true; first || (performance.now() < deadline && Atomics.load(intent, INTENT) === 0);
    first = false) {
    const r = passages.next()
    if (r.done) { exhausted = true; break }
    hi = writer.insert(documentId, readers, next, r.value.text, r.value.headingPath)
    lo ??= hi
    next++
  }
  progress.run({ next, now: new Date().toISOString(), lo, hi, title, id: documentId })
  return { next, exhausted, gone: false }
}).immediate

/** The document's end: `indexed`, and an upload's job done (its passages are in every index by now). */
const writeFinish = sqlite.transaction((documentId: string, jobId?: string) => {
  finish.run({ now: new Date().toISOString(), id: documentId })
  if (jobId) completeJob.run(jobId)
}).immediate

/**
 * The trigram worker (src/knowledge/trigram-worker.ts): the trigram file's writer, beside this one. `poke` tells it
 * of passages committed or deleted; it publishes how far it has come in `trigramCells`.
 */
const trigramCells = new BigInt64Array(new SharedArrayBuffer(CELLS * 8))
let trigramThread: { worker: Worker; exited: Promise<void> } | undefined
/** how long a document's end waits for the trigram worker to move at all before its task fails (retried) */
const TRIGRAM_STALL_MS = 60_000
const trigramEntry = workerEntry(import.meta.url, 'trigram-worker')
/** it holds a step's 1,024 passages (~1 MB) at a time: a small heap keeps a 50 MB ingest's peak RSS down */
const TRIGRAM_HEAP = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 64 }

function trigramWorker() {
  if (trigramThread) return trigramThread
  Atomics.store(trigramCells, CELL.failed, 0n)
  Atomics.store(trigramCells, CELL.idle, 0n)
  const worker = new Worker(trigramEntry.script, { eval: trigramEntry.eval, workerData: { file, shared: trigramCells },
    resourceLimits: TRIGRAM_HEAP })
  const thread = { worker, exited: new Promise<void>((resolve) => worker.once('exit', () => resolve())) }
  worker.on('message', (m: { warning?: string }) => {
    if (m.warning) parentPort!.postMessage({ warning: m.warning } satisfies IndexReply)
  })
  worker.on('error', (err) => parentPort!.postMessage({ warning: `the trigram worker failed: ${err.message}` }))
  worker.on('exit', () => {
    if (trigramThread === thread) trigramThread = undefined
    // its waiters see it gone
    Atomics.store(trigramCells, CELL.failed, 1n)
    Atomics.notify(trigramCells, CELL.through)
    Atomics.store(trigramCells, CELL.idle, 1n)
    Atomics.notify(trigramCells, CELL.idle)
  })
  trigramThread = thread
  return thread
}

function poke() {
  trigramWorker()
  Atomics.add(trigramCells, CELL.poke, 1n)
  Atomics.notify(trigramCells, CELL.poke)
}

/** Resolves once the trigram file holds every passage up to `rowid` (a stop or the worker's end interrupts it). */
async function trigramsReach(task: IndexTask, rowid: number) {
  poke()
  let last = Atomics.load(trigramCells, CELL.through)
  let moved = performance.now()
  for (;;) {
    const through = Atomics.load(trigramCells, CELL.through)
    if (through >= BigInt(rowid)) return
    if (stopped.has(task.id) || closing) throw new Error('interrupted by shutdown')
    if (through !== last) { last = through; moved = performance.now() }
    if (Atomics.load(trigramCells, CELL.failed) === 1n) throw new Error('the trigram worker stopped')
    if (performance.now() - moved > TRIGRAM_STALL_MS) throw new Error('the trigram index did not follow')
    const wait = Atomics.waitAsync(trigramCells, CELL.through, through, 1000)
    if (wait.async) await wait.value
  }
}

/** the delete queue's entries the trigram file has applied: removed in the worker's idle time */
const forgetDeletes = sqlite.prepare(`DELETE FROM knowledge_trigram_deletes WHERE seq <= ?`)

const running = new Set<number>()
const stopped = new Set<number>()
/** tasks given their text (uploads waiting for their answer) go before background ones */
let urgent = 0
let active = 0
let closing = false

let checkpointed = performance.now()
function checkpoint() {
  if (performance.now() - checkpointed < CHECKPOINT_MS) return
  checkpointed = performance.now()
  // a checkpoint that cannot run now (another one in progress) is only late: the next one copies its pages
  try { sqlite.pragma('wal_checkpoint(PASSIVE)') } catch { /* next turn */ }
}

/**
 * Runs `write` (one transaction) as this worker's next turn: uploads' tasks first, and the server connection's
 * writes (`intent`, see src/db/write-intent.ts) before any: one waiting for the lock holds the server's event
 * loop. While it runs, the server's writes wait for its commit's signal.
 */
async function locked<T>(task: IndexTask, write: () => T): Promise<T> {
  for (;;) {
    await setImmediate()
    let waited = 0
    for (; Atomics.load(intent, INTENT) > 0 && waited < YIELD_MAX_MS; waited += GAP_MS) await sleep(GAP_MS)
    while (!task.text && urgent > 0) await sleep(GAP_MS)
    if (stopped.has(task.id)) throw new Error('interrupted by shutdown')
    const done = holdingWriteLock(intent, write, waited >= YIELD_MAX_MS)
    if (done) {
      // an upload's task checkpoints after its answer (its one commit writes ~7 MB of WAL per MB of text)
      if (task.text === undefined) checkpoint()
      return done.value
    }
  }
}

async function write(task: IndexTask, title: string, passages: Iterator<PassageText>, from: number, last: boolean) {
  trigramWorker()
  // an upload's task too: its one commit then writes its segments without merging (the idle merges follow)
  const background = task.text === undefined
  if (merging !== 'ingest') await locked(task, () => setMerging('ingest'))
  let next = from
  for (;;) {
    const slice = await locked(task, () => writeSlice(task.documentId, title, passages, next, task.jobId))
    if (!slice.gone) poke()
    if (background && merging === 'ingest') {
      for (const merge of merges) for (let i = 0; i < MERGE_STEPS; i++) await locked(task, () => merge.run())
    }
    next = slice.next
    if (slice.gone) return slice
    if (slice.exhausted) {
      if (last) {
        const hi = lastPassage.get(task.documentId) as number | null | undefined
        if (hi !== undefined) {
          if (hi !== null) await trigramsReach(task, hi)
          await locked(task, () => writeFinish(task.documentId, task.jobId))
        } else if (task.jobId) {
          await locked(task, () => completeJob.run(task.jobId))
        }
      }
      return slice
    }
  }
}

/** the passages of `text` (which starts at `offset` of the document's text), with their heading paths */
function* texts(text: string, ranges: Iterable<Passage>, offset = 0, outline?: Outline): Generator<PassageText> {
  for (const r of ranges) {
    yield { text: text.slice(r.start, r.end),
      headingPath: outline ? storedHeadingPath(passageHeadingPath(outline,
        { start: offset + r.start, end: offset + r.end })) : null }
  }
}

/** the outline of a text file, read a piece at a time (its headings only are kept) */
async function fileOutline(textFile: string): Promise<Outline> {
  const reader = new OutlineReader()
  for await (const piece of textFilePieces(textFile, WINDOW_BYTES, 'utf8')) reader.push(piece)
  return reader.end()
}

async function index(task: IndexTask) {
  const doc = byId.get(task.documentId) as DocRow | undefined
  if (!doc || doc.status === 'indexed') {
    if (task.jobId) completeJob.run(task.jobId)
    return
  }
  const options = { chunkSize: doc.chunk_size, chunkOverlap: doc.chunk_overlap }
  // where each passage is (the headings above it) and the document's title: from the whole text's outline, read
  // first (a passage's path may depend on a heading that starts near its end); source code's `#` lines are comments
  const outline = !hasOutline(doc.file_type) ? undefined
    : task.text !== undefined ? documentOutline(task.text) : await fileOutline(task.textFile)
  const title = outline ? documentTitle(outline, doc.file_name) : fileTitle(doc.file_name)
  if (task.text !== undefined) {
    const ranges = passageRanges(task.text, options)
    for (let i = 0; i < doc.indexed_count; i++) ranges.next()
    await write(task, title, texts(task.text, { [Symbol.iterator]: () => ranges }, 0, outline), doc.indexed_count,
      true)
    return
  }
  // a window of the file at a time: a 50 MB text is never held whole; passages written before a restart are
  // counted, not written again
  let seen = 0
  let next = doc.indexed_count
  for await (const { window, offset, decided, last } of passageWindows(textFilePieces(task.textFile, WINDOW_BYTES,
    'utf8'), options, WINDOW_BYTES / 4)) {
    const fresh = decided.filter(() => seen++ >= doc.indexed_count)
    const slice = await write(task, title, texts(window, fresh, offset, outline), next, last)
    next = slice.next
    if (slice.gone) return
  }
}

async function purge(id: number, documentId: string) {
  const task = { id, documentId, textFile: '' }
  // under FTS5's ingest settings, as writes are: with automerge on, each commit past 10 % of a segment's rows
  // deleted (FTS5's `deletemerge`) rewrites that segment, again at every batch; the idle merges drop the deleted
  // rows after
  if (merging !== 'ingest') await locked(task, () => setMerging('ingest'))
  while (await locked(task, () => purgeSome.run(documentId).changes) > 0) poke()
}

const pairsBehind = sqlite.prepare(PAIRS_BEHIND_SQL).pluck()
const pairsCatchUp = pairCatchUp(sqlite)
/** the merge steps of the two indexes the catch-up writes */
const pairMerges = FTS_TABLES.flatMap((t, i) => t === 'knowledge_passages_words' ? [] : [merges[i]])

/**
 * One transaction of the catch-up of the pair and run indexes (src/knowledge/word-vocabulary.ts): passages for about
 * TXN_MS, ended after the current one by a write of the server waiting for the lock (as writeSlice).
 */
function pairSlice() {
  const deadline = performance.now() + TXN_MS
  return pairsCatchUp(() => performance.now() >= deadline || Atomics.load(intent, INTENT) !== 0)
}

/** runs `write` (one transaction) as the catch-up's next turn, after the server's waiting writes; false when closing */
async function pairTurn<T>(write: () => T): Promise<{ value: T } | undefined> {
  for (;;) {
    await setImmediate()
    if (active > 0 || closing) return undefined
    if (Atomics.load(intent, INTENT) > 0) { await sleep(GAP_MS); continue }
    const done = holdingWriteLock(intent, write)
    if (done) return done
  }
}

/**
 * The pair and run indexes (src/knowledge/phrase-index.ts, word-vocabulary.ts) follow the passages while nothing is to
 * be indexed: a slice at a time, stopping for a new task. Restart-safe: `indexed_through` moves in the slice's
 * transaction. Under the ingest settings, as writes are: a commit writes its segments, and bounded merge steps follow
 * each (FTS5's automerge inside the commits would make them longer).
 */
async function catchUpPairs() {
  if (pairsBehind.get() !== 1) return
  if (merging !== 'ingest' && !await pairTurn(() => setMerging('ingest'))) return
  for (;;) {
    const done = await pairTurn(pairSlice)
    if (!done) return
    checkpoint()
    if (done.value === 0) return
    for (const merge of pairMerges) for (let i = 0; i < MERGE_STEPS; i++) if (!await pairTurn(() => merge.run())) return
  }
}

const filters = filterBackfill(sqlite)
/**
 * The character filters of the 1–2 character scan (src/knowledge/short-query-filter.ts): indexed documents lacking one
 * get it while nothing is to be indexed, a document at a time, each write after the server's waiting ones
 */
async function fillFilters() {
  for (;;) {
    const ids = filters.lacking()
    let made = 0
    for (const id of ids) {
      if (active > 0 || closing) return
      const filter = filters.read(id)
      if (filter === undefined) continue
      const done = await pairTurn(() => filters.write(id, filter))
      if (!done) return
      if (done.value) made++
    }
    // (a document whose passages are still changing is looked at again after the next task)
    if (made === 0 || ids.length < BACKFILL_BATCH) return
  }
}

const outlines = outlineBackfill(sqlite)
/**
 * Titles and heading paths for documents indexed before they were stored (src/knowledge/outline-backfill.ts), while
 * nothing is to be indexed: a document at a time, each write after the server's waiting ones
 */
async function fillOutlines() {
  const stop = () => active > 0 || closing
  for (;;) {
    const ids = outlines.lacking()
    for (const id of ids) if (!await outlines.fill(id, pairTurn, stop)) return
    if (ids.length < OUTLINE_BATCH) return
  }
}

/**
 * Short transactions make many small FTS5 segments; while nothing is to be indexed, merge them a bounded step
 * at a time (a step that finds nothing to merge changes fewer than 2 rows), so searches read few segments: the
 * levels' merges first, then all of an index's segments into one when those beside the largest have grown enough
 * (src/knowledge/fts-segments.ts).
 */
async function idleMerge() {
  /** a failure of the idle work: said once while it goes on failing, and the work tried again later (settle) */
  const failed = (what: string, err: unknown) => {
    idleWorkFailed = true
    const warning = `${what}: ${(err as Error).message}`
    if (idleRetries === 0) parentPort!.postMessage({ warning } satisfies IndexReply)
  }
  idleWorkFailed = false
  try {
    await catchUpPairs()
  } catch (err) {
    // the merges still run; the catch-up is tried again (searches meanwhile use the trigram index above the mark)
    pairsFailed = true
    failed('the pair index could not catch up', err)
  }
  try {
    await fillFilters()
  } catch (err) {
    // (a document's 1–2 character searches scan it meanwhile; the back-fill is tried again)
    failed('character filters could not be made', err)
  }
  try {
    await fillOutlines()
  } catch (err) {
    // (its documents' results carry no heading paths meanwhile; the back-fill is tried again)
    failed('heading paths could not be filled in', err)
  }
  while (merging !== 'normal') {
    await sleep(GAP_MS * 5)
    if (active > 0 || closing) return
    if (holdingWriteLock(intent, () => setMerging('normal'))) break
  }
  for (const step of idleSteps) {
    for (;;) {
      await sleep(GAP_MS * 5)
      if (active > 0 || closing) return
      if (Atomics.load(intent, INTENT) > 0) continue
      const done = holdingWriteLock(intent, step)
      if (!done) continue
      checkpoint()
      if (!done.value) break
    }
  }
  // the trigram worker's own catch-up and merges
  while (trigramThread && Atomics.load(trigramCells, CELL.idle) !== 1n) {
    if (active > 0 || closing) return
    const wait = Atomics.waitAsync(trigramCells, CELL.idle, 0n, 1000)
    if (wait.async) await wait.value
  }
  const deleted = Atomics.load(trigramCells, CELL.durable)
  if (deleted > 0n) {
    while (!holdingWriteLock(intent, () => forgetDeletes.run(deleted))) {
      await sleep(GAP_MS)
      if (active > 0 || closing) return
    }
  }
}

let idle: Promise<void> | undefined
/** set when a catch-up failed, cleared by the next task */
let pairsFailed = false
/** set when a catch-up or back-fill of the last idle work failed */
let idleWorkFailed = false
/**
 * Idle work that failed (SQLITE_BUSY past the busy timeout, a full disk) is tried again after IDLE_RETRY_MS, doubled
 * at each failure in a row up to IDLE_RETRY_MAX_MS, and the worker stays meanwhile: its work is always what is left
 * to do, and waiting for the next upload could leave it undone for good.
 */
const IDLE_RETRY_MS = 1000
const IDLE_RETRY_MAX_MS = 60_000
let idleRetries = 0
let idleRetry: NodeJS.Timeout | undefined
function settle() {
  if (active > 0 || idle) return
  clearTimeout(idleRetry)
  idleRetry = undefined
  let failed = false
  idle = idleMerge().catch(() => { failed = true }).finally(() => {
    idle = undefined
    if (active > 0 || closing) return
    if (failed || idleWorkFailed) {
      const wait = Math.min(IDLE_RETRY_MS * 2 ** idleRetries, IDLE_RETRY_MAX_MS)
      idleRetries++
      pairsFailed = false
      idleRetry = setTimeout(settle, wait)
      return
    }
    idleRetries = 0
    // a task that came and went while this ran cut the catch-up short
    if (!pairsFailed && pairsBehind.get() === 1) settle()
    else parentPort!.postMessage({ idle: true } satisfies IndexReply)
  })
}

async function close() {
  closing = true
  clearTimeout(idleRetry)
  for (const id of running) stopped.add(id)
  Atomics.notify(trigramCells, CELL.through)
  while (active > 0) await sleep(GAP_MS)
  await idle
  // closed before its idle merges: FTS5's own settings back at least (the next worker's idle merges follow)
  if (merging === 'ingest') {
    try { holdingWriteLock(intent, () => setMerging('normal'), true) } catch { /* the next worker sets them */ }
  }
  const trigrams = trigramThread
  if (trigrams) {
    trigrams.worker.postMessage('close')
    const timeout = setTimeout(() => { void trigrams.worker.terminate() }, 5000)
    await trigrams.exited
    clearTimeout(timeout)
  }
  sqlite.close()
  parentPort!.close()
}

parentPort!.on('message', (m: IndexMessage) => {
  if ('stop' in m) {
    if (running.has(m.stop)) stopped.add(m.stop)
    // a task waiting for the trigram worker sees it
    Atomics.notify(trigramCells, CELL.through)
    return
  }
  if ('close' in m) { void close(); return }
  const id = 'task' in m ? m.task.id : 'purge' in m ? m.purge : m.catchUp
  const isUrgent = 'task' in m && m.task.text !== undefined
  pairsFailed = false
  active++
  Atomics.store(trigramCells, CELL.tasks, BigInt(active))
  running.add(id)
  if (isUrgent) urgent++
  // a catch-up is the idle work (settle) that follows any task, and the trigram worker's
  if ('catchUp' in m) poke()
  const work = 'task' in m ? index(m.task) : 'purge' in m ? purge(m.purge, m.documentId) : Promise.resolve()
  work.then(() => parentPort!.postMessage({ id } satisfies IndexReply),
    (err: Error) => parentPort!.postMessage({ id, error: err.message } satisfies IndexReply))
    .finally(() => {
      checkpoint()
      active--
      Atomics.store(trigramCells, CELL.tasks, BigInt(active))
      // the trigram worker merges once no task is in progress
      if (active === 0 && trigramThread) poke()
      if (isUrgent) urgent--
      running.delete(id)
      stopped.delete(id)
      settle()
    })
})
