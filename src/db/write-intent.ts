import type Database from 'better-sqlite3'

const intents = new WeakMap<Database.Database, Int32Array>()

/**
 * Counts, in shared memory, the writes of this connection in progress or waiting for SQLite's write lock: every
 * statement that may write, every transaction and every `exec`. A writer on another thread (the index worker)
 * reads it to end its transaction early and let this connection in: better-sqlite3 is synchronous, so a write
 * here that waits for the lock holds the event loop, and SQLite's busy handler retries at steps of up to 100 ms.
 * Statements prepared before this is called are not counted: call it right after opening.
 */
export function countWriteIntent(sqlite: Database.Database): Int32Array {
  const existing = intents.get(sqlite)
  if (existing) return existing
  const intent = new Int32Array(new SharedArrayBuffer(4))
  intents.set(sqlite, intent)
  const counted = <A extends unknown[], R>(fn: (...args: A) => R) => function (this: unknown, ...args: A): R {
    Atomics.add(intent, 0, 1)
    try {
      return fn.apply(this, args)
    } finally {
      Atomics.sub(intent, 0, 1)
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

/** the count of countWriteIntent for this connection, if it keeps one */
export function writeIntentOf(sqlite: Database.Database): Int32Array | undefined {
  return intents.get(sqlite)
}
