import Database from 'better-sqlite3'

/** what every write connection to cairn.db sets: the server's own (openDatabase) and its threads' */
export function writerPragmas(sqlite: Database.Database) {
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
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
