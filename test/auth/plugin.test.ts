import t, { type Test } from 'tap'
import { createHmac, randomBytes } from 'node:crypto'
import { build, signup, addUser, createKey, type TestUser } from '../helper.js'
import type { App } from '../../src/app.js'
import { workspaceContext, requireWorkspaceContext } from '../../src/auth/plugin.js'

const SECRET = 'test-secret-0123456789abcdef0123456789'

function hs256(payload: object, secret = SECRET, header: object = { alg: 'HS256', typ: 'JWT' }) {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
  const body = `${enc(header)}.${enc(payload)}`
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`
}

const usageUrl = (keyId: string) => `/api/v2/developer/api-keys/${keyId}/usage`

t.test('JWT: expiry, tampering, foreign secret, alg none, deleted user', async (t) => {
  const app = await build(t, { config: { jwtSecret: SECRET } })
  const u = await signup(app)
  const now = Math.floor(Date.now() / 1000)
  const me = (token: string) => app.inject({ url: '/api/v2/auth/me', headers: { authorization: `Bearer ${token}` } })

  t.equal((await me(hs256({ sub: u.userId, cid: u.customerId, iat: now, exp: now + 60 }))).statusCode, 200,
    'a well-signed token works')

  const expired = await me(hs256({ sub: u.userId, cid: u.customerId, iat: now - 120, exp: now - 60 }))
  t.equal(expired.statusCode, 401)
  t.equal(expired.json().message, 'Token has expired')

  const [h, , s] = u.token.split('.')
  const forged = Buffer.from(JSON.stringify({ sub: u.userId, cid: randomBytes(16).toString('hex'),
    iat: now })).toString('base64url')
  t.equal((await me(`${h}.${forged}.${s}`)).statusCode, 401, 'payload changed under the signature')
  t.equal((await me(u.token.slice(0, -2) + (u.token.endsWith('AA') ? 'BB' : 'AA'))).statusCode, 401,
    'signature changed')
  t.equal((await me(hs256({ sub: u.userId, cid: u.customerId, iat: now },
    'another-secret-entirely-000000'))).statusCode, 401, 'foreign secret')
  const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.` +
    `${Buffer.from(JSON.stringify({ sub: u.userId, cid: u.customerId })).toString('base64url')}.`
  t.equal((await me(none)).statusCode, 401, 'alg none')
  t.equal((await me(hs256({ sub: u.userId, cid: 'wrong-org', iat: now }))).statusCode, 401, 'cid must match the user')
  t.equal((await me('not-a-jwt')).statusCode, 401)
  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: { authorization: 'Basic abc' } })).statusCode, 401)
  t.equal((await app.inject({ url: '/api/v2/auth/me' })).statusCode, 401, 'no credentials')

  app.sqlite.prepare('DELETE FROM users WHERE id = ?').run(u.userId)
  t.equal((await me(u.token)).statusCode, 401, 'token of a deleted user')
})

