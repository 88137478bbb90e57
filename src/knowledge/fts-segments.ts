/**
 * The segments of an FTS5 index, read from its structure record, and when an idle index is worth merging into one.
 * No server-side imports: the index and trigram workers load this.
 *
 * FTS5 keeps an index as b-trees ("segments") in levels; with `automerge` 4 a level's fourth segment merges the
 * level into one on the next, so an index of a million passages written in many small transactions settles at
 * 10–15 segments of every size. A query reads each of its terms once per segment: on pages the kernel no longer
 * caches, each segment is a few more reads from the disk (`npm run bench -- search`, 2-word phrases on a dropped
 * page cache). Merging everything into one rewrites the whole
 * index, so it is done only when the segments beside the largest add up to a share of it (CONSOLIDATE_SHARE):
 * each byte is then rewritten a bounded number of times more, however small the uploads that come between.
 */
import type Database from 'better-sqlite3'

/** FTS5's structure record is the `<table>_data` row of this id (fts5Int.h, FTS5_STRUCTURE_ROWID) */
export const STRUCTURE_ROWID = 10
/** the marker after the cookie of a structure record with per-segment origins and tombstones (FTS5_STRUCTURE_V2) */
const V2 = [0xff, 0x00, 0x00, 0x01]

/** Reads SQLite's varints (big-endian groups of 7 bits, the ninth byte whole), as FTS5 writes them, in turn. */
function varints(b: Uint8Array, at: number) {
  return () => {
    let v = 0
    for (let i = 0; i < 9; i++) {
      if (at >= b.length) throw new Error('FTS5 structure record ends inside a number')
      const byte = b[at++]
      if (i === 8) return v * 256 + byte
      v = v * 128 + (byte & 0x7f)
      if ((byte & 0x80) === 0) return v
    }
    return v
  }
}

/** a segment: its level, its leaf pages, whether it is an input of a merge not finished yet */
export type Segment = { level: number; pages: number; merging: boolean }

/** The segments of an FTS5 index's structure record: each one's level and leaf pages. Throws on a malformed record. */
export function decodeSegments(record: Uint8Array): Segment[] {
  const v2 = V2.every((byte, i) => record[4 + i] === byte)
  // after the cookie (and the marker)
  const next = varints(record, v2 ? 8 : 4)
  const levels = next()
  const count = next()
  next() // write counter
  const segments: Segment[] = []
  for (let level = 0; level < levels; level++) {
    // the first this many segments of the level are the inputs of a merge in progress
    const merging = next()
    const inLevel = next()
    for (let s = 0; s < inLevel; s++) {
      next() // segment id
      const first = next()
      const last = next()
      // origins, tombstone pages and entries
      if (v2) for (let f = 0; f < 5; f++) next()
      if (last < first) throw new Error('FTS5 structure record has a segment that ends before it starts')
      segments.push({ level, pages: last - first + 1, merging: s < merging })
    }
  }
  if (segments.length !== count) throw new Error('FTS5 structure record counts its segments wrong')
  return segments
}

/**
 * The pages in segments other than the largest, as a share of the largest, at which an idle index is merged into
 * one segment. A merge rewrites the largest plus the rest, so each byte written since the last one is rewritten
 * about 1 + 1/share times by it (5 at a quarter), on top of the level merges (about 4 at a million passages).
 */
export const CONSOLIDATE_SHARE = 0.25

/** Whether an idle index of these segments is worth merging into one. */
export function worthConsolidating(segments: Segment[]): boolean {
  if (segments.length < 2) return false
  let largest = 0
  let total = 0
  for (const { pages } of segments) {
    total += pages
    if (pages > largest) largest = pages
  }
  return total - largest >= largest * CONSOLIDATE_SHARE
}

/** Whether idle merges have work left on an index of these segments: a merge in progress, or worth merging into one. */
export function wantsMerge(segments: Segment[]): boolean {
  return segments.some((s) => s.merging) || worthConsolidating(segments)
}

/** The segments of the FTS5 index `table` of this connection, as they are when called (none in a new index). */
export function segmentsOf(sqlite: Database.Database, table: string): () => Segment[] {
  const structure = sqlite.prepare(`SELECT block FROM ${table}_data WHERE id = ${STRUCTURE_ROWID}`).pluck()
  return () => {
    const record = structure.get() as Uint8Array | undefined
    return record === undefined ? [] : decodeSegments(record)
  }
}

/**
 * One FTS5 merge step of `pages` on the index `table` of this connection (negative: every segment on one level, as
 * few as two merged), and whether it merged anything (a step that finds nothing to merge changes fewer than 2 rows)
 */
export function mergeStep(sqlite: Database.Database, table: string, pages: number): () => boolean {
  // (FTS5 takes a command and its value as literals only)
  const merge = sqlite.prepare(`INSERT INTO ${table} (${table}, rank) VALUES ('merge', ${pages})`)
  const totalChanges = sqlite.prepare('SELECT total_changes()').pluck()
  return () => {
    const before = totalChanges.get() as number
    merge.run()
    return (totalChanges.get() as number) - before >= 2
  }
}

/**
 * The idle merges of the FTS5 index `table` on this connection, one bounded step of `pages` a call (false once
 * nothing is left to merge): FTS5's level merges (`usermerge`, the index's setting, segments of a level at a time);
 * then, when the segments beside the largest have grown enough, all of them into one (a negative page count: every
 * segment on one level, as few as two merged). The steps after a step that merged carry its merge on. A merge in
 * progress that the level step does not take up (FTS5 goes on with it only when no lower level holds as many
 * segments as it merges) is carried on by a level step that merges as few as two segments: a negative step would
 * drop it and start the whole index again.
 */
export function idleMerger(sqlite: Database.Database, table: string, pages: number,
  usermerge: number): () => boolean {
  // (FTS5 takes a command and its value as literals only)
  const usermergeOf = (value: number) =>
    sqlite.prepare(`INSERT INTO ${table} (${table}, rank) VALUES ('usermerge', ${value})`)
  const levels = mergeStep(sqlite, table, pages)
  const whole = mergeStep(sqlite, table, -pages)
  const [pairsOn, pairsOff] = [usermergeOf(2), usermergeOf(usermerge)]
  const pairwise = sqlite.transaction(() => {
    pairsOn.run()
    try {
      return levels()
    } finally {
      pairsOff.run()
    }
  })
  const segments = segmentsOf(sqlite, table)
  let next: 'levels' | 'pairwise' | 'whole' = 'levels'
  return () => {
    for (;;) {
      const did = next === 'levels' ? levels() : next === 'whole' ? whole() : pairwise() as boolean
      if (did) { next = 'levels'; return true }
      if (next !== 'levels') { next = 'levels'; return false }
      let now: Segment[]
      try {
        now = segments()
      } catch {
        return false // a structure record this code cannot read: the level merges only
      }
      if (now.some((s) => s.merging)) next = 'pairwise'
      else if (worthConsolidating(now)) next = 'whole'
      else return false
    }
  }
}

/**
 * Whether the idle merges have work left on the FTS5 index `table` of this connection (wantsMerge: a process stopped
 * in the middle of one, or segments worth merging into one). False when its structure record cannot be read (a
 * format this code does not know: the levels' merges go on as before).
 */
export function mergeWanted(sqlite: Database.Database, table: string): () => boolean {
  const segments = segmentsOf(sqlite, table)
  return () => {
    try {
      return wantsMerge(segments())
    } catch {
      return false
    }
  }
}
