import t from 'tap'
import { build, signup, addUser, createKey, uploadDocument } from '../helper.js'

/**
 * What a workspace-bound key reads (docs/api/auth.md#workspace-context): its workspace is the request's
 * workspace context, so it reads what its owner reads there — that workspace's documents, the organization's
 * documents and the owner's personal documents — and never another workspace's, however it is named.
 */
t.test('a workspace-bound key reads its workspace, the organization and its owner\'s own documents only',
  async (t) => {
    const app = await build(t, { config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
    const u = await signup(app)
    const colleague = await addUser(app, u)
    const other = (await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: u.auth,
      payload: { name: 'Other' } })).json().data as { id: string }
    const doc = (name: string, fields: Record<string, string>, who = u) =>
      uploadDocument(app, who, { filename: `${name}.txt`, content: `${name} marmalade passage` }, fields)
    const org = await doc('org', { scope: 'organization' })
    const personal = await doc('personal', { scope: 'personal' })
    const bound = await doc('bound', { scope: 'workspace', workspaceId: u.workspaceId })
    const elsewhere = await doc('elsewhere', { scope: 'workspace', workspaceId: other.id })
    const theirs = await doc('theirs', { scope: 'personal' }, colleague)

    const key = await createKey(app, u, ['knowledge:read'], { workspaceId: u.workspaceId })
    const h = { 'x-api-key': key.key }
    const ids = (body: { documents: Array<{ id: string }> }) => body.documents.map((d) => d.id).sort()
    const listed = await app.inject({ url: '/api/knowledge/documents?limit=100', headers: h })
    t.equal(listed.statusCode, 200)
    t.same(ids(listed.json()), [org.id, personal.id, bound.id].sort(), 'its workspace, the organization, its owner')

    const found = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: h,
      payload: { query: 'marmalade', limit: 100 } })
    t.same([...new Set(found.json().results.map((r: { document: { id: string } }) => r.document.id))].sort(),
      [org.id, personal.id, bound.id].sort(), 'search reads the same documents')

    for (const id of [elsewhere.id, theirs.id]) {
      t.equal((await app.inject({ url: `/api/knowledge/document/${id}`, headers: h })).statusCode, 404,
        'another workspace\'s or person\'s document is not found')
      t.equal((await app.inject({ url: `/api/knowledge-graph/documents/${id}`, headers: h })).statusCode, 404)
    }
    t.equal((await app.inject({ url: `/api/knowledge/documents?workspaceId=${other.id}`, headers: h })).statusCode,
      403, 'naming another workspace in the query: 403')
    t.equal((await app.inject({ url: '/api/knowledge/documents',
      headers: { ...h, 'x-workspace-id': other.id } })).statusCode, 403, 'or in the header')

    // the same person's unbound key reads every workspace of theirs, as their session does
    const unbound = await createKey(app, u, ['knowledge:read'])
    t.same(ids((await app.inject({ url: '/api/knowledge/documents?limit=100',
      headers: { 'x-api-key': unbound.key } })).json()), [org.id, personal.id, bound.id, elsewhere.id].sort())
  })
