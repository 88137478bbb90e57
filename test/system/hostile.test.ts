import t from 'tap'
import { build, signup, createKey, multipart } from '../helper.js'
import type { App } from '../../src/app.js'
import type { InjectOptions } from 'fastify'

/** Row counts of every table: a hostile request must leave them all unchanged. */
function snapshot(app: App) {
  const tables = (app.sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
    AND name NOT LIKE '%_fts%'
    AND name NOT IN ('developer_log_chunks', 'key_usage_daily', 'idempotency_keys',
      '__drizzle_migrations')`).all() as Array<{ name: string }>).map((r) => r.name)
  return Object.fromEntries(tables.map((name) => [name,
    (app.sqlite.prepare(`SELECT COUNT(*) AS n FROM "${name}"`).get() as { n: number }).n]))
}

t.test('hostile input answers a clear 4xx and changes nothing', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
  const u = await signup(app)
  const ws = { ...u.auth, 'x-workspace-id': u.workspaceId }
  const key = await createKey(app, u, ['knowledge:write', 'knowledge:read'])
  const before = snapshot(app)
  const rtl = multipart([{ filename: 'invoice\u202Efdp.exe', content: 'MZ' }])
  const noFile = multipart([], { scope: 'organization' })
  const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)
  const cases: Array<[string, InjectOptions, number]> = [
    ['oversized JSON',
      { method: 'POST', url: '/api/v2/artifacts', headers: { ...ws, 'content-type': 'application/json' },
        payload: JSON.stringify({ type: 'task_plan', title: 'x', content: { blob: 'x'.repeat(1_100_000) } }) }, 413],
    ['malformed JSON',
      { method: 'POST', url: '/api/v2/artifacts', headers: { ...ws, 'content-type': 'application/json' },
        payload: '{"type": "task_plan", "title": ' }, 400],
    ['truncated JSON',
      { method: 'POST', url: '/api/v2/workspaces', headers: { ...u.auth, 'content-type': 'application/json' },
        payload: '{"name"' }, 400],
    ['text body for a JSON route',
      { method: 'POST', url: '/api/v2/artifacts', headers: { ...ws, 'content-type': 'text/plain' },
        payload: 'type=task_plan' }, 400],
    ['unknown content type',
      { method: 'POST', url: '/api/v2/artifacts', headers: { ...ws, 'content-type': 'application/x-evil' },
        payload: 'x' }, 415],
    ['form-encoded body',
      { method: 'POST', url: '/api/v2/workspaces',
        headers: { ...u.auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=x' }, 415],
    ['__proto__ pollution',
      { method: 'POST', url: '/api/v2/artifacts', headers: { ...ws, 'content-type': 'application/json' },
        payload: '{"type":"task_plan","title":"x","content":{"__proto__":{"admin":true}}}' }, 400],
    ['constructor.prototype',
      { method: 'POST', url: '/api/v2/workspaces', headers: { ...u.auth, 'content-type': 'application/json' },
        payload: '{"name":"x","constructor":{"prototype":{"admin":true}}}' }, 400],
    ['deeply nested metadata',
      { method: 'POST', url: '/api/v2/artifacts', headers: { ...ws, 'content-type': 'application/json' },
        payload: `{"type":"task_plan","title":"x","content":${deep(200)}}` }, 400],
    ['NUL in a title',
      { method: 'POST', url: '/api/v2/artifacts', headers: ws, payload: { type: 'task_plan', title: 'a\u0000b' } },
      400],
    ['lone surrogate',
      { method: 'POST', url: '/api/v2/artifacts', headers: { ...ws, 'content-type': 'application/json' },
        payload: '{"type":"task_plan","title":"bad \\ud800 half"}' }, 400],
    ['lone surrogate in a key',
      { method: 'POST', url: '/api/v2/workspaces', headers: { ...u.auth, 'content-type': 'application/json' },
        payload: '{"name":"x","\\udc00":1}' }, 400],
    ['invalid UUID in the path', { method: 'GET', url: '/api/v2/artifacts/../../etc/passwd', headers: ws }, 404],
    ['invalid UUID parameter', { method: 'GET', url: '/api/v2/artifacts/not-a-uuid', headers: ws }, 400],
    ['SQL in a UUID', { method: 'GET', url: `/api/v2/artifacts/${encodeURIComponent("1' OR '1'='1")}`, headers: ws },
      400],
    ['huge limit', { method: 'GET', url: '/api/v2/artifacts?limit=100000', headers: ws }, 400],
    ['huge offset', { method: 'GET', url: '/api/v2/artifacts?offset=99999999999999999999', headers: ws }, 400],
    ['negative offset', { method: 'GET', url: '/api/knowledge/documents?offset=-5', headers: u.auth }, 400],
    ['non-numeric limit', { method: 'GET', url: '/api/v2/voice-notes?limit=ten', headers: u.auth }, 400],
    ['header injection in workspace id',
      { method: 'GET', url: '/api/v2/artifacts', headers: { ...u.auth, 'x-workspace-id': "x' OR 1=1 --" } }, 403],
    ['RTL-disguised executable',
      { method: 'POST', url: '/api/knowledge/upload', headers: { 'x-api-key': key.key, ...rtl.headers },
        payload: rtl.payload }, 415],
    ['multipart without a file',
      { method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...noFile.headers },
        payload: noFile.payload }, 400],
    ['broken audio multipart',
      { method: 'POST', url: '/api/v2/voice-notes/audio',
        headers: { ...u.auth, 'content-type': 'multipart/form-data; boundary=nope' }, payload: 'garbage' }, 400],
    ['bogus multipart boundary',
      { method: 'POST', url: '/api/knowledge/upload',
        headers: { ...u.auth, 'content-type': 'multipart/form-data; boundary=nope' }, payload: 'garbage' }, 400],
    ['extra-long idempotency key',
      { method: 'POST', url: '/api/v2/workspaces', headers: { ...u.auth, 'idempotency-key': 'k'.repeat(300) },
        payload: { name: 'x' } }, 400],
    ['unknown artifact type',
      { method: 'POST', url: '/api/v2/artifacts', headers: ws, payload: { type: 'exploit', title: 'x' } }, 400],
    ['array instead of object', { method: 'POST', url: '/api/v2/artifacts', headers: ws, payload: [] }, 400],
    ['object instead of string',
      { method: 'POST', url: '/api/v2/channels', headers: ws, payload: { name: { $gt: '' }, type: 'public' } }, 400]
  ]
  for (const [name, request, status] of cases) {
    const res = await app.inject(request)
    t.equal(res.statusCode, status, name)
    const body = res.json()
    t.equal(body.success, false, `${name}: error shape`)
    t.type(body.message, 'string')
    t.notMatch(body.message, /at .*\.ts:\d+|SqliteError|TypeError/, `${name}: no internals`)
  }
  t.same(snapshot(app), before, 'nothing was written')
  t.equal(({} as Record<string, unknown>).admin, undefined, 'no prototype was polluted')

  // FTS5 syntax and path-like names are data, not commands
  const search = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: u.auth,
    payload: { query: '") OR 1=1; DROP TABLE knowledge_documents; --' } })
  t.equal(search.statusCode, 200)
  const traversal = multipart([{ filename: '../../../etc/passwd.txt', content: 'not the password file' }])
  const up = await app.inject({ method: 'POST', url: '/api/knowledge/upload',
    headers: { ...u.auth, ...traversal.headers }, payload: traversal.payload })
  t.equal(up.statusCode, 201)
  t.equal(up.json().document.fileName, 'passwd.txt', 'only the base name is kept')
})