t.test('a session token kept in memory: each spelling of the header, expiry on time, a changed byte', async (t) => {
  const app = await build(t, { config: { jwtSecret: SECRET } })
  const u = await signup(app)
  const expSeconds = Math.floor(Date.now() / 1000) + 2
  const token = hs256({ sub: u.userId, cid: u.customerId, iat: expSeconds - 60, exp: expSeconds })
  const me = (authorization: string) => app.inject({ url: '/api/v2/auth/me', headers: { authorization } })
  for (const header of [`Bearer ${token}`, `Bearer ${token}`, `bearer   ${token}  `, `BEARER\t${token}`]) {
    const res = await me(header)
    t.equal(res.statusCode, 200, JSON.stringify(header.slice(0, 8)))
    t.equal(res.json().data.user.id, u.userId)
  }
  const [h, p, s] = token.split('.')
  const tampered = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`
  t.equal((await me(`Bearer ${tampered}`)).statusCode, 401, 'a changed signature after the kept one')
  t.equal((await me(`Bearer ${token} x`)).statusCode, 401, 'the kept token with more after it')
  t.equal((await me(`Bearer ${token} x`)).json().message, 'Authorization header must be "Bearer <token>"')
  // nothing is written in between: the kept entry alone must know the expiry (the wait runs to the token's own)
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, expSeconds * 1000 - Date.now()) + 10))
  for (const header of [`Bearer ${token}`, `bearer   ${token}  `]) {
    const expired = await me(header)
    t.equal(expired.statusCode, 401)
    t.equal(expired.json().message, 'Token has expired')
  }
})

t.test('API keys: create shows the value once; list and details never do', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const res = await app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: u.auth,
    payload: { name: 'ci', scopes: ['read', 'knowledge:read'] } })
  t.equal(res.statusCode, 201)
  const k = res.json().data
  t.match(k.key, /^cairn_[A-Za-z0-9_-]{43}$/)
  t.equal(k.key_prefix, k.key.slice(0, 12))
  t.same(k.scopes, ['read', 'knowledge:read'])
  t.equal(k.workspace_id, null)
  t.equal(k.expires_at, null)

  const list = await app.inject({ url: '/api/v2/api-keys', headers: u.auth })
  t.equal(list.statusCode, 200)
  t.notOk(list.body.includes(k.key), 'no key value in the listing')
  t.notOk(/key_hash|keyHash/.test(list.body), 'no hash in the listing')
  const stored = app.sqlite.prepare('SELECT key_hash FROM api_keys WHERE id = ?').get(k.id) as { key_hash: string }
  t.notOk(list.body.includes(stored.key_hash))
  t.not(stored.key_hash, k.key, 'only a hash is stored')
  t.same(list.json().data.map((x: { id: string }) => x.id), [k.id])

  const one = await app.inject({ url: `/api/v2/api-keys/${k.id}`, headers: u.auth })
  t.equal(one.statusCode, 200)
  t.equal(one.json().data.last_used_at, null)
  t.notOk(one.body.includes(k.key))

  const other = await signup(app)
  t.equal((await app.inject({ url: `/api/v2/api-keys/${k.id}`, headers: other.auth })).statusCode, 404,
    'another user\'s key is not found')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/api-keys/${k.id}`, headers: other.auth })).statusCode,
    404)
  t.equal((await app.inject({ method: 'POST', url: `/api/v2/api-keys/${k.id}/rotate`,
    headers: other.auth })).statusCode, 404)
  t.same((await app.inject({ url: '/api/v2/api-keys', headers: other.auth })).json().data, [])
})

t.test('scope lists: empty, duplicate, unknown and admin are refused', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  for (const scopes of [[], ['read', 'read'], ['read', 'delete'], ['admin'], ['read', 'admin']]) {
    const res = await app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: u.auth,
      payload: { name: 'x', scopes } })
    t.equal(res.statusCode, 400, JSON.stringify(scopes))
    t.equal(res.json().code, 'INVALID_SCOPES')
  }
  const noName = await app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: u.auth,
    payload: { name: '', scopes: ['read'] } })
  t.equal(noName.statusCode, 400)
  const past = await app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: u.auth,
    payload: { name: 'x', scopes: ['read'], expiresAt: '2020-01-01T00:00:00.000Z' } })
  t.equal(past.statusCode, 400)
  const foreignWs = await signup(app)
  const bound = await app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: u.auth,
    payload: { name: 'x', scopes: ['read'], workspaceId: foreignWs.workspaceId } })
  t.equal(bound.statusCode, 403, 'a key cannot be bound to a workspace the caller is not in')
})

