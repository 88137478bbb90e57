import type Database from 'better-sqlite3'

/**
 * Makes `sqlite`'s database full, as a full disk does: no page can be added (`max_page_count` at the pages it has,
 * a real SQLite answering SQLITE_FULL), and the free pages inside the file taken by a filler table.
 */
export function fillDatabase(sqlite: Database.Database) {
  sqlite.exec('CREATE TABLE IF NOT EXISTS disk_filler (b BLOB)')
  sqlite.pragma(`max_page_count = ${sqlite.pragma('page_count', { simple: true }) as number}`)
  const insert = sqlite.prepare('INSERT INTO disk_filler VALUES (?)')
  for (const size of [65_536, 4096, 512, 64, 8]) {
    for (;;) {
      try {
        insert.run(Buffer.alloc(size))
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_FULL') throw err
        break
      }
    }
  }
}

/** space again: the database may grow */
export function freeDatabase(sqlite: Database.Database) {
  sqlite.pragma('max_page_count = 4294967294')
}
