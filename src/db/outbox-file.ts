import Database from 'better-sqlite3'
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3'
import { migrate } from 'drizzle-orm/better-sqlite3/migrator'
import fs from 'node:fs'
import path from 'node:path'
import * as outboxTables from '../../schema/outbox/tables.js'
import { FILE_MODE } from './data-dir.js'

export type OutboxDb = BetterSQLite3Database<typeof outboxTables>

/** the outbox file of a main database: `<dir>/cairn.db` -> `<dir>/cairn-outbox.db` */
export function outboxFile(mainFile: string): string {
  return path.join(path.dirname(mainFile), `${path.basename(mainFile).replace(/\.db$/, '')}-outbox.db`)
}

/** the name the outbox file is attached under on a connection of the main database (the outbox thread's) */
export const OUTBOX_SCHEMA = 'outbox'

/**
 * Tables of a main database whose rows belong in the outbox file: the outbox tables of an earlier version, renamed
 * by migration 0025, or the outbox file's rows as a backup copies them (src/cli/backup.ts). Their presence says the
 * outbox file is to be made from them, whatever it holds.
 */
export const MOVED_MESSAGES = 'moved_webhook_messages'
export const MOVED_DELIVERIES = 'moved_webhook_deliveries'
/** in a backup only: how far the outbox had expanded (an earlier version marked each event instead) */
export const MOVED_STATE = 'moved_outbox_state'
/** each moved table, and the outbox file's table its rows belong in */
export const MOVED_TABLES = [[MOVED_MESSAGES, 'webhook_messages'], [MOVED_DELIVERIES, 'webhook_deliveries'],
  [MOVED_STATE, 'outbox_state']] as const

const MESSAGE_COLUMNS = 'seq, id, event_seq, webhook_id, state, attempts, created_at, updated_at'
const DELIVERY_COLUMNS = `id, webhook_id, message_id, attempt, next_attempt_at, event_type, status_code, success,
  latency_ms, request_body, response_body, error, created_at`

/** the outbox file's connections: the same settings as cairn.db's writers (src/db/connection.ts) */
function outboxPragmas(sqlite: Database.Database, schema = 'main') {
  sqlite.pragma(`${schema}.journal_mode = WAL`)
  sqlite.pragma(`${schema}.synchronous = NORMAL`)
}

export interface OutboxFile {
  /** the server's connection to the outbox file: it reads (deliveries, metrics); the outbox thread writes */
  sqlite: Database.Database
  db: OutboxDb
  /** what opening it did: rows moved in from the main database, rows of deleted webhooks removed */
  moved: { messages: number; deliveries: number } | undefined
  orphans: number
  /** messages of events the main database does not have (the outbox file was ahead of it), removed */
  ahead: number
}

/**
 * Opens the outbox file beside `main` (created 0600, its tables migrated), and makes it match the main database:
 * filled from the moved tables when the main database has them (an upgrade, a restored backup: the outbox file is
 * emptied first, so that a move cut short by a crash is simply made again), the rows of webhooks the main database
 * no longer has removed. The main database's moved tables are dropped once the outbox file has committed their rows.
 */
export function openOutboxFile(main: Database.Database, migrationsFolder: string): OutboxFile {
  const file = outboxFile(main.name)
  fs.closeSync(fs.openSync(file, 'a', FILE_MODE))
  const sqlite = new Database(file)
  try {
    outboxPragmas(sqlite)
    sqlite.pragma('busy_timeout = 5000')
    const db = drizzle(sqlite, { schema: outboxTables })
    migrate(db, { migrationsFolder })
    sqlite.prepare('ATTACH DATABASE ? AS cairn').run(main.name)
    let moved: OutboxFile['moved']
    let orphans = 0
    let ahead = 0
    try {
      moved = moveIn(sqlite, main)
      ahead = behindMain(sqlite)
      orphans = removeOrphans(sqlite)
    } finally {
      sqlite.exec('DETACH DATABASE cairn')
    }
    return { sqlite, db, moved, orphans, ahead }
  } catch (err) {
    sqlite.close()
    throw err
  }
}

