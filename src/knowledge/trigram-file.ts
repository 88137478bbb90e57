// The trigram index in a database file of its own, beside the main one (migration 0023).
//
// SQLite lets one connection write a database file at a time, and the trigram index is most of an ingest's CPU
// (most of the SQLite work of a text: `npm run bench -- ingest`). In a file of
// its own, a thread of its own (src/knowledge/trigram-worker.ts) indexes the passages the index worker has just
// written, while that worker writes the next ones: two cores instead of one.
//
// The file is derived from the main database and never holds anything that cannot be made again:
// - `indexed_through`: every passage up to this rowid is indexed (passages are read in rowid order, and new ones
//   always take rowids above every passage ever deleted: knowledge_trigram_state.rowid_high, passages.ts);
// - `deleted_through`: the main database's queue of deleted passages (knowledge_trigram_deletes) is applied up to
//   this entry (the index worker then removes the applied entries from the queue);
// - `generation`: the main database it belongs to. A file of another database, or one ahead of the main database
//   (a restored backup of only the main file), is emptied and made again (`openTrigrams`).
// Searches join the trigram matches to the passages, so a passage deleted but not yet removed here is never
// answered; a document is `indexed` only once this file has reached its last passage.
import Database from 'better-sqlite3'
import fs from 'node:fs'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { FILE_MODE } from '../db/data-dir.js'
import { idleMerger, mergeStep } from './fts-segments.js'

/** FTS5's default `usermerge`, which the trigram index keeps (its merge settings change automerge and crisismerge) */
const FTS5_USERMERGE = 4
/** the trigram index's table, in the trigram file (attached as `trigrams` to the connections that search) */
export const TRIGRAM_TABLE = 'knowledge_passages_fts'

/** `<dir>/cairn.db` -> `<dir>/cairn-trigrams.db` */
export function trigramFile(mainFile: string): string {
  return path.join(path.dirname(mainFile), `${path.basename(mainFile).replace(/\.db$/, '')}-trigrams.db`)
}

const SCHEMA = `
CREATE VIRTUAL TABLE IF NOT EXISTS ${TRIGRAM_TABLE} USING fts5(text, content = '', contentless_delete = 1,
  tokenize = 'trigram case_sensitive 0');
CREATE TABLE IF NOT EXISTS trigram_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  generation TEXT NOT NULL,
  indexed_through INTEGER NOT NULL,
  deleted_through INTEGER NOT NULL
);
INSERT OR IGNORE INTO trigram_state (id, generation, indexed_through, deleted_through) VALUES (1, '', 0, 0);`

/** the cells of the BigInt64Array the trigram worker shares with the index worker */
export const CELL = {
  /** every passage up to this rowid is in the trigram index */
  through: 0,
  /** the delete queue is applied up to this entry */
  deleted: 1,
  /** raised by the index worker when there is new work (passages committed, passages deleted, closing) */
  poke: 2,
  /** 1 while the worker has nothing to do, merges included */
  idle: 3,
  /** 1 once the worker failed to start (the index worker's waits then fail) */
  failed: 4,
  /** the index worker's tasks in progress: no merges meanwhile (they would take the core the ingest needs) */
  tasks: 5,
  /**
   * `deleted` as of the last checkpoint: on disk for sure (commits are synced at checkpoints, `synchronous` NORMAL).
   * The index worker forgets queued deletes up to here only: after a power loss the file still finds the rest.
   */
  durable: 6
} as const
export const CELLS = 7

/** deletes applied at most per step */
const BATCH = 4096
/**
 * Passages per step: about a megabyte of text held (more costs peak memory and saves no time: `npm run bench --
 * ingest`). Nothing waits for this file's write lock (searches read its log), only an upload's answer
 * for the worker to reach its passages; fewer, larger commits write fewer FTS5 segments.
 */
const STEP_ROWS = 1024

export interface TrigramProgress { indexedThrough: number; deletedThrough: number }

/** every passage rowid given so far, in the main file `db`: passages deleted or written (new ones take rowids above) */
const givenSql = (db = '') => `max((SELECT rowid_high FROM ${db}knowledge_trigram_state),
  (SELECT coalesce(max(rowid), 0) FROM ${db}knowledge_passages))`
