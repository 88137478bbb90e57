import t from 'tap'
import { build, signup, addUser, createKey, multipart } from '../helper.js'

const HOOKS = '/api/v2/developer/webhooks'

// a workspace member, refused webhook management with a session, gets no further with a key of their own
t.test('a member\'s own API key cannot manage the workspace\'s webhooks', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const owner = await signup(app)
  const member = await addUser(app, owner)
  const ws = { 'x-workspace-id': owner.workspaceId }
  t.equal((await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`,
    headers: owner.auth, payload: { userId: member.userId, role: 'member' } })).statusCode, 201)
  const created = await app.inject({ method: 'POST', url: HOOKS, headers: { ...owner.auth, ...ws },
    payload: { url: 'http://127.0.0.1:9/hook', events: ['message.created'] } })
  t.equal(created.statusCode, 201)
  const hookId = created.json().data.id as string
  const secret = created.json().data.signing_secret as string

  t.equal((await app.inject({ method: 'POST', url: HOOKS, headers: { ...member.auth, ...ws },
    payload: { url: 'http://127.0.0.1:9/evil', events: ['message.created'] } })).statusCode, 403,
  'with a session: 403')

  const memberKey = await createKey(app, member, ['read', 'write', 'execute'])
  const bound = await createKey(app, member, ['read', 'write', 'execute'], { workspaceId: owner.workspaceId })
  for (const headers of [{ 'x-api-key': memberKey.key, ...ws }, { 'x-api-key': bound.key }]) {
    const attempts: Array<[string, string, object | undefined]> = [
      ['POST', HOOKS, { url: 'http://127.0.0.1:9/evil', events: ['message.created'] }],
      ['PUT', `${HOOKS}/${hookId}`, { url: 'http://127.0.0.1:9/evil' }],
      ['POST', `${HOOKS}/${hookId}/rotate-secret`, undefined],
      ['POST', `${HOOKS}/${hookId}/test`, undefined],
      ['POST', `${HOOKS}/${hookId}/deliveries/${hookId}/redeliver`, undefined],
      ['DELETE', `${HOOKS}/${hookId}`, undefined]
    ]
    for (const [method, url, payload] of attempts) {
      const res = await app.inject({ method: method as 'POST', url, headers, ...(payload ? { payload } : {}) })
      t.equal(res.statusCode, 403, `member's key: ${method} ${url.slice(HOOKS.length) || '/'}`)
    }
    // the query form of the workspace context is checked the same way
    const viaQuery = await app.inject({ method: 'POST', url: `${HOOKS}?workspaceId=${owner.workspaceId}`,
      headers: { 'x-api-key': memberKey.key }, payload: { url: 'http://127.0.0.1:9/evil', events: ['message.created'] } })
    t.equal(viaQuery.statusCode, 403, 'workspace named in the query')
    t.equal((await app.inject({ url: HOOKS, headers })).statusCode, 200, 'reading stays open to members')
  }
  const list = (await app.inject({ url: HOOKS, headers: { ...owner.auth, ...ws } })).json().data
  t.same(list.map((h: { id: string; url: string }) => [h.id, h.url]), [[hookId, 'http://127.0.0.1:9/hook']],
    'nothing changed')
  const row = app.sqlite.prepare('SELECT signing_secret FROM webhooks WHERE id = ?').get(hookId) as
    { signing_secret: string }
  t.equal(app.webhookSecrets.open(row.signing_secret, hookId), secret, 'the secret was not rotated')
})

t.test('a key follows its person\'s current role: promoted, it may; demoted, it may not at once', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const owner = await signup(app)
  const person = await addUser(app, owner)
  const setRole = async (role: 'admin' | 'member') => t.equal((await app.inject({ method: 'POST',
    url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
    payload: { userId: person.userId, role } })).statusCode, 201)
  await setRole('admin')
  const k = await createKey(app, person, ['write'], { workspaceId: owner.workspaceId })
  const create = () => app.inject({ method: 'POST', url: HOOKS, headers: { 'x-api-key': k.key },
    payload: { url: 'http://127.0.0.1:9/hook', events: ['message.created'] } })

  t.equal((await create()).statusCode, 201, 'a workspace admin\'s key manages webhooks')
  await setRole('member')
  t.equal((await create()).statusCode, 403, 'demoted: the same key is refused on the next request')
  // scopes still count for admins: a read key does not write
  await setRole('admin')
  const reader = await createKey(app, person, ['read'], { workspaceId: owner.workspaceId })
  const res = await app.inject({ method: 'POST', url: HOOKS, headers: { 'x-api-key': reader.key },
    payload: { url: 'http://127.0.0.1:9/hook', events: ['message.created'] } })
  t.equal(res.json().code, 'INSUFFICIENT_SCOPE')
})

// the unified search gathers several kinds of rows: a key sees only the kinds its scopes let it read elsewhere
t.test('unified search shows a key only the kinds its scopes open', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const ws = { ...u.auth, 'x-workspace-id': u.workspaceId }
  const body = multipart([{ filename: 'kiln.txt', content: 'The kiln cools overnight.' }])
  await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...body.headers },
    payload: body.payload })
  await app.inject({ method: 'POST', url: '/api/v2/artifacts', headers: ws,
    payload: { type: 'task_plan', title: 'Fire the kiln' } })
  const note = (await app.inject({ method: 'POST', url: '/api/v2/voice-notes', headers: u.auth,
    payload: { audioUrl: 'http://8.8.8.8/memo.mp3', title: 'Memo' } })).json().voiceNote
  app.sqlite.prepare(`UPDATE voice_notes SET status = 'completed', transcript = 'the kiln code is 4711'
    WHERE id = ?`).run(note.id)
  const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: ws,
    payload: { name: 'studio', type: 'private' } })).json().data
  await app.inject({ method: 'POST', url: '/api/v2/messages', headers: u.auth,
    payload: { channel_id: channel.id, content: 'kiln alarm code changed' } })
  await app.jobs.idle()

  const kinds = async (headers: Record<string, string>) => {
    const res = await app.inject({ method: 'POST', url: '/api/v2/search', headers, payload: { query: 'kiln' } })
    t.equal(res.statusCode, 200)
    return [...new Set(res.json().results.map((r: { kind: string }) => r.kind))].sort()
  }
  t.same(await kinds(u.auth), ['artifact', 'knowledge', 'message', 'voice_note'], 'the person reads every kind')
  const reader = await createKey(app, u, ['read'], { workspaceId: u.workspaceId })
  t.same(await kinds({ 'x-api-key': reader.key }), ['knowledge'],
    'a read key: no artifacts (artifacts:read), no transcripts or messages (no key reads those)')
  const both = await createKey(app, u, ['knowledge:read', 'artifacts:read'], { workspaceId: u.workspaceId })
  t.same(await kinds({ 'x-api-key': both.key }), ['artifact', 'knowledge'])
})

t.test('a removed person\'s key stops at once, even with its revocation undone', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const person = await addUser(app, owner)
  const k = await createKey(app, person, ['read'])
  const logs = () => app.inject({ url: '/api/v2/developer/logs', headers: { 'x-api-key': k.key } })
  t.equal((await logs()).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/users/${person.userId}`, headers: owner.auth }))
    .statusCode, 200)
  t.equal((await logs()).statusCode, 401)
  app.sqlite.prepare('UPDATE api_keys SET revoked_at = NULL WHERE id = ?').run(k.id)
  t.equal((await logs()).statusCode, 401, 'the person is gone: so is the key')
})
