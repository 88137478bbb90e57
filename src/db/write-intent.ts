import type Database from 'better-sqlite3'

/**
 * per counting connection: its shared write count, its writes' blocking waits for the other threads' writers, and
 * the non-blocking waits for a write turn (writeTurn)
 */
const counts = new WeakMap<Database.Database, { intent: Int32Array; waits: WriteWaits; turns: WriteWaits }>()

/** the slots of the shared array: this connection's writes in progress or waiting for the lock */
export const INTENT = 0
/**
 * 1 while a writer on another thread holds SQLite's write lock or is about to take it: one slot per such writer
 * (each sets and clears only its own, so one's commit never clears the other's flag)
 */
export const HOLDER = 1
/** the index worker's slot */
export const INDEX_HOLDER = HOLDER
/** the webhook outbox thread's slot (src/events/outbox-worker.ts) */
export const OUTBOX_HOLDER = 2
const HOLDERS = [INDEX_HOLDER, OUTBOX_HOLDER] as const
const SLOTS = 3

/** the shared array of a connection that counts its writes (or a stand-in for one that does not) */
export function newWriteIntent(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT))
}

/** whether a writer on another thread holds the lock or is about to */
const held = (intent: Int32Array) => HOLDERS.some((slot) => Atomics.load(intent, slot) !== 0)
/**
 * The longest a write here waits for that writer's signal. Its transactions end at the next passage once a write
 * waits, so this is only reached if it is stuck; SQLite's busy handler (busy_timeout) takes over after it.
 */
const HOLDER_WAIT_MS = 1000

/** how often a write of a counted connection waited for another thread's writer, and how long in all (ms) */
export interface WriteWaits { count: number; ms: number }

/**
 * Waits (blocking: better-sqlite3 is synchronous) until the other thread's writer has committed, woken by its
 * `Atomics.notify` rather than polling as SQLite's busy handler does (its growing sleeps add tens of ms to a write
 * that only had to wait for a short commit). docs/design/write-turns.md has the whole scheme.
 */
function awaitHolder(intent: Int32Array, waits: WriteWaits) {
  const start = performance.now()
  const deadline = start + HOLDER_WAIT_MS
  for (const slot of HOLDERS) {
    while (Atomics.load(intent, slot) !== 0) {
      const left = deadline - performance.now()
      if (left <= 0) break
      Atomics.wait(intent, slot, 1, left)
    }
  }
  waits.count++
  waits.ms += performance.now() - start
}

/**
 * The same wait for async code about to write (a request that will write, a background flush), with the event loop
 * free meanwhile: undefined when no writer on another thread holds SQLite's write lock (go on at once), else a
 * promise settled once each has signalled its commit (or after the same bounded wait). awaitHolder blocks the loop
 * for as long as the other writer holds the lock, and one of its steps cannot always be cut short: after a very
 * large document's delete, one idle FTS5 merge step of the index worker can walk the deleted entries for hundreds
 * of ms (docs/design/write-turns.md).
 * While it waits, the connection's write count is raised: the other thread ends its transaction at its next check
 * and starts no new one, so the write that follows meets a free lock.
 */
export function writeTurn(sqlite: Database.Database): Promise<void> | undefined {
  const counted = counts.get(sqlite)
  if (counted === undefined || !held(counted.intent)) return undefined
  return waitTurn(counted.intent, counted.turns)
}

/** Runs `then` once it is this connection's turn to write (writeTurn): within this call when nobody holds the lock. */
export function afterWriteTurn(sqlite: Database.Database, then: () => void): void {
  const wait = writeTurn(sqlite)
  if (wait === undefined) then()
  else void wait.then(() => then())
}

async function waitTurn(intent: Int32Array, turns: WriteWaits) {
  const start = performance.now()
  const deadline = start + HOLDER_WAIT_MS
  Atomics.add(intent, INTENT, 1)
  try {
    for (const slot of HOLDERS) {
      while (Atomics.load(intent, slot) !== 0) {
        const left = deadline - performance.now()
        if (left <= 0) return
        const wait = Atomics.waitAsync(intent, slot, 1, left)
        if (wait.async) await wait.value
      }
    }
  } finally {
    Atomics.sub(intent, INTENT, 1)
    turns.count++
    turns.ms += performance.now() - start
  }
}