/** the last entry ever queued for deletion in the main file `db` (0: none) */
const lastDeleteSql = (db = '') =>
  `coalesce((SELECT seq FROM ${db}sqlite_sequence WHERE name = 'knowledge_trigram_deletes'), 0)`

/**
 * A connection that writes the trigram file, with the main database attached as `cairn` (read only by it: its
 * transactions are DEFERRED, so they never take the main file's write lock). Creates the file (0600) and its
 * tables, and empties them when they do not belong to the main database as it is now.
 */
export function openTrigrams(mainFile: string) {
  const file = trigramFile(mainFile)
  fs.closeSync(fs.openSync(file, 'a', FILE_MODE))
  const sqlite = new Database(file)
  try {
    sqlite.pragma('journal_mode = WAL')
    sqlite.pragma('synchronous = NORMAL')
    sqlite.pragma('busy_timeout = 5000')
    // its log back to 64 MB once checkpointed (the trigram worker checkpoints it itself, at 512 MB at most)
    sqlite.pragma(`journal_size_limit = ${64 * 1024 * 1024}`)
    sqlite.exec(SCHEMA)
    sqlite.prepare('ATTACH DATABASE ? AS cairn').run(mainFile)
  } catch (err) {
    sqlite.close()
    throw err
  }
  const state = sqlite.prepare(`SELECT generation, indexed_through AS indexedThrough, deleted_through AS deletedThrough
    FROM trigram_state`)
  const setState = sqlite.prepare(`INSERT OR REPLACE INTO trigram_state (id, generation, indexed_through,
    deleted_through) VALUES (1, @generation, @indexedThrough, @deletedThrough)`)
  const main = sqlite.prepare(`SELECT generation, ${givenSql('cairn.')} AS high,
    ${lastDeleteSql('cairn.')} AS lastDelete, (SELECT min(seq) FROM cairn.knowledge_trigram_deletes) AS firstDelete
    FROM cairn.knowledge_trigram_state`)
  // The main file is read on a connection of its own, a step's reads in one short read transaction: one held
  // through this file's transactions would keep the main file's log from starting over while the index worker
  // writes.
  let reader: Database.Database
  try {
    reader = new Database(mainFile, { readonly: true, fileMustExist: true })
    reader.pragma('busy_timeout = 5000')
  } catch (err) {
    sqlite.close()
    throw err
  }
  const deletes = reader.prepare(`SELECT seq, passage_rowid FROM knowledge_trigram_deletes WHERE seq > ?
    ORDER BY seq LIMIT ${BATCH}`).raw(true)
  const remove = sqlite.prepare(`DELETE FROM ${TRIGRAM_TABLE} WHERE rowid = ?`)
  const fresh = reader.prepare(`SELECT rowid, text FROM knowledge_passages WHERE rowid > ? ORDER BY rowid
    LIMIT ${STEP_ROWS}`).raw(true)
  const given = reader.prepare(`SELECT ${givenSql()}`).pluck()
  const insert = sqlite.prepare(`INSERT INTO ${TRIGRAM_TABLE} (rowid, text) VALUES (?, ?)`)
  for (const s of [deletes, fresh]) s.safeIntegers(true)
  const setProgress = sqlite.prepare(`UPDATE trigram_state SET indexed_through = @indexedThrough,
    deleted_through = @deletedThrough`)
  // (FTS5 takes a command and its value as literals only)
  const command = (key: string, value: number) =>
    sqlite.prepare(`INSERT INTO ${TRIGRAM_TABLE} (${TRIGRAM_TABLE}, rank) VALUES ('${key}', ${value})`)
  // the level merges by steps of `pages`
  const levelSteps = new Map<number, () => boolean>()
  // the worker's idle merges (src/knowledge/fts-segments.ts), by steps of `pages`; FTS5's usermerge is its default
  const idleSteps = new Map<number, () => boolean>()
  const automergeNow = sqlite.prepare(`SELECT v FROM ${TRIGRAM_TABLE}_config WHERE k = 'automerge'`).pluck()
  const MERGING = {
    // no merge inside a commit until a level holds 1,000 segments (more than a large ingest makes): the indexing
    // then costs less CPU, and the merges follow once it has caught up (`npm run bench -- ingest`)
    ingest: [command('automerge', 0), command('crisismerge', 1000)],
    normal: [command('automerge', 4), command('crisismerge', 16)]
  }

  const newGeneration = sqlite.prepare(`UPDATE cairn.knowledge_trigram_state SET generation = ?`)
  type Main = { generation: string; high: number; lastDelete: number; firstDelete: number | null }
  /** makes the file match the main database: emptied when it belongs to another one or is ahead of it */
  const reconcile = sqlite.transaction(() => {
    const m = main.get() as Main
    const mine = state.get() as { generation: string } & TrigramProgress
    // deletes the file has not applied but the queue no longer holds (the file is older than the main database)
    const lost = (d: number) => d < (m.firstDelete ?? m.lastDelete + 1) - 1
    if (mine.generation === m.generation && mine.indexedThrough <= m.high &&
      mine.deletedThrough <= m.lastDelete && !lost(mine.deletedThrough)) return false
    sqlite.exec(`INSERT INTO ${TRIGRAM_TABLE} (${TRIGRAM_TABLE}) VALUES ('delete-all')`)
    // a new generation for both: a file made on this line of history never passes for one of another line that
    // reuses its rowids (a second restore, of an older copy); should the two commits be parted by a crash, the next
    // start finds the generations apart and empties the file again
    const generation = randomBytes(16).toString('hex')
    newGeneration.run(generation)
    setState.run({ generation, indexedThrough: 0, deletedThrough: m.lastDelete })
    return true
  })

  /** what a step reads of the main file: one snapshot, held only while it reads */
  const read = reader.transaction((indexedThrough: number, deletedThrough: number) => ({
    deleted: deletes.all(BigInt(deletedThrough)) as Array<[bigint, bigint]>,
    // every rowid up to it is in `passages` or belonged to a passage deleted before this snapshot
    high: given.get() as number,
    passages: fresh.all(BigInt(indexedThrough)) as Array<[bigint, string]>
  }))
  const write = sqlite.transaction((progress: TrigramProgress, got: ReturnType<typeof read>, through?: number) => {
    let { indexedThrough, deletedThrough } = progress
    for (const [seq, rowid] of got.deleted) {
      // a passage above the mark was never indexed here
      if (rowid <= BigInt(indexedThrough)) remove.run(rowid)
      deletedThrough = Number(seq)
    }
    for (const [rowid, text] of got.passages) insert.run(rowid, text)
    if (got.passages.length > 0) indexedThrough = Number(got.passages[got.passages.length - 1][0])
    if (through !== undefined && through > indexedThrough) indexedThrough = through
    setProgress.run({ indexedThrough, deletedThrough })
    return { indexedThrough, deletedThrough }
  })

  /**
   * One step: the queued deletes and up to STEP_ROWS passages in rowid order, read in one snapshot of the main file
   * (released before this file's transaction, so that the main file's log can start over meanwhile), then written
   * in one transaction here. Returns the progress, whether anything was done and whether more is left.
   */
  function step() {
    const before = state.get() as TrigramProgress
    const got = read(before.indexedThrough, before.deletedThrough)
    const more = got.passages.length === STEP_ROWS || got.deleted.length === BATCH
    // drained: the rowids up to `high` not read belonged to passages deleted before the snapshot (their deletes come
    // after), so the mark moves past them: a document whose last passages were purged while its task waited is
    // reached as well
    const through = more ? undefined : got.high
    if (got.deleted.length === 0 && got.passages.length === 0 &&
      (through === undefined || through <= before.indexedThrough)) return { progress: before, worked: false, more }
    return { progress: write(before, got, through), worked: true, more }
  }

  return {
    sqlite,
    reconcile: () => reconcile() as boolean,
    step,
    progress(): TrigramProgress {
      const s = state.get() as TrigramProgress
      return { indexedThrough: s.indexedThrough, deletedThrough: s.deletedThrough }
    },
    /**
     * One bounded merge step; false once there was nothing left to merge: the levels' merges, and with `whole` the
     * idle merges' (src/knowledge/fts-segments.ts: all segments into one when worth it).
     */
    mergeStep(pages: number, whole = false): boolean {
      if (!whole) {
        let step = levelSteps.get(pages)
        if (!step) levelSteps.set(pages, step = mergeStep(sqlite, TRIGRAM_TABLE, pages))
        return step()
      }
      let step = idleSteps.get(pages)
      if (!step) idleSteps.set(pages, step = idleMerger(sqlite, TRIGRAM_TABLE, pages, FTS5_USERMERGE))
      return step()
    },
    /** which of the two merge settings the index has */
    mergingNow(): 'ingest' | 'normal' {
      return automergeNow.get() === 0 ? 'ingest' : 'normal'
    },
    /** FTS5's merge settings: `ingest` leaves merging to mergeStep while passages keep coming */
    merging(mode: 'ingest' | 'normal') {
      sqlite.transaction(() => { for (const s of MERGING[mode]) s.run() })()
    },
    /** catches up and merges, in one go (at startup, and for tests and benchmarks that write passages) */
    catchUp() {
      while (step().more) { /* next step */ }
      while (this.mergeStep(2000)) { /* next step */ }
    },
    close() {
      if (reader.open) reader.close()
      if (!sqlite.open) return
      try { sqlite.pragma('main.wal_checkpoint(TRUNCATE)') } catch { /* the next open folds it */ }
      sqlite.close()
    }
  }
}

