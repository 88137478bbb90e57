import t, { type Test } from 'tap'
import path from 'node:path'
import Database from 'better-sqlite3'
import { build, signup, addUser, multipart, uploadDocument, type TestUser } from '../helper.js'
import type { App } from '../../src/app.js'
import { createListingCache } from '../../src/knowledge/listing-cache.js'

// the listing's rendered pages are kept (src/knowledge/listing-cache.ts) while the organization's listing version,
// raised by migration 0017's triggers, is unchanged: every change below must show in the very next listing

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

interface Listed { id: string; fileName: string; status: string; category: string; tags: string[] }
const list = async (app: App, u: TestUser, query = '') => {
  const res = await app.inject({ url: `/api/knowledge/documents?${query}`, headers: u.auth })
  if (res.statusCode !== 200) throw new Error(`listing: ${res.statusCode} ${res.body}`)
  return res.json() as { count: number; documents: Listed[]; tenantContext: { customerId: string } }
}
const names = (page: { documents: Listed[] }) => page.documents.map((d) => d.fileName)

/** A second connection to the app's database, as another process or a worker thread would open it. */
function otherConnection(t: Test, app: App) {
  const db = new Database(path.join(app.config.dataDir, 'cairn.db'))
  db.pragma('busy_timeout = 5000')
  t.teardown(() => db.close())
  return db
}

t.test('upload, then delete: the next listing shows each', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  await uploadDocument(app, u, { filename: 'first.txt', content: 'one' })
  t.same(names(await list(app, u)), ['first.txt'])
  t.same(names(await list(app, u)), ['first.txt'], 'served again (kept)')
  const second = await uploadDocument(app, u, { filename: 'second.txt', content: 'two' })
  const after = await list(app, u)
  t.same(names(after), ['second.txt', 'first.txt'], 'the upload is listed at once')
  t.equal(after.count, 2)
  const del = await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${second.id}`, headers: u.auth })
  t.equal(del.statusCode, 200)
  const gone = await list(app, u)
  t.same(names(gone), ['first.txt'], 'the deleted document is gone at once')
  t.equal(gone.count, 1)
})

t.test('the indexer\'s status and progress writes show in the next listing', async (t) => {
  // the index worker writes on its own connection: its task's end, not the interval, renews the pages
  const app = await build(t, { config: { rateLimits: NO_LIMITS },
    knowledge: { listingCache: { externalCheckMs: 1e9 } } })
  const u = await signup(app)
  // past 1 MB of text: indexed in the background, by the index worker
  const body = multipart([{ filename: 'long.txt', content: 'words and more words. '.repeat(50_000) }])
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...body.headers },
    payload: body.payload })
  t.equal(res.statusCode, 201)
  const id = res.json().document.id as string
  const statusNow = () => (app.sqlite.prepare('SELECT status FROM knowledge_documents WHERE id = ?').pluck()
    .get(id) as string)
  const before = await list(app, u)
  t.equal(before.documents[0].status, statusNow(), 'the listing shows the status of the moment')
  t.not(before.documents[0].status, 'indexed')
  await app.jobs.idle()
  t.equal(statusNow(), 'indexed')
  t.equal((await list(app, u)).documents[0].status, 'indexed', 'indexed: the listing says so at once')

  // a write by this connection that no route makes (a job, a repair by hand)
  app.sqlite.prepare(`UPDATE knowledge_documents SET status = 'processing' WHERE id = ?`).run(id)
  t.equal((await list(app, u)).documents[0].status, 'processing')
})

t.test('writes by another connection (another process, a worker thread) show in the listing', async (t) => {
  // read back at every request here; by default at most 50 ms later (the last test)
  const app = await build(t, { config: { rateLimits: NO_LIMITS }, knowledge: { listingCache: { externalCheckMs: 0 } } })
  const u = await signup(app)
  const doc = await uploadDocument(app, u, { filename: 'a.txt', content: 'alpha' }, { category: 'one' })
  const other = otherConnection(t, app)
  t.equal((await list(app, u)).documents[0].status, 'indexed')
  other.prepare(`UPDATE knowledge_documents SET status = 'pending' WHERE id = ?`).run(doc.id)
  t.equal((await list(app, u)).documents[0].status, 'pending', 'a status written elsewhere')
  other.prepare(`UPDATE knowledge_documents SET category = 'two' WHERE id = ?`).run(doc.id)
  t.equal((await list(app, u, 'category=one')).count, 0)
  t.equal((await list(app, u, 'category=two')).count, 1)

  t.equal((await list(app, u, 'tag=late')).count, 0)
  other.prepare(`INSERT INTO knowledge_document_tags (document_id, tag) VALUES (?, 'late')`).run(doc.id)
  t.equal((await list(app, u, 'tag=late')).count, 1, 'a tag added elsewhere')
  other.prepare(`DELETE FROM knowledge_document_tags WHERE document_id = ?`).run(doc.id)
  t.equal((await list(app, u, 'tag=late')).count, 0, 'a tag removed elsewhere')

  other.prepare('DELETE FROM knowledge_documents WHERE id = ?').run(doc.id)
  t.equal((await list(app, u)).count, 0, 'a document deleted elsewhere')
})

t.test('two organizations, and two users of one, never share a page', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  const b = await signup(app)
  const member = await addUser(app, a)
  await uploadDocument(app, a, { filename: 'a-org.txt', content: 'org of a' })
  await uploadDocument(app, a, { filename: 'a-mine.txt', content: 'personal of a' }, { scope: 'personal' })
  await uploadDocument(app, b, { filename: 'b-org.txt', content: 'org of b' })
  for (let round = 0; round < 2; round++) {
    const pa = await list(app, a, 'limit=10')
    const pb = await list(app, b, 'limit=10')
    const pm = await list(app, member, 'limit=10')
    t.same(names(pa), ['a-mine.txt', 'a-org.txt'], `round ${round}: a`)
    t.equal(pa.tenantContext.customerId, a.customerId)
    t.same(names(pb), ['b-org.txt'], `round ${round}: b`)
    t.equal(pb.tenantContext.customerId, b.customerId)
    t.same(names(pm), ['a-org.txt'], `round ${round}: a's member sees no personal document of a`)
  }
  // a change in one organization does not change what the other reads
  await uploadDocument(app, b, { filename: 'b-new.txt', content: 'new in b' })
  t.same(names(await list(app, a, 'limit=10')), ['a-mine.txt', 'a-org.txt'])
  t.same(names(await list(app, b, 'limit=10')), ['b-new.txt', 'b-org.txt'])
})

