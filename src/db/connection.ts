import Database from 'better-sqlite3'

/**
 * The size the write-ahead log is kept to. A writer that starts the log over (once a checkpoint has copied all of it)
 * truncates a larger file to this (`journal_size_limit`), and the checkpoint thread folds and truncates a log that
 * grew past it (src/db/checkpointer.ts): without both, a log that grew once (a long read meanwhile, a large
 * import) keeps its size on disk for good.
 */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024

/** what every write connection to cairn.db sets: the server's own (openDatabase) and its threads' */
export function writerPragmas(sqlite: Database.Database) {
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`)
}

/**
 * A write connection of a thread beside the server's (the index worker, the webhook outbox thread), to the
 * database the server opened and migrated. It never checkpoints inside a commit (`wal_autocheckpoint = 0`): the
 * flag that lets the server's writes in would stay set through it; the thread, or the server's checkpoint thread,
 * folds the log.
 */
export function openThreadWriter(file: string): Database.Database {
  const sqlite = new Database(file, { fileMustExist: true })
  writerPragmas(sqlite)
  sqlite.pragma('wal_autocheckpoint = 0')
  return sqlite
}
