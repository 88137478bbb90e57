import t from 'tap'
import Database from 'better-sqlite3'
import { build, signup, uploadDocument, type TestUser, searching } from '../helper.js'
import { gramFilter, gramSweep, mayHold, needleGrams } from '../../src/knowledge/grams.js'
import { createSearch } from '../../src/knowledge/search.js'
import { rng } from '../../bench/seed.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

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
  const sweep = gramSweep(app.sqlite)
  t.equal(sweep.batch(), 3, 'each indexed document of each tenant gets a filter')
  t.equal(sweep.batch(), 0, 'and only once')
  const count = () => (app.sqlite.prepare('SELECT count(*) AS n FROM knowledge_document_grams').get() as
    { n: number }).n
  t.equal(count(), 3)

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
  t.equal(count(), 2)
})

t.test('the back-fill goes on after SQLITE_BUSY: it waits and tries again instead of stopping for good', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  await uploadDocument(app, u, { filename: 'a.txt', content: 'Plain text about budgets. '.repeat(8) })
  const file = app.sqlite.name
  // its own connection, as on a search worker; it does not wait for the lock, so the first write fails at once
  const writer = new Database(file, { fileMustExist: true, timeout: 0 })
  const holder = new Database(file, { fileMustExist: true })
  t.teardown(() => { writer.close(); holder.close() })
  holder.prepare('BEGIN IMMEDIATE').run()
  const sweep = gramSweep(writer, { idleMs: 10, retryMs: 10 })
  let stopped: unknown
  const running = sweep.run().catch((err: unknown) => { stopped = err })
  t.teardown(async () => { sweep.stop(); await running })
  const filters = () => app.sqlite.prepare('SELECT count(*) FROM knowledge_document_grams').pluck().get() as number
  // several tries meet the lock (each one SQLITE_BUSY)
  for (let i = 0; i < 30; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(filters(), 0, 'nothing written while another connection holds the lock')
  t.equal(stopped, undefined, 'before: the back-fill stopped for good at the first SQLITE_BUSY')
  holder.prepare('ROLLBACK').run()
  for (let i = 0; i < 500 && filters() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(filters(), 1, 'once the lock is free, the filter is made')
})