export type Trigrams = ReturnType<typeof openTrigrams>

/**
 * Attaches the trigram file as `trigrams` to a connection that searches: read only, for a read-only connection
 * (a connection that writes with BEGIN IMMEDIATE would take the trigram file's write lock too).
 */
export function attachTrigrams(sqlite: Database.Database, mainFile = sqlite.name) {
  sqlite.prepare('ATTACH DATABASE ? AS trigrams').run(trigramFile(mainFile))
}

/** A connection that searches (the search workers'): the main file read only, the trigram file attached with it. */
export function openSearchConnection(mainFile: string): Database.Database {
  const sqlite = new Database(mainFile, { readonly: true, fileMustExist: true })
  try {
    sqlite.pragma('busy_timeout = 5000')
    attachTrigrams(sqlite, mainFile)
  } catch (err) {
    sqlite.close()
    throw err
  }
  return sqlite
}

/**
 * Makes the trigram file match the main database at startup (emptied when it does not), and brings it up to date
 * there and then when an `indexed` document is not all in it (after an upgrade or a restore: a document is
 * `indexed` only once its passages are). Passages of documents still being indexed (a restart mid-ingest) are left
 * to the trigram worker (the indexer starts it: trigramsBehind).
 */
export function prepareTrigrams(mainFile: string): { rebuilt: boolean } {
  let t: Trigrams
  try {
    t = openTrigrams(mainFile)
  } catch (err) {
    // a damaged file (derived data): removed and made again
    const code = (err as { code?: string }).code ?? ''
    if (!/^SQLITE_(CORRUPT|NOTADB)/.test(code)) throw err
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(trigramFile(mainFile) + suffix, { force: true })
    t = openTrigrams(mainFile)
  }
  try {
    const rebuilt = t.reconcile()
    t.merging('normal')
    const newestIndexed = t.sqlite.prepare(`SELECT coalesce(max(last_passage_rowid), 0)
      FROM cairn.knowledge_documents WHERE status = 'indexed'`).pluck()
    if ((newestIndexed.get() as number) > t.progress().indexedThrough) t.catchUp()
    return { rebuilt }
  } finally {
    t.close()
  }
}

/** Whether the trigram file has passages to index or deletes to apply, on a searching connection (both files). */
export function trigramsBehind(sqlite: Database.Database): boolean {
  return sqlite.prepare(`SELECT (SELECT indexed_through FROM trigrams.trigram_state) <
      (SELECT coalesce(max(rowid), 0) FROM main.knowledge_passages)
    OR (SELECT deleted_through FROM trigrams.trigram_state) < ${lastDeleteSql('main.')}`).pluck().get() === 1
}