const hasTable = (sqlite: Database.Database, schema: string, name: string) =>
  sqlite.prepare(`SELECT 1 FROM ${schema}.sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined

/** whether a main database (a connection to it, as `schema`) has rows to move into an outbox file: any moved table */
export const hasMovedTables = (sqlite: Database.Database, schema = 'main') =>
  MOVED_TABLES.some(([name]) => hasTable(sqlite, schema, name))

/** the last outbox event seq the main database has given (its AUTOINCREMENT counter) */
const lastEventSql = `coalesce((SELECT seq FROM cairn.sqlite_sequence WHERE name = 'webhook_events'), 0)`

/**
 * An outbox file ahead of its main database (the main file restored some other way, or its last commits lost with
 * the machine, when the outbox file's were not): the messages of events it does not have go (their seqs will name
 * other events), and the expansion continues from its last event.
 */
function behindMain(sqlite: Database.Database): number {
  return sqlite.transaction(() => {
    const removed = sqlite.prepare(`DELETE FROM webhook_messages WHERE event_seq > ${lastEventSql}`).run().changes
    sqlite.prepare(`UPDATE outbox_state SET expanded_through = ${lastEventSql}
      WHERE expanded_through > ${lastEventSql}`).run()
    return removed
  })()
}

/** the move (see openOutboxFile), and the state row of a new outbox file */
function moveIn(sqlite: Database.Database, main: Database.Database): OutboxFile['moved'] {
  const events = (column: string) => `(SELECT ${column} FROM cairn.webhook_events)`
  if (!hasMovedTables(sqlite, 'cairn')) {
    // a new outbox file beside a database that has events (it was lost, or removed): its events are not sent again
    sqlite.prepare(`INSERT OR IGNORE INTO outbox_state (id, expanded_through)
      VALUES (1, coalesce(${events('max(seq)')}, 0))`).run()
    return undefined
  }
  const fromState = hasTable(sqlite, 'cairn', MOVED_STATE)
  const copy = (table: string, into: string, columns: string) => hasTable(sqlite, 'cairn', table)
    ? sqlite.prepare(`INSERT INTO ${into} (${columns}) SELECT ${columns} FROM cairn.${table}`).run().changes : 0
  const counts = sqlite.transaction(() => {
    sqlite.exec('DELETE FROM webhook_messages; DELETE FROM webhook_deliveries; DELETE FROM outbox_state')
    const messages = copy(MOVED_MESSAGES, 'webhook_messages', MESSAGE_COLUMNS)
    const deliveries = copy(MOVED_DELIVERIES, 'webhook_deliveries', DELIVERY_COLUMNS)
    // a message waiting for a retry whose job the copy of the main database does not have (a backup copies the
    // outbox file first: the job may have run and gone in between) is attempted again from the start
    sqlite.prepare(`UPDATE webhook_messages SET state = 'pending' WHERE state = 'retrying' AND seq NOT IN
      (SELECT json_extract(payload, '$.seq') FROM cairn.jobs WHERE type = 'webhook.retry'
        AND status IN ('queued', 'running'))`).run()
    // an earlier version marked each event it had expanded, in order: the outbox continues below the first unmarked
    sqlite.prepare(fromState
      ? `INSERT INTO outbox_state (id, expanded_through) SELECT 1, expanded_through FROM cairn.${MOVED_STATE}`
      : `INSERT INTO outbox_state (id, expanded_through) VALUES (1, coalesce(
        (SELECT min(seq) - 1 FROM cairn.webhook_events WHERE expanded = 0), ${events('max(seq)')}, 0))`).run()
    sqlite.prepare(`INSERT OR IGNORE INTO outbox_state (id, expanded_through) VALUES (1, 0)`).run()
    return { messages, deliveries }
  })()
  main.transaction(() => {
    for (const [table] of MOVED_TABLES) main.exec(`DROP TABLE IF EXISTS ${table}`)
  })()
  return counts
}

/**
 * Removes the messages and deliveries of webhooks the main database no longer has (deleted while the process
 * stopped before the outbox thread removed them). Visits each webhook id once, from the indexes: a few look-ups
 * per webhook, whatever the number of rows.
 */
function removeOrphans(sqlite: Database.Database): number {
  const exists = sqlite.prepare(`SELECT 1 FROM cairn.webhooks WHERE id = ?`)
  let removed = 0
  for (const table of ['webhook_messages', 'webhook_deliveries']) {
    const next = sqlite.prepare(`SELECT min(webhook_id) FROM main.${table} WHERE webhook_id > ?`).pluck()
    const remove = sqlite.prepare(`DELETE FROM main.${table} WHERE webhook_id = ?`)
    for (let id = next.get('') as string | null; id !== null; id = next.get(id) as string | null) {
      if (exists.get(id) === undefined) removed += remove.run(id).changes
    }
  }
  return removed
}

/** attaches the outbox file to a connection of the main database, as OUTBOX_SCHEMA */
export function attachOutbox(sqlite: Database.Database, mainFile = sqlite.name) {
  sqlite.prepare(`ATTACH DATABASE ? AS ${OUTBOX_SCHEMA}`).run(outboxFile(mainFile))
  outboxPragmas(sqlite, OUTBOX_SCHEMA)
}
