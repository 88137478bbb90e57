import t from 'tap'
import { build, signup, createKey, multipart } from '../helper.js'
import type { App } from '../../src/app.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

async function upload(app: App, headers: Record<string, string>, fields: Record<string, string> = {}) {
  const body = multipart([{ filename: 'note.md', content: '# Note\n\nwhere does this go' }], fields)
  return app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...headers, ...body.headers },
    payload: body.payload })
}

async function placed(app: App, headers: Record<string, string>, id: string) {
  const res = await app.inject({ url: `/api/knowledge/document/${id}`, headers })
  return res.json().document as { scope: string; workspaceId: string | null }
}

t.test('an upload that names no scope goes to the workspace it is given, else to the organization', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const other = await signup(app)
  const second = (await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: u.auth,
    payload: { name: 'Second' } })).json().data.id as string

  const bound = await createKey(app, u, ['knowledge:write', 'knowledge:read'], { workspaceId: u.workspaceId })
  const byKey = await upload(app, { authorization: `Bearer ${bound.key}` })
  t.equal(byKey.statusCode, 201, byKey.body)
  t.match(await placed(app, u.auth, byKey.json().document.id), { scope: 'workspace', workspaceId: u.workspaceId },
    'a workspace-bound key: its workspace')
  t.equal((await upload(app, { authorization: `Bearer ${bound.key}` }, { scope: 'organization' })).json().code,
    'WORKSPACE_FORBIDDEN', 'a bound key naming the organization is still refused')
  t.equal((await upload(app, { authorization: `Bearer ${bound.key}` }, { workspaceId: second })).statusCode, 403,
    'nor another workspace')
  t.equal((await upload(app, { authorization: `Bearer ${bound.key}` }, { workspaceId: other.workspaceId }))
    .statusCode, 403, 'nor another tenant\'s')

  const withContext = await upload(app, { ...u.auth, 'x-workspace-id': second })
  t.equal(withContext.statusCode, 201)
  t.match(await placed(app, u.auth, withContext.json().document.id), { scope: 'workspace', workspaceId: second },
    'a person with a workspace context: that workspace')
  const withField = await upload(app, u.auth, { workspaceId: second })
  t.match(await placed(app, u.auth, withField.json().document.id), { scope: 'workspace', workspaceId: second },
    'the form\'s workspaceId alone: that workspace')

  const plain = await upload(app, u.auth)
  t.match(await placed(app, u.auth, plain.json().document.id), { scope: 'organization', workspaceId: null },
    'no workspace given: the organization')
  const unbound = await createKey(app, u, ['knowledge:write', 'knowledge:read'])
  const byUnbound = await upload(app, { authorization: `Bearer ${unbound.key}` })
  t.match(await placed(app, u.auth, byUnbound.json().document.id), { scope: 'organization' })

  const foreign = await upload(app, { ...u.auth, 'x-workspace-id': other.workspaceId })
  t.equal(foreign.statusCode, 403, 'a foreign workspace context: 403')
  const foreignField = await upload(app, u.auth, { workspaceId: other.workspaceId })
  t.equal(foreignField.statusCode, 403, 'a foreign workspaceId field: 403')
  const theirs = (await app.inject({ url: '/api/knowledge/documents?limit=100', headers: other.auth })).json()
  t.equal(theirs.count, 0, 'nothing reached the other tenant')
})