t.test('a foreign workspace is refused as before, with a page kept for its owner', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  const b = await signup(app)
  await uploadDocument(app, b, { filename: 'b-team.txt', content: 'workspace of b' },
    { scope: 'workspace', workspaceId: b.workspaceId })
  t.same(names(await list(app, b, `workspaceId=${b.workspaceId}`)), ['b-team.txt'])
  const res = await app.inject({ url: `/api/knowledge/documents?workspaceId=${b.workspaceId}`, headers: a.auth })
  t.equal(res.statusCode, 403)
  t.equal(res.json().code, 'WORKSPACE_FORBIDDEN')
  t.notMatch(res.body, /b-team/)
  const header = await app.inject({ url: '/api/knowledge/documents',
    headers: { ...a.auth, 'x-workspace-id': b.workspaceId } })
  t.equal(header.statusCode, 403)
})

t.test('the cache: renewed by this connection\'s writes at once, by other connections\' within its interval',
  async (t) => {
    const app = await build(t)
    let clock = 1_000_000
    const cache = createListingCache(app.sqlite, { externalCheckMs: 50, now: () => clock })
    const org = (await signup(app)).customerId
    const bump = app.sqlite.prepare(`INSERT INTO knowledge_listing_versions (customer_id, version) VALUES (?, 1)
      ON CONFLICT (customer_id) DO UPDATE SET version = version + 1`)
    let renders = 0
    const page = (customerId: string, key: string, render: () => string = () => `page ${++renders}`) =>
      cache.page(customerId, key, render).toString()
    t.equal(page(org, 'k'), 'page 1')
    t.equal(page(org, 'k'), 'page 1', 'kept')
    t.equal(page(org, 'other'), 'page 2', 'another key, another page')
    bump.run(org)
    t.equal(page(org, 'k'), 'page 3', 'a write through this connection: rendered again at once')
    t.equal(page(org, 'k'), 'page 3')
    // a write committed while a page is rendered: the page is kept under the generation taken before it
    t.equal(page(org, 'w', () => { bump.run(org); return 'w1' }), 'w1')
    t.equal(page(org, 'w', () => 'w2'), 'w2', 'the write during the render is seen')
    t.equal(page(org, 'w', () => 'w3'), 'w2', 'then kept')
    t.equal(page(org, 'k'), 'page 4', 'every page of the organization was renewed')

    const other = (await signup(app)).customerId
    t.equal(page(other, 'k', () => 'theirs'), 'theirs', 'same key, other organization: its own page')
    bump.run(other)
    t.equal(page(org, 'k'), 'page 4', 'another organization\'s write: still kept')

    // a write rolled back renews the pages (a render too many), and never brings an old page back
    t.throws(() => app.sqlite.transaction(() => { bump.run(org); throw new Error('rolled back') })())
    t.equal(page(org, 'k'), 'page 5')
    bump.run(org)
    t.equal(page(org, 'k'), 'page 6')

    app.sqlite.transaction(() => {
      t.equal(page(org, 'k', () => 'uncommitted'), 'uncommitted', 'inside a transaction: rendered afresh')
    })()
    t.equal(page(org, 'k'), 'page 6', 'and not kept')

    // another connection's write: seen once the interval has passed since the organization's version was read
    const db = otherConnection(t, app)
    db.prepare(`UPDATE knowledge_listing_versions SET version = version + 1 WHERE customer_id = ?`).run(org)
    clock += 49
    t.equal(page(org, 'k'), 'page 6', 'within the interval: the kept page')
    clock += 1
    t.equal(page(org, 'k'), 'page 7', 'past it: rendered again')
    clock += 100
    t.equal(page(org, 'k'), 'page 7', 'no further write: kept')

    const small = createListingCache(app.sqlite, { maxBytes: 10 })
    small.page(org, 'a', () => '123456')
    t.equal(small.size, 1)
    small.page(org, 'b', () => '123456')
    t.equal(small.size, 1, 'past its size the cache starts over')
  })
