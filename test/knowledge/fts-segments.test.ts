import t from 'tap'
import path from 'node:path'
import Database from 'better-sqlite3'
import { decodeSegments, idleMerger, segmentsOf, STRUCTURE_ROWID, wantsMerge, worthConsolidating }
  from '../../src/knowledge/fts-segments.js'
import { trigramFile } from '../../src/knowledge/trigram-file.js'
import { build, signup, tempDir, uploadDocument } from '../helper.js'

/**
 * Each segment's leaf pages counted from the rows of `<table>_data` (FTS5's rowids: segment id << 37, the
 * doclist-index flag << 36, the b-tree height << 31, the page number; tombstone pages under segment id + 2^16),
 * independently of the structure record.
 */
function leafPagesFromRows(db: Database.Database, table: string): number[] {
  return (db.prepare(`SELECT count(*) FROM ${table}_data WHERE id > ${STRUCTURE_ROWID} AND (id >> 37) < 65536
    AND ((id >> 31) & 63) = 0 GROUP BY id >> 37`).pluck().all() as number[]).sort((a, b) => a - b)
}
const structure = (db: Database.Database, table: string) => segmentsOf(db, table)()
const pagesOf = (db: Database.Database, table: string) =>
  structure(db, table).map((s) => s.pages).sort((a, b) => a - b)

t.test('the structure record gives each segment and its leaf pages, as the index\'s rows do: plain, contentless ' +
  'with deletes, and in the middle of a merge', async (t) => {
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  const words = Array.from({ length: 2000 }, (_, i) => `w${i.toString(36)}`)
  let seed = 7
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
  const text = () => Array.from({ length: 60 }, () => words[Math.floor(random() * words.length)]).join(' ')
  for (const [table, options] of [['plain', ''], ['tombstones', ", content = '', contentless_delete = 1"]]) {
    db.exec(`CREATE VIRTUAL TABLE ${table} USING fts5(a${options})`)
    t.same(structure(db, table), [], `${table}: a new index has no segment`)
    const insert = db.prepare(`INSERT INTO ${table} (rowid, a) VALUES (?, ?)`)
    // 120 commits: segments on several levels
    for (let tx = 0, id = 0; tx < 120; tx++) {
      db.transaction(() => { for (let i = 0; i < 40; i++) insert.run(++id, text()) })()
    }
    const segments = structure(db, table)
    t.ok(segments.length >= 4, `${table}: ${segments.length} segments`)
    t.ok(new Set(segments.map((s) => s.level)).size >= 2, `${table}: on more than one level`)
    t.same(pagesOf(db, table), leafPagesFromRows(db, table), `${table}: the pages the rows hold`)
    if (table === 'tombstones') {
      db.prepare(`DELETE FROM ${table} WHERE rowid % 7 = 0`).run()
      t.same(pagesOf(db, table), leafPagesFromRows(db, table), `${table}: and after deletes (tombstone pages)`)
    }
    // one bounded step of a merge of everything: inputs trimmed, the output partly written
    db.prepare(`INSERT INTO ${table} (${table}, rank) VALUES ('merge', -20)`).run()
    t.same(pagesOf(db, table), leafPagesFromRows(db, table), `${table}: the same in the middle of a merge`)
    t.ok(structure(db, table).some((s) => s.merging), `${table}: its inputs are marked`)
    t.notOk(segments.some((s) => s.merging), `${table}: none before`)
    db.prepare(`INSERT INTO ${table} (${table}) VALUES ('optimize')`).run()
    t.equal(structure(db, table).length, 1, `${table}: one segment once optimized`)
    t.same(pagesOf(db, table), leafPagesFromRows(db, table))
  }
  t.throws(() => decodeSegments(Uint8Array.from([0, 0, 0, 1, 2, 5])), /ends inside a number/,
    'a cut record is refused, not misread')
})

t.test('an index is merged whole when the segments beside the largest add up to a quarter of it', async (t) => {
  const of = (...pages: number[]) => pages.map((p) => ({ level: 0, pages: p, merging: false }))
  t.notOk(worthConsolidating([]), 'no segment')
  t.notOk(worthConsolidating(of(5000)), 'one segment')
  t.ok(worthConsolidating(of(100, 25)))
  t.notOk(worthConsolidating(of(100, 24)))
  t.ok(worthConsolidating(of(1000, 100, 100, 30, 20)), 'several small ones together')
  t.notOk(worthConsolidating(of(1000, 100, 100, 30, 19)))
  t.ok(worthConsolidating(of(3, 4, 5)), 'similar sizes')
})

