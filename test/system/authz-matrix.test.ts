import t from 'tap'
import { randomUUID, createHmac } from 'node:crypto'
import { build, signup, addUser, createKey } from '../helper.js'

/**
 * Who may call each route, restated from docs/api/auth.md (independently of
 * the capability module): `public`; `user` (a user session; API keys 403); `key` (a user session, or an
 * API key holding one of `scopes`). `wsAdmin`: workspace owners/admins only; `orgAdmin`: organization
 * owners/admins only — whatever the credential: a key never does more than the person who owns it.
 * A route registered without a rule here fails the test.
 */
type Rule = { who: 'public' } | { who: 'user' | 'key'; scopes?: string[]; wsAdmin?: boolean; orgAdmin?: boolean }
const PUBLIC: Rule = { who: 'public' }
const USER: Rule = { who: 'user' }
const ORG_ADMIN: Rule = { who: 'user', orgAdmin: true }
const key = (scopes: string[], extra: { wsAdmin?: boolean } = {}): Rule => ({ who: 'key', scopes, ...extra })
const KR = key(['read', 'knowledge:read'])
const AR = key(['artifacts:read'])
const AW = key(['artifacts:write'])
const SCOPES = ['read', 'write', 'execute', 'knowledge:read', 'knowledge:write', 'artifacts:read', 'artifacts:write']
const ANY_KEY = key(SCOPES)

