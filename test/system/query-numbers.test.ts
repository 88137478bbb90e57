import t from 'tap'
import { build, signup } from '../helper.js'

t.test('every numeric query parameter is a finite integer or 400', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const headers = { ...u.auth, 'x-workspace-id': u.workspaceId }
  const key = (await app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: u.auth,
    payload: { name: 'k', scopes: ['knowledge:read'] } })).json().data.id
  const wf = (await app.inject({ method: 'POST', url: '/api/v2/workflows', headers,
    payload: { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: 'x' }] } })).json().workflow.id
  const routes: Array<[string, string[]]> = [
    ['/api/v2/voice-notes', ['limit', 'offset']], ['/api/v2/artifacts', ['limit', 'offset']],
    ['/api/knowledge/documents', ['limit', 'offset']],
    [`/api/v2/developer/api-keys/${key}/usage`, ['days']], [`/api/v2/workflows/${wf}/runs`, ['limit']],
    ['/api/v2/developer/logs', ['limit']]
  ]
  for (const [url, params] of routes) {
    for (const p of params) {
      for (const v of ['Infinity', '1e400', '-Infinity', '+Infinity', 'NaN', '1.5', '']) {
        const res = await app.inject({ url: `${url}?${p}=${encodeURIComponent(v)}`, headers })
        t.equal(res.statusCode, 400, `${url} ${p}=${v}`)
        t.equal(res.json().code, 'VALIDATION_ERROR')
      }
      t.equal((await app.inject({ url: `${url}?${p}=2`, headers })).statusCode, 200, `${url} ${p}=2`)
    }
  }
  // every GET route without path parameters: no number spelling is a 500
  for (const r of app.routeTable) {
    if (r.method !== 'GET' || r.url.includes(':') || r.url.includes('*')) continue
    for (const p of ['limit', 'offset', 'days', 'chunkOffset', 'chunkLimit', 'timeoutSeconds']) {
      // as a stream: the answer's status is what counts, and an event stream never ends by itself
      const res = await app.inject({ url: `${r.url}?${p}=1e400`, headers, payloadAsStream: true })
      res.stream().destroy()
      t.ok(res.statusCode < 500, `${r.url} ${p}=1e400: ${res.statusCode}`)
    }
  }
  // in a JSON body, 1e400 parses as Infinity: refused as well
  const body = await app.inject({ method: 'POST', url: '/api/knowledge/search',
    headers: { ...headers, 'content-type': 'application/json' }, payload: '{"query":"x","limit":1e400}' })
  t.equal(body.statusCode, 400)
})