t.test('the idle merges carry on a merge into one that new segments interrupted, without starting it again',
  async (t) => {
    // the index worker's settings while it ingests and once idle (src/knowledge/index-worker.ts)
    const settings = (db: Database.Database, values: Record<string, number>) => {
      for (const [k, v] of Object.entries(values)) db.prepare(`INSERT INTO idx (idx, rank) VALUES ('${k}', ${v})`).run()
    }
    const ingest = { automerge: 0, usermerge: 16, crisismerge: 64 }
    const normal = { automerge: 4, usermerge: 4, crisismerge: 16 }
    /** the rows the idle merges change, at most `steps` of them */
    const idle = (db: Database.Database, steps = Infinity) => {
      const changes = db.prepare('SELECT total_changes()').pluck()
      const before = changes.get() as number
      const step = idleMerger(db, 'idx', 8, normal.usermerge)
      for (let n = 0; n < steps && step(); n++) { /* next step */ }
      return (changes.get() as number) - before
    }
    const setUp = () => {
      const db = new Database(':memory:')
      t.teardown(() => db.close())
      db.exec(`CREATE VIRTUAL TABLE idx USING fts5(a, content = '', contentless_delete = 1)`)
      let seed = 7
      let id = 0
      const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
      const words = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`)
      const insert = db.prepare('INSERT INTO idx (rowid, a) VALUES (?, ?)')
      const commit = (rows: number) => db.transaction(() => {
        for (let i = 0; i < rows; i++) {
          insert.run(++id, Array.from({ length: 60 }, () => words[Math.floor(random() * words.length)]).join(' '))
        }
      })()
      settings(db, ingest)
      for (let i = 0; i < 8; i++) commit(400)
      settings(db, normal)
      idle(db)
      settings(db, ingest)
      for (let i = 0; i < 4; i++) commit(250)
      settings(db, normal)
      return { db, commit }
    }
    // the same index merged into one without a break
    const whole = setUp()
    const uninterrupted = idle(whole.db)
    t.equal(segmentsOf(whole.db, 'idx')().length, 1)
    // cut short by an upload of two small commits: a merge in progress, two new segments on a lower level
    const cut = setUp()
    let changed = idle(cut.db, 20)
    t.ok(segmentsOf(cut.db, 'idx')().some((s) => s.merging), 'a merge in progress')
    settings(cut.db, ingest)
    cut.commit(5)
    cut.commit(5)
    settings(cut.db, normal)
    changed += idle(cut.db)
    const after = segmentsOf(cut.db, 'idx')()
    t.notOk(after.some((s) => s.merging), 'no merge left in progress')
    t.notOk(worthConsolidating(after), `the upload's small segments are left beside the merged one ` +
      `(${after.map((s) => s.pages).join(' + ')} pages)`)
    t.ok(changed < uninterrupted * 1.2, `about the work of one merge (${changed} rows changed against ` +
      `${uninterrupted}; started again, ~1,950)`)
    t.same(cut.db.prepare(`SELECT v FROM idx_config WHERE k = 'usermerge'`).pluck().get(), normal.usermerge,
      'the index\'s own usermerge setting back')
    cut.db.prepare(`INSERT INTO idx (idx) VALUES ('integrity-check')`).run()
  })

t.test('an idle server merges each passage index into one segment: words, pairs, runs and trigrams', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
  const u = await signup(app)
  // three uploads of the same size: three segments per index (a level merges at four), none the largest by far
  const line = (n: number) => `The ferry ${n} crosses the harbour at dawn, carrying lanterns and letters.\n`
  for (let n = 0; n < 3; n++) {
    await uploadDocument(app, u, { filename: `log-${n}.txt`, content: line(n).repeat(3000) })
  }
  const file = path.join(app.config.dataDir, 'cairn.db')
  const main = new Database(file, { fileMustExist: true })
  t.teardown(() => main.close())
  const trigrams = new Database(trigramFile(file), { fileMustExist: true })
  t.teardown(() => trigrams.close())
  const indexes = [['knowledge_passages_words', main], ['knowledge_passages_pairs', main],
    ['knowledge_passages_runs', main], ['knowledge_passages_fts', trigrams]] as const
  const segmentsNow = () => indexes.map(([table, db]) => structure(db, table))
  // the workers merge once idle, in bounded steps: wait until none has a merge left (a minute at most). How the pair
  // and run catch-up splits its writes into transactions depends on the machine's load: a last small segment below
  // CONSOLIDATE_SHARE of the merged one is left for the next merge, by design
  const until = Date.now() + 60_000
  while (segmentsNow().some(wantsMerge) && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
  const left = segmentsNow()
  // (wantsMerge: none mid-merge, and one segment or one with less than CONSOLIDATE_SHARE of it beside)
  t.same(left.map(wantsMerge), [false, false, false, false],
    `no index mid-merge or worth merging into one (pages: ${left.map((segments) => segments.map((s) => s.pages))})`)
  t.ok(left.every((segments) => segments.length >= 1), 'each index holds its passages')
  // and the index still answers
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: u.auth,
    payload: { query: 'ferry 2 crosses', mode: 'substring', limit: 5 } })
  t.equal(res.statusCode, 200)
  t.ok(res.json().results.length > 0, 'found through the merged indexes')
  for (const [table, db] of indexes) db.prepare(`INSERT INTO ${table} (${table}) VALUES ('integrity-check')`).run()
})

t.test('a server started on an index left worth merging (stopped before its idle merges) merges it without an ' +
  'upload', async (t) => {
  const dataDir = tempDir(t)
  const first = await build(t, { dataDir })
  // three commits, three segments: as a process stopped before its idle merges leaves the pair index
  const insert = first.sqlite.prepare(`INSERT INTO knowledge_passages_pairs (rowid, near, far) VALUES (?, ?, ?)`)
  for (let i = 1; i <= 3; i++) insert.run(i, `ry_crosses es_the`, `ferry_crosses rosses_the`)
  t.equal(structure(first.sqlite, 'knowledge_passages_pairs').length, 3)
  await first.close()
  const second = await build(t, { dataDir })
  const until = Date.now() + 60_000
  while (structure(second.sqlite, 'knowledge_passages_pairs').length !== 1 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20))
  }
  t.equal(structure(second.sqlite, 'knowledge_passages_pairs').length, 1, 'one segment')
})