const RULES: Record<string, Rule> = {
  'GET /api/health': PUBLIC, 'POST /api/v2/auth/signup': PUBLIC, 'POST /api/v2/auth/login': PUBLIC,
  'GET /api/v2/auth/me': USER, 'POST /api/v2/auth/logout': USER,
  'POST /api/v2/auth/logout-everywhere': USER,
  'POST /api/v2/users': { who: 'user', orgAdmin: true }, 'POST /api/v2/workspaces': USER,
  'GET /api/v2/workspaces': USER,
  'POST /api/v2/workspaces/:id/members': { who: 'user', wsAdmin: true },
  'DELETE /api/v2/workspaces/:id/members/:userId': { who: 'user', wsAdmin: true },
  'PATCH /api/v2/workspaces/:id/members/:userId': { who: 'user', wsAdmin: true },
  'GET /api/v2/workspaces/:id/members': USER, 'GET /api/v2/users': USER,
  'PATCH /api/v2/users/:id': ORG_ADMIN, 'DELETE /api/v2/users/:id': ORG_ADMIN,
  'POST /api/v2/users/:id/password-reset': ORG_ADMIN,
  'POST /api/v2/invitations': ORG_ADMIN, 'GET /api/v2/invitations': ORG_ADMIN,
  'DELETE /api/v2/invitations/:id': ORG_ADMIN, 'POST /api/v2/invitations/accept': PUBLIC,
  'POST /api/v2/auth/password': USER, 'POST /api/v2/auth/password-reset': PUBLIC,
  'POST /api/v2/api-keys': USER, 'GET /api/v2/api-keys': USER, 'GET /api/v2/api-keys/:id': USER,
  'POST /api/v2/api-keys/:id/rotate': USER, 'DELETE /api/v2/api-keys/:id': USER,
  'GET /api/v2/developer/api-keys/:id/usage': key(['read']),
  'POST /api/v2/developer/webhooks': key(['write'], { wsAdmin: true }), 'GET /api/v2/developer/webhooks': key(['read']),
  'PUT /api/v2/developer/webhooks/:id': key(['write'], { wsAdmin: true }),
  'DELETE /api/v2/developer/webhooks/:id': key(['write'], { wsAdmin: true }),
  'GET /api/v2/developer/webhooks/events': key(['read']),
  'GET /api/v2/developer/webhooks/:id/deliveries': key(['read']),
  'POST /api/v2/developer/webhooks/:id/test': key(['execute'], { wsAdmin: true }),
  'POST /api/v2/developer/webhooks/:id/deliveries/:deliveryId/redeliver': key(['write'], { wsAdmin: true }),
  'POST /api/v2/developer/webhooks/:id/rotate-secret': key(['write'], { wsAdmin: true }),
  'GET /api/v2/developer/logs': key(['read']), 'POST /api/v2/activity/log': key(['write']),
  'POST /api/v2/voice-notes/audio': USER, 'GET /api/v2/voice-notes/audio/:id': USER, 'POST /api/v2/voice-notes': USER,
  'GET /api/v2/voice-notes': USER,
  'GET /api/v2/voice-notes/:id': USER, 'PUT /api/v2/voice-notes/:id': USER, 'DELETE /api/v2/voice-notes/:id': USER,
  'POST /api/v2/voice-notes/:id/transcribe': USER, 'GET /api/v2/voice-notes/:id/transcript': USER,
  'POST /api/v2/channels': USER, 'GET /api/v2/channels': USER, 'GET /api/v2/channels/:id/messages': USER,
  'POST /api/v2/messages': USER,
  'POST /api/v2/chat': USER, 'POST /api/v2/chat/stream': USER,
  'POST /api/v2/agents': USER, 'GET /api/v2/agents': USER, 'GET /api/v2/agents/:id': USER,
  'DELETE /api/v2/agents/:id': USER, 'POST /api/v2/agents/:id/message': USER,
  'POST /api/v2/workflows': USER, 'GET /api/v2/workflows': USER, 'GET /api/v2/workflows/:id': USER,
  'PUT /api/v2/workflows/:id': USER,
  'DELETE /api/v2/workflows/:id': USER, 'POST /api/v2/workflows/:id/execute': USER,
  'GET /api/v2/workflows/:id/runs': USER, 'GET /api/v2/workflow-runs/:runId': USER,
  'POST /api/v2/search': KR,
  'GET /api/v2/artifacts/meta/types': PUBLIC, 'GET /api/v2/artifacts': AR, 'GET /api/v2/artifacts/:id': AR,
  'POST /api/v2/artifacts': AW,
  'PATCH /api/v2/artifacts/:id': AW, 'DELETE /api/v2/artifacts/:id': AW, 'POST /api/v2/artifacts/:id/status': AW,
  'POST /api/v2/artifacts/:id/comments': AW,
  'POST /api/v2/artifacts/:id/supersede': AW, 'GET /api/v2/artifacts/:id/chain': AR,
  'GET /api/v2/artifacts/conversation/:conversationId': AR,
  'GET /api/v2/artifacts/workflow/:runId': AR,
  'GET /api/v2/events/stream': AR,
  'POST /api/mcp': ANY_KEY, 'GET /api/mcp': ANY_KEY, 'DELETE /api/mcp': ANY_KEY,
  'GET /api/knowledge/health': PUBLIC, 'POST /api/knowledge/upload': key(['write', 'knowledge:write']),
  'POST /api/knowledge/upload/batch': key(['write', 'knowledge:write']),
  'GET /api/knowledge/documents': KR, 'GET /api/knowledge/document/:id': KR,
  'GET /api/knowledge/document/:id/download': KR,
  'GET /api/knowledge/documents/:id/status': KR, 'DELETE /api/knowledge/document/:id': USER,
  'POST /api/knowledge/search': KR, 'GET /api/knowledge/stats': KR,
  'GET /api/knowledge-graph/documents/:id': KR, 'DELETE /api/knowledge-graph/documents/:id': key(['write'])
}