/**
 * Counts, in shared memory, the writes of this connection in progress or waiting for SQLite's write lock: every
 * statement that may write, every transaction and every `exec`. A writer on another thread (the index worker)
 * reads it to end its transaction early and let this connection in, and signals its commits (see
 * `holdingWriteLock`): a write here that finds it holding the lock waits for that signal before it starts, so it
 * waits about one short commit, and a deferred transaction never meets the lock taken between its read and its
 * write (SQLite answers that with SQLITE_BUSY at once, without its busy handler).
 * Statements prepared before this is called are not counted: call it right after opening.
 */
export function countWriteIntent(sqlite: Database.Database): Int32Array {
  const existing = counts.get(sqlite)
  if (existing) return existing.intent
  const intent = newWriteIntent()
  const waits: WriteWaits = { count: 0, ms: 0 }
  counts.set(sqlite, { intent, waits, turns: { count: 0, ms: 0 } })
  const counted = <A extends unknown[], R>(fn: (...args: A) => R) => function (this: unknown, ...args: A): R {
    Atomics.add(intent, INTENT, 1)
    try {
      // inside a transaction this connection holds the lock already, or cannot wait without deadlock
      if (held(intent) && !sqlite.inTransaction) awaitHolder(intent, waits)
      return fn.apply(this, args)
    } finally {
      Atomics.sub(intent, INTENT, 1)
    }
  }
  const prepare = sqlite.prepare.bind(sqlite)
  sqlite.prepare = ((source: string) => {
    const statement = prepare(source)
    if (!statement.readonly) {
      statement.run = counted(statement.run)
      statement.get = counted(statement.get)
      statement.all = counted(statement.all)
    }
    return statement
  }) as typeof sqlite.prepare
  const transaction = sqlite.transaction.bind(sqlite)
  sqlite.transaction = ((fn: (...args: unknown[]) => unknown) => {
    const tx = transaction(fn)
    const wrapped = counted(tx)
    for (const variant of ['deferred', 'immediate', 'exclusive'] as const) {
      Object.defineProperty(wrapped, variant, { value: counted(tx[variant]) })
    }
    Object.defineProperty(wrapped, 'default', { value: wrapped })
    return wrapped
  }) as typeof sqlite.transaction
  sqlite.exec = counted(sqlite.exec) as typeof sqlite.exec
  return intent
}

/** the blocking waits of this connection's writes for another thread's writer so far, if it counts its writes */
export function writeWaitsOf(sqlite: Database.Database): Readonly<WriteWaits> | undefined {
  return counts.get(sqlite)?.waits
}

/**
 * the waits for a write turn (writeTurn, the event loop free) of this connection so far, if it counts its writes:
 * how many, and their time summed (waits that overlap each count)
 */
export function writeTurnsOf(sqlite: Database.Database): Readonly<WriteWaits> | undefined {
  return counts.get(sqlite)?.turns
}

/** the count of countWriteIntent for this connection, if it keeps one */
export function writeIntentOf(sqlite: Database.Database): Int32Array | undefined {
  return counts.get(sqlite)?.intent
}

/**
 * For the writer on the other thread: runs `write` (a transaction) flagged as holding the lock, then signals
 * its end to the writes waiting in `awaitHolder`. Answers undefined without running it when a write of the
 * counted connection is waiting, unless `anyway` (the writer's turn after waiting long enough). The flag is set
 * before the count is read, and the count raised before the flag is read: one of the two sides always sees
 * the other.
 */
export function holdingWriteLock<T>(intent: Int32Array, write: () => T, anyway = false,
  slot: number = INDEX_HOLDER): { value: T } | undefined {
  Atomics.store(intent, slot, 1)
  try {
    if (!anyway && Atomics.load(intent, INTENT) > 0) return undefined
    return { value: write() }
  } finally {
    releaseHolder(intent, slot)
  }
}

/** clears the flag and wakes the waiting writes (also when the other thread ends while holding it) */
export function releaseHolder(intent: Int32Array, slot: number = INDEX_HOLDER) {
  Atomics.store(intent, slot, 0)
  Atomics.notify(intent, slot)
}
