import t from 'tap'
import { build, signup } from '../helper.js'

t.test('naming a foreign workspace anywhere is a 403, even beside the caller\'s own x-workspace-id', async (t) => {
  const app = await build(t)
  const me = await signup(app)
  const stranger = await signup(app)
  const foreign = stranger.workspaceId
  const own = { ...me.auth, 'x-workspace-id': me.workspaceId }
  const cases: Array<[string, string, object | undefined]> = [
    ['GET', `/api/v2/workflows?workspaceId=${foreign}`, undefined],
    ['GET', `/api/v2/channels?workspaceId=${foreign}`, undefined],
    ['GET', `/api/v2/developer/webhooks?workspaceId=${foreign}`, undefined],
    ['GET', `/api/v2/artifacts?workspace_id=${foreign}`, undefined],
    ['GET', `/api/knowledge/documents?workspaceId=${foreign}`, undefined],
    ['GET', `/api/knowledge/stats?workspaceId=${foreign}`, undefined],
    ['POST', '/api/knowledge/search', { query: 'anything', workspaceId: foreign }],
    ['POST', `/api/v2/workflows?workspaceId=${foreign}`, { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: 'x' }] }]
  ]
  for (const [method, url, payload] of cases) {
    const res = await app.inject({ method: method as 'GET' | 'POST', url, headers: own, payload })
    t.equal(res.statusCode, 403, `${method} ${url} ${payload ? JSON.stringify(payload) : ''}`)
    t.equal(res.json().code, 'WORKSPACE_FORBIDDEN')
  }
  // naming one's own workspace both ways is fine
  t.equal((await app.inject({ url: `/api/v2/workflows?workspaceId=${me.workspaceId}`, headers: own })).statusCode, 200)
  // voice notes are the caller's own, but a workspace filter the caller is not in is still a 403
  const vn = await app.inject({ url: `/api/v2/voice-notes?workspaceId=${foreign}`, headers: me.auth })
  t.equal(vn.statusCode, 403)
  t.equal((await app.inject({ url: `/api/v2/voice-notes?workspaceId=${me.workspaceId}`, headers: me.auth })).statusCode,
    200)
})

t.test('WORKSPACE_REQUIRED names the query parameter each route accepts', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  for (const [url, name] of [['/api/v2/workflows', 'workspaceId'], ['/api/v2/channels', 'workspaceId'],
    ['/api/v2/developer/webhooks', 'workspaceId'], ['/api/v2/artifacts', 'workspace_id']]) {
    const res = await app.inject({ url, headers: u.auth })
    t.equal(res.statusCode, 400, url)
    t.equal(res.json().code, 'WORKSPACE_REQUIRED')
    t.match(res.json().message, new RegExp(`x-workspace-id header or the ${name} query parameter`), url)
    const accepted = await app.inject({ url: `${url}?${name}=${u.workspaceId}`, headers: u.auth })
    t.equal(accepted.statusCode, 200, `${url} accepts ${name}`)
  }
})
