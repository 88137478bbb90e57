import type Database from 'better-sqlite3'

/**
 * The database check of `/health`: one statement that reads no table, so it tests the connection itself (open,
 * not locked out), raw since there is no table for Drizzle to build it from.
 */
export function databaseProbe(sqlite: Database.Database) {
  const ping = sqlite.prepare('SELECT 1')
  return (): 'ok' | 'error' => {
    try { ping.get(); return 'ok' } catch { return 'error' }
  }
}