t.test('every route × every kind of caller', async (t) => {
  const secret = 'matrix-secret-0123456789abcdef'
  const app = await build(t,
    { config: { jwtSecret: secret, rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
  const owner = await signup(app)
  const member = await addUser(app, owner)
  const wsAdmin = await addUser(app, owner)
  const orgAdmin = await addUser(app, owner, 'admin')
  for (const [user, role] of [[member, 'member'], [wsAdmin, 'admin'], [orgAdmin, 'member']] as const) {
    await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
      payload: { userId: user.userId, role } })
  }
  // every role, each with a user session and with a key of every scope that the person made for themselves
  const people = await Promise.all(([
    ['owner', owner, 'owner', 'owner'], ['organization admin', orgAdmin, 'admin', 'member'],
    ['workspace admin', wsAdmin, 'member', 'admin'], ['member', member, 'member', 'member']
  ] as const).map(async ([label, user, org, ws]) => ({ label, user, org, ws,
    key: (await createKey(app, user, SCOPES)).key })))
  const admin = (role: string) => role === 'owner' || role === 'admin'
  const keys = Object.fromEntries(await Promise.all(SCOPES.map(async (s) => [s,
    (await createKey(app, owner, [s])).key] as const)))
  const revoked = await createKey(app, owner, SCOPES)
  await app.inject({ method: 'DELETE', url: `/api/v2/api-keys/${revoked.id}`, headers: owner.auth })
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
  const body =
    `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc({ sub: owner.userId, cid: owner.customerId, iat: 1, exp: 2 })}`
  const expired = `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`
  const ws = { 'x-workspace-id': owner.workspaceId }

  // signing out ends the session each caller's token names, and signing out everywhere every session: last, so that
  // the tokens work for every other route
  const ending = (url: string) => ['/api/v2/auth/logout', '/api/v2/auth/logout-everywhere'].indexOf(url)
  const routes = app.routeTable.filter((r) => !r.url.startsWith('/api/docs'))
    .sort((a, b) => ending(a.url) - ending(b.url))
  const unruled = routes.filter((r) => !RULES[`${r.method === 'HEAD' ? 'GET' : r.method} ${r.url}`]).map((r) =>
    `${r.method} ${r.url}`)
  t.same(unruled, [], 'every route has an authorization rule')
  t.ok(routes.length >= 100)

  let calls = 0
  for (const route of routes) {
    const rule = RULES[`${route.method === 'HEAD' ? 'GET' : route.method} ${route.url}`]
    if (!rule) continue
    const url = route.url.replace(/:id(?=\/|$)/,
      route.url.startsWith('/api/v2/workspaces/') ? owner.workspaceId : randomUUID()).replace(/:(\w+)/g,
      () => randomUUID())
    const send = async (headers: Record<string, string>) => {
      calls++
      // each call from an address of its own: the refused credentials here would otherwise reach the limit on
      // failed authentications per address (src/http/rate-limit.ts) and turn the later answers into 429
      const remoteAddress = `10.${(calls >> 16) & 255}.${(calls >> 8) & 255}.${calls & 255}`
      // an event stream answers its status at once and does not end: only its head is read
      const stream = route.url === '/api/v2/events/stream'
      const res = await app.inject({ method: route.method as 'GET', url, headers, remoteAddress,
        ...(['POST', 'PUT', 'PATCH'].includes(route.method) ? { payload: {} } : {}),
        ...(stream ? { payloadAsStream: true } : {}) })
      if (stream) res.stream().destroy()
      return res.statusCode
    }
    if (route.url === '/api/v2/auth/logout-everywhere') {
      // the sessions ended by signing out just before: each person signs in again to sign out everywhere
      for (const person of people) {
        const login = await app.inject({ method: 'POST', url: '/api/v2/auth/login',
          payload: { email: person.user.email, password: person.user.password } })
        person.user.auth = { authorization: `Bearer ${login.json().data.token as string}` }
      }
    }
    const name = `${route.method} ${route.url}`
    const denied = (s: number) => s === 401 || s === 403
    if (rule.who === 'public') {
      t.notOk(denied(await send({})), `${name}: anonymous allowed`)
      continue
    }
    t.equal(await send({}), 401, `${name}: anonymous`)
    t.equal(await send({ authorization: `Bearer ${expired}` }), 401, `${name}: expired JWT`)
    t.equal(await send({ 'x-api-key': revoked.key }), 401, `${name}: revoked key`)
    for (const s of SCOPES) {
      const status = await send({ 'x-api-key': keys[s], ...ws })
      if (rule.who === 'key' &&
        rule.scopes!.includes(s)) t.notOk(denied(status), `${name}: key with ${s} allowed (${status})`)
      else t.equal(status, 403, `${name}: key with ${s} refused`)
    }
    for (const person of people) {
      const roleAllows = (!rule.wsAdmin || admin(person.ws)) && (!rule.orgAdmin || admin(person.org))
      const asUser = await send({ ...person.user.auth, ...ws })
      t.not(asUser, 401, `${name}: ${person.label} authenticated`)
      if (roleAllows) t.not(asUser, 403, `${name}: ${person.label} allowed (${asUser})`)
      else t.equal(asUser, 403, `${name}: ${person.label} refused`)
      const withKey = await send({ 'x-api-key': person.key, ...ws })
      if (rule.who === 'key' && roleAllows) {
        t.notOk(denied(withKey), `${name}: ${person.label}'s key allowed (${withKey})`)
      } else t.equal(withKey, 403, `${name}: ${person.label}'s key refused, like its person`)
    }
  }
  t.ok(calls > 900, `${calls} calls`)
})
