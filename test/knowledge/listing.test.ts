import t from 'tap'
import { build, signup, uploadDocument } from '../helper.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

// the listing's documents are rendered to JSON by SQLite (src/knowledge/store.ts DOCUMENT_JSON); a single
// document by toDocument in JavaScript: both must answer the same fields, values and order
t.test('a listing page answers each document as GET /document/:id does, newest first', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const made: string[] = []
  made.push((await uploadDocument(app, u, { filename: 'plain.txt', content: 'first "quoted" text\u0001 é' })).id)
  made.push((await uploadDocument(app, u, { filename: 'tagged.md', content: '# Two\n\nsecond' },
    { category: 'policy', tags: '["hr","2024","quote\\"d"]' })).id)
  made.push((await uploadDocument(app, u, { filename: 'mine.txt', content: 'third, personal' },
    { scope: 'personal' })).id)
  made.push((await uploadDocument(app, u, { filename: 'team.txt', content: 'fourth, workspace' },
    { scope: 'workspace', workspaceId: u.workspaceId })).id)

  const res = await app.inject({ url: '/api/knowledge/documents?limit=10', headers: u.auth })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  t.equal(body.success, true)
  t.equal(body.count, 4)
  t.equal(body.limit, 10)
  t.equal(body.offset, 0)
  t.same(body.tenantContext, { customerId: u.customerId, scope: 'all' })
  t.same(body.documents.map((d: { id: string }) => d.id), [...made].reverse(), 'newest first')
  for (const listed of body.documents) {
    const single = (await app.inject({ url: `/api/knowledge/document/${listed.id}`, headers: u.auth })).json()
    t.strictSame(listed, single.document, `${listed.fileName}: same document`)
    t.same(Object.keys(listed), Object.keys(single.document), `${listed.fileName}: same field order`)
  }
  const tagged = body.documents.find((d: { fileName: string }) => d.fileName === 'tagged.md')
  t.same(tagged.tags, ['hr', '2024', 'quote"d'])
  t.equal(tagged.category, 'policy')
  t.equal(typeof tagged.metadata, 'object')
  t.equal(tagged.originalStorage, 'local')
  t.equal(typeof tagged.size, 'number')
})

t.test('pages, filters and the count', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const other = await signup(app)
  const ids: string[] = []
  for (let i = 0; i < 5; i++) {
    ids.push((await uploadDocument(app, u, { filename: `n${i}.txt`, content: `note ${i}` },
      i % 2 === 0 ? { category: 'even', tags: '["even"]' } : {})).id)
  }
  await uploadDocument(app, other, { filename: 'foreign.txt', content: 'not yours' })
  const list = async (query: string) =>
    (await app.inject({ url: `/api/knowledge/documents?${query}`, headers: u.auth })).json()
  const newest = [...ids].reverse()

  const first = await list('limit=2')
  t.same(first.documents.map((d: { id: string }) => d.id), newest.slice(0, 2))
  t.equal(first.count, 5)
  const second = await list('limit=2&offset=2')
  t.same(second.documents.map((d: { id: string }) => d.id), newest.slice(2, 4))
  t.equal(second.count, 5)
  const past = await list('limit=2&offset=10')
  t.same(past.documents, [], 'past the last page: no documents')
  t.equal(past.count, 5, 'past the last page: still the count')
  t.equal(past.offset, 10)

  const even = await list('category=even')
  t.equal(even.count, 3)
  t.same(even.documents.map((d: { id: string }) => d.id), [ids[4], ids[2], ids[0]])
  const tagged = await list('tag=even&limit=1')
  t.equal(tagged.count, 3)
  t.same(tagged.documents.map((d: { id: string }) => d.id), [ids[4]])
  const personal = await list('scope=personal')
  t.equal(personal.count, 0)
  t.same(personal.tenantContext, { customerId: u.customerId, scope: 'personal' })

  // the same statement with other values: nothing of a previous call's page is kept
  const again = await list('limit=2')
  t.same(again.documents.map((d: { id: string }) => d.id), newest.slice(0, 2))
  const foreign = (await app.inject({ url: '/api/knowledge/documents', headers: other.auth })).json()
  t.equal(foreign.count, 1)
  t.equal(foreign.documents[0].fileName, 'foreign.txt')
})

t.test('a membership change is seen by the next listing (workspaces of a reader come from the auth cache)',
  async (t) => {
    const app = await build(t, { config: { rateLimits: NO_LIMITS } })
    const u = await signup(app)
    await uploadDocument(app, u, { filename: 'team.txt', content: 'workspace words' },
      { scope: 'workspace', workspaceId: u.workspaceId })
    const count = async () =>
      (await app.inject({ url: '/api/knowledge/documents', headers: u.auth })).json().count as number
    t.equal(await count(), 1)
    app.sqlite.prepare('DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?')
      .run(u.workspaceId, u.userId)
    t.equal(await count(), 0, 'no longer a member: the workspace document is not listed')
  })
