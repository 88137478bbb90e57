import Database from 'better-sqlite3'
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3'
import { migrate } from 'drizzle-orm/better-sqlite3/migrator'
import fs from 'node:fs'
import path from 'node:path'
import * as tables from '../../schema/tables/index.js'
import { startCheckpointer, type CheckpointerOptions } from './checkpointer.js'
import { countWriteIntent } from './write-intent.js'
import { writerPragmas } from './connection.js'
import { openOutboxFile, outboxFile, type OutboxFile } from './outbox-file.js'
import { projectRoot } from './project-root.js'

export { nowIso } from './now.js'
export { projectRoot }

export type Db = BetterSQLite3Database<typeof tables>

export interface DatabaseHandle {
  /** the raw better-sqlite3 connection, for prepared statements on hot paths */
  sqlite: Database.Database
  db: Db
  /** the outbox file beside it (src/db/outbox-file.ts): written by the webhook outbox thread, read here */
  outbox: OutboxFile
  /** stops the checkpoint thread, folds the write-ahead logs into the database files and closes */
  close(): Promise<void>
}

export interface OpenOptions {
  /** checkpoints from a thread of their own (src/db/checkpointer.ts); default on */
  checkpointer?: CheckpointerOptions | false
}

export function openDatabase(file: string, options: OpenOptions = {}): DatabaseHandle {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  // created 0600 before SQLite opens it: its -wal and -shm files take the database file's mode
  fs.closeSync(fs.openSync(file, 'a', 0o600))
  const sqlite = new Database(file)
  sqlite.pragma('journal_mode = WAL')
  writerPragmas(sqlite)
  countWriteIntent(sqlite)
  const db = drizzle(sqlite, { schema: tables })
  migrate(db, { migrationsFolder: path.join(projectRoot(), 'schema', 'migrations') })
  let outbox: OutboxFile
  try {
    outbox = openOutboxFile(sqlite, path.join(projectRoot(), 'schema', 'outbox-migrations'))
  } catch (err) {
    sqlite.close()
    throw err
  }
  const checkpointer = options.checkpointer === false ? undefined
    : startCheckpointer(sqlite, { ...options.checkpointer, also: [outboxFile(file)] })
  return {
    sqlite,
    db,
    outbox,
    async close() {
      await checkpointer?.stop()
      for (const connection of [outbox.sqlite, sqlite]) {
        if (!connection.open) continue
        connection.pragma('wal_checkpoint(TRUNCATE)')
        connection.close()
      }
    }
  }
}
