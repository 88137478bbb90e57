import t from 'tap'
import Database from 'better-sqlite3'
import { build, signup, tempDir, uploadDocument, type TestUser, searching } from '../helper.js'
import { filterBackfill, gramFilter, mayHold, needleGrams } from '../../src/knowledge/short-query-filter.js'
import { createSearch } from '../../src/knowledge/search.js'
import { rng } from '../../bench/seed.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }
const filterCount = (sqlite: Database.Database) =>
  sqlite.prepare('SELECT count(*) FROM knowledge_document_grams').pluck().get() as number
/** until the index worker, idle, has made `n` filters (it does so after its catch-up; a busy machine takes longer) */
async function filtersMade(sqlite: Database.Database, n: number) {
  for (let i = 0; i < 6000 && filterCount(sqlite) < n; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  return filterCount(sqlite)
}

t.test('a filter never says absent for a character or pair its texts hold, in any script', async (t) => {
  const random = rng(3)
  const alphabet = [...'abcxyzÉéñŵßİıΣσς中文😀𝒜 \n-_.'] // surrogate pairs, case changes that grow, final sigma
  const texts = Array.from({ length: 40 }, () =>
    Array.from({ length: 30 }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''))
  const f = gramFilter()
  for (const text of texts) f.add(text)
  const bits = new Uint8Array(f.bytes())
  let checked = 0
  for (const text of texts) {
    const cps = [...text.toLowerCase()]
    for (let i = 0; i < cps.length; i++) {
      for (const needle of [cps[i], cps[i] + (cps[i + 1] ?? '')]) {
        t.ok(mayHold(bits, needleGrams(needle)) || t.fail(`missed ${JSON.stringify(needle)}`), needle)
        checked++
      }
    }
  }
  t.ok(checked > 2000)
  t.notOk(mayHold(bits, needleGrams('qk')), 'an absent pair')
  t.notOk(mayHold(bits, needleGrams('ж')), 'an absent character')
  t.ok(mayHold(bits, needleGrams('ÉÉ'.toLowerCase())) === texts.some((x) => x.toLowerCase().includes('éé')) ||
    texts.every((x) => !x.toLowerCase().includes('éé')))
})

t.test('1–2 character search with document filters: absent skips, present found, missing filter scans, ' +
  'filters follow their documents and tenants', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  const b = await signup(app)
  const reader = (u: TestUser) => ({ customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId] })
  const fill = 'Plain English text about budgets and reports. '.repeat(8)
  const spanish = await uploadDocument(app, a, { filename: 'es.txt', content: `${fill}El niño come.` })
  await uploadDocument(app, a, { filename: 'en.txt', content: fill })
  await uploadDocument(app, b, { filename: 'b.txt', content: `${fill} Zwölf Boxkämpfer qx.` })
  t.equal(await filtersMade(app.sqlite, 3), 3, 'each indexed document of each tenant gets one, from the index worker')
  t.equal(filterBackfill(app.sqlite).batch(), 0, 'and only once')

  const search = createSearch(...searching(t, app))
  const files = async (u: TestUser, q: string) =>
    (await search.search(reader(u), {}, q, 10, 'substring')).map((h) => h.document.fileName)
  t.same(await files(a, 'ñ'), ['es.txt'], 'a character the filter holds is found')
  t.same(await files(a, 'Ño'), ['es.txt'], 'a pair, case folded')
  t.same(await files(a, 'qx'), [], 'absent for this reader (only the other tenant has it)')
  t.same(await files(b, 'qx'), ['b.txt'])
  t.same(await files(b, 'ñ'), [])
  t.same(await files(a, 'ö'), [])

  // a document without a filter yet is scanned: found right after upload
  await uploadDocument(app, a, { filename: 'late.txt', content: `${fill} Ŵales qx` })
  t.same(await files(a, 'ŵ'), ['late.txt'])
  t.same(await files(a, 'qx'), ['late.txt'])

  // the filter is what is consulted: one that (wrongly) holds nothing hides its document
  app.sqlite.prepare('UPDATE knowledge_document_grams SET bits = zeroblob(length(bits)) WHERE document_id = ?')
    .run(spanish.id)
  const fresh = createSearch(...searching(t, app)) // a search caches the filters it read
  t.same((await fresh.search(reader(a), {}, 'ñ', 10, 'substring')).length, 0, 'the document was skipped by its filter')
  t.same(await createSearch(...searching(t, app)).search(reader(a), {}, 'budgets', 10, 'substring')
    .then((h) => h.length > 0), true, '3+ character searches never use the filters')

  // deleting a document deletes its filter
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${spanish.id}`, headers: a.auth }))
    .statusCode, 200)
  t.equal(app.sqlite.prepare('SELECT count(*) FROM knowledge_document_grams WHERE document_id = ?').pluck()
    .get(spanish.id), 0)
})

t.test('documents left without a filter (an upgrade, a stop before the worker was idle) get one after a restart',
  async (t) => {
    const dataDir = tempDir(t)
    let app = await build(t, { dataDir, config: { rateLimits: NO_LIMITS } })
    const u = await signup(app)
    await uploadDocument(app, u, { filename: 'a.txt', content: 'Plain text about budgets. '.repeat(8) })
    await uploadDocument(app, u, { filename: 'b.txt', content: 'Plain text about reports. '.repeat(8) })
    t.equal(await filtersMade(app.sqlite, 2), 2)
    await app.close()
    const raw = new Database(`${dataDir}/cairn.db`)
    raw.prepare('DELETE FROM knowledge_document_grams').run()
    raw.close()
    app = await build(t, { dataDir, config: { rateLimits: NO_LIMITS } })
    t.equal(await filtersMade(app.sqlite, 2), 2, 'the index worker is started for them and makes them')
    const search = createSearch(...searching(t, app))
    const reader = { customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId] }
    t.same((await search.search(reader, {}, 'qz', 10, 'substring')).length, 0)
    t.same((await search.search(reader, {}, 'pl', 10, 'substring')).length, 2)
  })

t.test('a back-fill write that fails (the lock busy past its timeout, a full disk) is tried again without waiting ' +
  'for another upload', async (t) => {
  const warnings: string[] = []
  const app = await build(t, { config: { rateLimits: NO_LIMITS },
    logger: { level: 'warn', stream: { write: (line: string) => { warnings.push(line) } } } })
  const u = await signup(app)
  // every write of a filter fails while the gate holds a row, as SQLITE_BUSY or SQLITE_FULL would
  app.sqlite.exec(`CREATE TABLE test_gate (x INTEGER); INSERT INTO test_gate VALUES (1);
    CREATE TRIGGER test_gate_grams BEFORE INSERT ON knowledge_document_grams WHEN EXISTS (SELECT 1 FROM test_gate)
    BEGIN SELECT RAISE(ABORT, 'database is locked'); END`)
  t.teardown(() => app.sqlite.exec('DROP TRIGGER IF EXISTS test_gate_grams; DROP TABLE IF EXISTS test_gate'))
  await uploadDocument(app, u, { filename: 'a.txt', content: 'Plain text about budgets. '.repeat(8) })
  const said = () => warnings.filter((line) => line.includes('character filters could not be made')).length
  for (let i = 0; i < 6000 && said() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(said(), 1, 'the failed write is said')
  t.equal(filterCount(app.sqlite), 0)
  app.sqlite.exec('DELETE FROM test_gate')
  t.equal(await filtersMade(app.sqlite, 1), 1, 'the filter is made once writes go through again, with no new task')
  t.equal(said(), 1, 'said once, not at every try')
})
