import { Worker } from 'node:worker_threads'
import { createRequire } from 'node:module'
import type Database from 'better-sqlite3'
import { WAL_LIMIT_BYTES } from './connection.js'

export interface CheckpointerOptions {
  /** how often the thread copies the write-ahead log back into the database file */
  everyMs?: number
  /** the better-sqlite3 module the thread loads (tests give a missing one to see the fallback) */
  driver?: string
  /** told when the thread could not start or failed; checkpoints are back on the connection by then */
  onError?: (err: Error) => void
  /**
   * other database files the thread checkpoints too, whose writers never checkpoint themselves (the outbox file,
   * written by the outbox thread alone)
   */
  also?: string[]
  /** a log larger than this is folded and truncated (default WAL_LIMIT_BYTES) */
  walLimitBytes?: number
}

export interface Checkpointer {
  /** stops the thread and closes its connection (waits for a checkpoint in progress) */
  stop(): Promise<void>
}

/** SQLite's own threshold, used again when the thread is not there: a checkpoint every 1000 WAL pages */
const DEFAULT_AUTOCHECKPOINT = 1000

// Plain CommonJS evaluated in the thread: no TypeScript loader is needed there, from source or compiled.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const fs = require('node:fs')
const Database = require(workerData.driver)
const dbs = workerData.files.map((file) => {
  const db = new Database(file, { fileMustExist: true })
  // a TRUNCATE checkpoint holds the write lock while it waits for readers: it gives up soon, and tries next time
  db.pragma('busy_timeout = 50')
  return { db, wal: file + '-wal' }
})
const walSize = (file) => { try { return fs.statSync(file).size } catch { return 0 } }
const checkpoint = () => {
  for (const { db, wal } of dbs) {
    try {
      db.pragma('wal_checkpoint(PASSIVE)')
      if (walSize(wal) > workerData.walLimitBytes) db.pragma('wal_checkpoint(TRUNCATE)')
    } catch (err) {
      parentPort.postMessage({ error: String((err && err.message) || err) })
    }
  }
}
const timer = setInterval(checkpoint, workerData.everyMs)
parentPort.on('message', (message) => {
  if (message !== 'stop') return
  clearInterval(timer)
  for (const { db } of dbs) db.close()
  parentPort.close()
})
`

/**
 * Checkpoints the write-ahead log from a thread of its own, so that the event loop never waits for them.
 *
 * With SQLite's default, the commit that takes the WAL past 1000 pages also copies it into the database
 * file and syncs both: a 10–150 ms pause of the event loop on an ordinary disk, once every few megabytes
 * written. Here the connection's automatic checkpoints are off and a worker thread with its own connection
 * runs a PASSIVE checkpoint every `everyMs` (one that has nothing to copy costs next to nothing, and a
 * PASSIVE checkpoint never blocks the writer). Should the thread fail, the connection checkpoints itself
 * again as before.
 *
 * A PASSIVE checkpoint never makes the file smaller: a log that grew past `walLimitBytes` (readers kept it from
 * starting over while a large write went on) is folded and truncated to nothing by a TRUNCATE checkpoint, which
 * waits at most 50 ms for the readers still in the log (and is tried again at the next turn).
 */
export function startCheckpointer(sqlite: Database.Database, options: CheckpointerOptions = {}): Checkpointer {
  const driver = options.driver ?? createRequire(import.meta.url).resolve('better-sqlite3')
  sqlite.pragma('wal_autocheckpoint = 0')
  const files = [sqlite.name, ...options.also ?? []]
  const workerData = { files, driver, everyMs: options.everyMs ?? 1000,
    walLimitBytes: options.walLimitBytes ?? WAL_LIMIT_BYTES }
  const worker = new Worker(THREAD_SOURCE, { eval: true, workerData })
  worker.unref()
  let stopping = false
  let failed = false
  // a thread that fails emits 'error' and then 'exit': hand checkpoints back once
  const fallBack = (err: Error) => {
    if (failed) return
    failed = true
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`)
    options.onError?.(err)
  }
  worker.on('message', (m: { error?: string }) => {
    if (m.error) options.onError?.(new Error(`background checkpoint failed: ${m.error}`))
  })
  worker.on('error', fallBack)
  worker.on('exit',
    (code) => { if (!stopping) fallBack(new Error(`the checkpoint thread stopped (exit code ${code})`)) })
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  return {
    async stop() {
      if (stopping) return exited
      stopping = true
      worker.postMessage('stop')
      const timeout = setTimeout(() => { void worker.terminate() }, 5000)
      await exited
      clearTimeout(timeout)
    }
  }
}