t.test('every API key state, through both headers', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const viaBearer = (key: string, id: string) => app.inject({ url: usageUrl(id),
    headers: { authorization: `Bearer ${key}` } })
  const viaHeader = (key: string, id: string) => app.inject({ url: usageUrl(id), headers: { 'x-api-key': key } })

  for (const [name, call] of [['Authorization: Bearer', viaBearer], ['x-api-key', viaHeader]] as const) {
    const valid = await createKey(app, u, ['read'])
    t.equal((await call(valid.key, valid.id)).statusCode, 200, `${name}: valid`)

    const revoked = await createKey(app, u, ['read'])
    t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/api-keys/${revoked.id}`, headers: u.auth })).statusCode,
      200)
    const r = await call(revoked.key, revoked.id)
    t.equal(r.statusCode, 401, `${name}: revoked`)
    t.equal(r.json().message, 'API key has been revoked')

    const old = await createKey(app, u, ['read'])
    const rotated = await app.inject({ method: 'POST', url: `/api/v2/api-keys/${old.id}/rotate`, headers: u.auth })
    t.equal(rotated.statusCode, 201)
    const fresh = rotated.json().data
    t.not(fresh.key, old.key)
    t.equal((await call(old.key, old.id)).statusCode, 401, `${name}: rotated-old`)
    t.equal((await call(fresh.key, fresh.id)).statusCode, 200, `${name}: rotated-new`)

    const expiring = await createKey(app, u, ['read'], { expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
    t.equal((await call(expiring.key, expiring.id)).statusCode, 200, `${name}: not yet expired`)
    app.sqlite.prepare('UPDATE api_keys SET expires_at = ? WHERE id = ?').run(new Date(Date.now() - 1000).toISOString(),
      expiring.id)
    const e = await call(expiring.key, expiring.id)
    t.equal(e.statusCode, 401, `${name}: expired`)
    t.equal(e.json().message, 'API key has expired')

    const unknown = 'cairn_' + randomBytes(32).toString('base64url')
    const un = await call(unknown, valid.id)
    t.equal(un.statusCode, 401, `${name}: unknown`)
    t.equal(un.json().message, 'Invalid API key')

    for (const bad of ['cairn_short', 'cairn_' + 'x'.repeat(42) + '!']) {
      const m = await call(bad, valid.id)
      t.equal(m.statusCode, 401, `${name}: malformed ${bad}`)
      t.equal(m.json().code, 'UNAUTHORIZED')
    }
  }
  // a bare token in x-api-key that is not ours at all
  t.equal((await viaHeader('something-else', randomBytes(16).toString('hex'))).statusCode, 401)
})

t.test('a key kept in memory still expires on time; an unreadable expiry counts as expired', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const expiresMs = Date.now() + 3000
  const k = await createKey(app, u, ['read'], { expiresAt: new Date(expiresMs).toISOString() })
  const call = () => app.inject({ url: usageUrl(k.id), headers: { 'x-api-key': k.key } })
  t.equal((await call()).statusCode, 200, 'before its expiry')
  t.equal((await call()).statusCode, 200, 'again, from the auth cache')
  // nothing is written in between: the kept entry alone must know the expiry (the wait runs to the key's own)
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresMs - Date.now()) + 10))
  const expired = await call()
  t.equal(expired.statusCode, 401)
  t.equal(expired.json().message, 'API key has expired')

  const other = await createKey(app, u, ['read'])
  app.sqlite.prepare("UPDATE api_keys SET expires_at = 'someday' WHERE id = ?").run(other.id)
  const unreadable = await app.inject({ url: usageUrl(other.id), headers: { 'x-api-key': other.key } })
  t.equal(unreadable.statusCode, 401, 'a date that cannot be read fails closed')
  t.equal(unreadable.json().message, 'API key has expired')
})

t.test('rotation keeps name, binding, expiry and issuable scopes; revoked keys cannot rotate', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
  const k = await createKey(app, u, ['read', 'execute'], { workspaceId: u.workspaceId, expiresAt })
  // a label that could once be issued and no longer can
  app.sqlite.prepare('UPDATE api_keys SET scopes = ? WHERE id = ?').run(JSON.stringify(['read', 'execute', 'admin']),
    k.id)
  const res = await app.inject({ method: 'POST', url: `/api/v2/api-keys/${k.id}/rotate`, headers: u.auth })
  t.equal(res.statusCode, 201)
  const n = res.json().data
  t.same(n.scopes, ['read', 'execute'], 'admin is dropped')
  t.equal(n.workspace_id, u.workspaceId)
  t.equal(n.expires_at, expiresAt)
  t.equal(n.name, 'test key')
  const old = await app.inject({ url: `/api/v2/api-keys/${k.id}`, headers: u.auth })
  t.type(old.json().data.revoked_at, 'string', 'the old key is listed as revoked')
  const again = await app.inject({ method: 'POST', url: `/api/v2/api-keys/${k.id}/rotate`, headers: u.auth })
  t.equal(again.statusCode, 409)
})

t.test('API keys are refused on JWT-only routes and routes outside the capability table', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const k = await createKey(app, u, ['read', 'write', 'execute', 'knowledge:read', 'knowledge:write'])
  const h = { authorization: `Bearer ${k.key}` }
  for (const [method, url] of [
    ['GET', '/api/v2/api-keys'], ['POST', '/api/v2/api-keys'], ['GET', `/api/v2/api-keys/${k.id}`],
    ['POST', `/api/v2/api-keys/${k.id}/rotate`], ['DELETE', `/api/v2/api-keys/${k.id}`],
    ['GET', '/api/v2/auth/me'], ['GET', '/api/v2/workspaces'], ['POST', '/api/v2/workspaces'], ['POST', '/api/v2/users']
  ] as const) {
    const res = await app.inject({ method, url, headers: h,
      payload: method === 'POST' ? { name: 'x', scopes: ['read'] } : undefined })
    t.equal(res.statusCode, 403, `${method} ${url}`)
    t.equal(res.json().code, 'API_KEY_NOT_ALLOWED')
  }
  t.equal((await app.inject({ url: `/api/v2/api-keys/${k.id}`, headers: u.auth })).json().data.revoked_at, null,
    'the key was not revoked by its own DELETE')
})

t.test('usage route by the capability table: read allows, others 403; owner only', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  for (const scopes of [['write'], ['execute'], ['knowledge:read'], ['knowledge:write'],
    ['write', 'execute', 'knowledge:read', 'knowledge:write']]) {
    const k = await createKey(app, u, scopes)
    const res = await app.inject({ url: usageUrl(k.id), headers: { 'x-api-key': k.key } })
    t.equal(res.statusCode, 403, scopes.join(','))
    t.equal(res.json().code, 'INSUFFICIENT_SCOPE')
    t.equal(res.json().message, 'This API key lacks a scope for this route: it needs one of read',
      'the answer names the scope that would allow the route')
  }
  const searcher = await createKey(app, u, ['write'])
  const search = await app.inject({ method: 'POST', url: '/api/knowledge/search',
    headers: { 'x-api-key': searcher.key }, payload: { query: 'x' } })
  t.match(search.json().message, /needs one of read, knowledge:read$/)
  const reader = await createKey(app, u, ['read'])
  const head = await app.inject({ method: 'HEAD', url: usageUrl(reader.id), headers: { 'x-api-key': reader.key } })
  t.equal(head.statusCode, 200, 'HEAD follows GET')
  const mate = await addUser(app, u)
  const mateKey = await createKey(app, mate, ['read'])
  t.equal((await app.inject({ url: usageUrl(mateKey.id), headers: { 'x-api-key': reader.key } })).statusCode, 404,
    'someone else\'s key')
  t.equal((await app.inject({ url: usageUrl(mateKey.id), headers: u.auth })).statusCode, 404, 'even for the org owner')
})

async function buildWithContextRoute(t: Test): Promise<App> {
  return build(t, {
    before: (app) => {
      app.get('/api/v2/test/context', { config: { auth: 'jwt' } }, async (request) => {
        const q = request.query as { workspace_id?: string }
        return { optional: workspaceContext(request, q.workspace_id) ?? null,
          required: requireWorkspaceContext(request, q.workspace_id) }
      })
    }
  })
}

t.test('workspace context: header, query, membership, key binding', async (t) => {
  const app = await buildWithContextRoute(t)
  const u: TestUser = await signup(app)
  const stranger = await signup(app)
  const ctx = (headers: Record<string, string>, query = '') => app.inject({ url: `/api/v2/test/context${query}`,
    headers })

  const missing = await ctx(u.auth)
  t.equal(missing.statusCode, 400)
  t.equal(missing.json().code, 'WORKSPACE_REQUIRED')

  const byHeader = await ctx({ ...u.auth, 'x-workspace-id': u.workspaceId })
  t.equal(byHeader.statusCode, 200)
  t.same(byHeader.json().required, { id: u.workspaceId, role: 'owner' })
  t.equal((await ctx(u.auth, `?workspace_id=${u.workspaceId}`)).statusCode, 200)

  const foreignHeader = await ctx({ ...u.auth, 'x-workspace-id': stranger.workspaceId })
  t.equal(foreignHeader.statusCode, 403)
  t.equal(foreignHeader.json().code, 'WORKSPACE_FORBIDDEN')
  t.equal((await ctx(u.auth, `?workspace_id=${stranger.workspaceId}`)).statusCode, 403)
  t.equal((await ctx({ ...u.auth, 'x-workspace-id': 'not-a-uuid' })).statusCode, 403)
  t.equal((await app.inject({ url: '/api/v2/auth/me',
    headers: { ...u.auth, 'x-workspace-id': stranger.workspaceId } })).statusCode, 403,
  'a foreign workspace header is refused on any route')

  // a workspace-bound key: its binding is the context; naming another workspace is 403
  const bound = await createKey(app, u, ['read'], { workspaceId: u.workspaceId })
  const usage = await app.inject({ url: usageUrl(bound.id), headers: { 'x-api-key': bound.key } })
  t.equal(usage.statusCode, 200)
  const ws2 = (await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: u.auth,
    payload: { name: 'Second' } })).json().data
  const mismatch = await app.inject({ url: usageUrl(bound.id),
    headers: { 'x-api-key': bound.key, 'x-workspace-id': ws2.id } })
  t.equal(mismatch.statusCode, 403)

  // removal from the workspace takes effect on the next request
  const mate = await addUser(app, u)
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws2.id}/members`, headers: u.auth,
    payload: { userId: mate.userId, role: 'member' } })
  t.equal((await ctx({ ...mate.auth, 'x-workspace-id': ws2.id })).statusCode, 200)
  await app.inject({ method: 'DELETE', url: `/api/v2/workspaces/${ws2.id}/members/${mate.userId}`, headers: u.auth })
  t.equal((await ctx({ ...mate.auth, 'x-workspace-id': ws2.id })).statusCode, 403)
})

t.test('legacy service key acts as the owner of the oldest organization', async (t) => {
  const serviceKey = 'svc-' + randomBytes(24).toString('hex')
  const app = await build(t, { config: { serviceKey } })
  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: { 'x-service-key': serviceKey } })).statusCode, 401,
    'no organization yet')
  const first = await signup(app)
  await signup(app)
  const me = await app.inject({ url: '/api/v2/auth/me', headers: { 'x-service-key': serviceKey } })
  t.equal(me.statusCode, 200)
  t.equal(me.json().data.user.id, first.userId)
  t.equal(me.json().data.orgRole, 'owner')
  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: { 'x-service-key': serviceKey + 'x' } })).statusCode,
    401)

  const off = await build(t)
  await signup(off)
  t.equal((await off.inject({ url: '/api/v2/auth/me', headers: { 'x-service-key': serviceKey } })).statusCode, 401,
    'unset disables it')
})

// the principals of keys and tokens are kept in memory (src/db/table-cache.ts, the verified-token map): each
// change below is made after the caller was served from memory, and must count on the very next request
t.test('a caller served from memory: rotation, deletion, role and scope changes count on the next request',
  async (t) => {
    const app = await build(t)
    const owner = await signup(app)
    const member = await addUser(app, owner, 'admin')
    const key = await createKey(app, owner, ['read'])
    const call = (k: string, id: string) => app.inject({ url: usageUrl(id), headers: { 'x-api-key': k } })
    for (let i = 0; i < 2; i++) t.equal((await call(key.key, key.id)).statusCode, 200, `served (${i})`)

    const rotated = await app.inject({ method: 'POST', url: `/api/v2/api-keys/${key.id}/rotate`, headers: owner.auth })
    t.equal(rotated.statusCode, 201)
    const fresh = rotated.json().data as { id: string; key: string }
    const old = await call(key.key, key.id)
    t.equal(old.statusCode, 401, 'the rotated key is refused at once')
    t.equal(old.json().message, 'API key has been revoked')
    for (let i = 0; i < 2; i++) t.equal((await call(fresh.key, fresh.id)).statusCode, 200, `the new key (${i})`)

    // scopes narrowed by hand: the capability check sees them at once
    app.sqlite.prepare('UPDATE api_keys SET scopes = ? WHERE id = ?').run(JSON.stringify(['write']), fresh.id)
    t.equal((await call(fresh.key, fresh.id)).statusCode, 403, 'narrowed scopes count at once')

    // the row removed (an operator, a cascade): unknown at once
    app.sqlite.prepare('DELETE FROM api_keys WHERE id = ?').run(fresh.id)
    const gone = await call(fresh.key, fresh.id)
    t.equal(gone.statusCode, 401)
    t.equal(gone.json().message, 'Invalid API key')

    // a token's user: its role is read afresh after a change
    const me = () => app.inject({ url: '/api/v2/auth/me', headers: member.auth })
    for (let i = 0; i < 2; i++) t.equal((await me()).json().data.orgRole, 'admin', `served (${i})`)
    app.sqlite.prepare(`UPDATE users SET org_role = 'member' WHERE id = ?`).run(member.userId)
    t.equal((await me()).json().data.orgRole, 'member', 'a role change counts at once')
    app.sqlite.prepare('DELETE FROM users WHERE id = ?').run(member.userId)
    t.equal((await me()).statusCode, 401, 'a deleted user\'s token is refused at once, though verified before')
  })
