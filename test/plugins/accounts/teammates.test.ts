import t from 'tap'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { build, signup, addUser, createKey, type TestUser } from '../../helper.js'
import type { App } from '../../../src/app.js'

const V2 = '/api/v2'
const login = (app: App, email: string, password: string) =>
  app.inject({ method: 'POST', url: `${V2}/auth/login`, payload: { email, password } })
const me = (app: App, token: string) =>
  app.inject({ url: `${V2}/auth/me`, headers: { authorization: `Bearer ${token}` } })
const tokenOf = (url: string) => url.split('/').pop()!

async function invite(app: App, admin: TestUser, payload: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: `${V2}/invitations`, headers: admin.auth, payload })
}

t.test('an invited person joins with their own password, into the invited workspaces; the link works once',
  async (t) => {
    const app = await build(t)
    const owner = await signup(app)
    const created = await invite(app, owner,
      { email: 'New.Person@Example.test', role: 'member', workspaces: [{ id: owner.workspaceId, role: 'admin' }] })
    t.equal(created.statusCode, 201, created.body)
    const inv = created.json().data
    t.equal(inv.email, 'new.person@example.test')
    t.equal(inv.emailed, false, 'no SMTP: the link is only in this answer')
    t.match(inv.url, /^http:\/\/127\.0\.0\.1:3000\/invite\/[\w-]{43}$/)
    t.equal(created.headers['cache-control'], 'no-store', 'the answer holds a secret')

    const pending = await app.inject({ url: `${V2}/invitations`, headers: owner.auth })
    t.same(pending.json().data.map((i: { id: string }) => i.id), [inv.id])
    t.notOk('url' in pending.json().data[0], 'listings never show the link')

    const accepted = await app.inject({ method: 'POST', url: `${V2}/invitations/accept`,
      payload: { token: tokenOf(inv.url), password: 'my own password', name: 'Nina' } })
    t.equal(accepted.statusCode, 201, accepted.body)
    const joined = accepted.json().data
    t.equal(joined.customerId, owner.customerId)
    t.equal(joined.user.name, 'Nina')
    const profile = (await me(app, joined.token)).json().data
    t.equal(profile.orgRole, 'member')
    t.same(profile.workspaces.map((w: { id: string; role: string }) => [w.id, w.role]), [[owner.workspaceId, 'admin']])
    t.equal((await login(app, 'new.person@example.test', 'my own password')).statusCode, 200)

    const again = await app.inject({ method: 'POST', url: `${V2}/invitations/accept`,
      payload: { token: tokenOf(inv.url), password: 'another password' } })
    t.equal(again.statusCode, 404, 'single use')
    t.equal((await app.inject({ url: `${V2}/invitations`, headers: owner.auth })).json().data.length, 0)
    const users = (await app.inject({ url: `${V2}/users`, headers: owner.auth })).json().data
    t.same(users.map((u: { email: string }) => u.email).sort(), [owner.email, 'new.person@example.test'].sort())

    const taken = await invite(app, owner, { email: 'new.person@example.test' })
    t.equal(taken.statusCode, 409)
    t.equal(taken.json().code, 'EMAIL_TAKEN')
  })

t.test('invitations: revoked, unknown and foreign ones; who may invite', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const stranger = await signup(app)
  const member = await addUser(app, owner, 'member')

  t.equal((await invite(app, member, { email: 'x@example.test' })).statusCode, 403, 'members do not invite')
  const key = await createKey(app, owner, ['write'])
  const byKey = await app.inject({ method: 'POST', url: `${V2}/invitations`,
    headers: { authorization: `Bearer ${key.key}` }, payload: { email: 'x@example.test' } })
  t.equal(byKey.statusCode, 403, 'API keys do not invite')
  const foreignWs = await invite(app, owner, { email: 'x@example.test',
    workspaces: [{ id: stranger.workspaceId, role: 'member' }] })
  t.equal(foreignWs.statusCode, 404, 'another organization\'s workspace is not found')

  const inv = (await invite(app, owner, { email: 'x@example.test' })).json().data
  t.equal((await app.inject({ method: 'DELETE', url: `${V2}/invitations/${inv.id}`, headers: stranger.auth }))
    .statusCode, 404, 'another organization cannot revoke it')
  t.equal((await app.inject({ url: `${V2}/invitations`, headers: stranger.auth })).json().data.length, 0,
    'nor see it')
  t.equal((await app.inject({ method: 'DELETE', url: `${V2}/invitations/${inv.id}`, headers: owner.auth }))
    .statusCode, 200)
  const revoked = await app.inject({ method: 'POST', url: `${V2}/invitations/accept`,
    payload: { token: tokenOf(inv.url), password: 'long enough' } })
  t.equal(revoked.statusCode, 404)
  const unknown = await app.inject({ method: 'POST', url: `${V2}/invitations/accept`,
    payload: { token: 'x'.repeat(43), password: 'long enough' } })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().message, revoked.json().message, 'one answer for every dead link')

  const first = (await invite(app, owner, { email: 'y@example.test' })).json().data
  const second = (await invite(app, owner, { email: 'y@example.test', role: 'admin' })).json().data
  t.equal((await app.inject({ method: 'POST', url: `${V2}/invitations/accept`,
    payload: { token: tokenOf(first.url), password: 'long enough' } })).statusCode, 404,
  'a new invitation of the same address replaces the old one')
  const joined = await app.inject({ method: 'POST', url: `${V2}/invitations/accept`,
    payload: { token: tokenOf(second.url), password: 'long enough' } })
  t.equal((await me(app, joined.json().data.token)).json().data.orgRole, 'admin')
})

t.test('joining from the console: the answer signs the browser in by its cookie, no token handed out, CSRF as login',
  async (t) => {
    const app = await build(t)
    const owner = await signup(app)
    const accept = (token: string, headers: Record<string, string>) => app.inject({ method: 'POST',
      url: `${V2}/invitations/accept`, headers, payload: { token, password: 'console password', cookie: true } })
    const sessionsOf = app.sqlite.prepare('SELECT count(*) FROM sessions s JOIN users u ON u.id = s.user_id ' +
      'WHERE u.email = ?').pluck()

    const inv = (await invite(app, owner, { email: 'browser@example.test' })).json().data
    const forged = await accept(tokenOf(inv.url), { 'x-cairn-csrf': '1', origin: 'https://evil.example' })
    t.equal(forged.statusCode, 403, 'a page of another site cannot sign a browser in')
    t.equal(forged.json().code, 'CSRF_REJECTED')
    t.notOk(forged.headers['set-cookie'])
    const noHeader = await accept(tokenOf(inv.url), {})
    t.equal(noHeader.statusCode, 403, 'nor a form without the header')
    t.equal((await app.inject({ url: `${V2}/invitations`, headers: owner.auth })).json().data.length, 1,
      'the refused calls left the invitation unused')

    const joined = await accept(tokenOf(inv.url), { 'x-cairn-csrf': '1', 'sec-fetch-site': 'same-origin' })
    t.equal(joined.statusCode, 201, joined.body)
    const data = joined.json().data
    t.notOk('token' in data, 'no token in the answer: page scripts never see one')
    t.equal(data.user.email, 'browser@example.test')
    const setCookie = String(joined.headers['set-cookie'])
    t.match(setCookie, /^cairn_session=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict$/)
    t.equal(sessionsOf.get('browser@example.test'), 1, 'one session, the cookie\'s: nothing left valid unused')
    const cookie = setCookie.split(';')[0]
    const profile = await app.inject({ url: `${V2}/auth/me`, headers: { cookie } })
    t.equal(profile.statusCode, 200)
    t.equal(profile.json().data.user.email, 'browser@example.test', 'the cookie is the new person\'s session')
    t.equal(profile.json().data.customerId, owner.customerId)

    const out = await app.inject({ method: 'POST', url: `${V2}/auth/logout`,
      headers: { cookie, 'x-cairn-csrf': '1' } })
    t.equal(out.statusCode, 200)
    t.equal((await app.inject({ url: `${V2}/auth/me`, headers: { cookie } })).statusCode, 401,
      'signing out ends the session the invitation started')

    const other = (await invite(app, owner, { email: 'api@example.test' })).json().data
    const byApi = await app.inject({ method: 'POST', url: `${V2}/invitations/accept`,
      payload: { token: tokenOf(other.url), password: 'api password' } })
    t.equal(byApi.statusCode, 201)
    t.type(byApi.json().data.token, 'string', 'without cookie: the token, as before')
    t.notOk(byApi.headers['set-cookie'])
  })

t.test('roles: admins manage members, owners manage owners, the last owner stays', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const stranger = await signup(app)
  const admin = await addUser(app, owner, 'admin')
  const member = await addUser(app, owner, 'member')
  const patch = (by: TestUser, id: string, payload: Record<string, unknown>) =>
    app.inject({ method: 'PATCH', url: `${V2}/users/${id}`, headers: by.auth, payload })

  t.equal((await patch(member, admin.userId, { role: 'member' })).statusCode, 403)
  t.equal((await patch(admin, owner.userId, { role: 'member' })).statusCode, 403, 'an admin cannot demote an owner')
  t.equal((await patch(admin, member.userId, { role: 'owner' })).statusCode, 403, 'nor make one')
  t.equal((await patch(stranger, member.userId, { role: 'admin' })).statusCode, 404, 'foreign ids are not found')
  const promoted = await patch(admin, member.userId, { role: 'admin', name: 'Mo' })
  t.equal(promoted.statusCode, 200)
  t.match(promoted.json().data, { id: member.userId, role: 'admin', name: 'Mo' })
  t.equal((await me(app, member.token)).json().data.orgRole, 'admin', 'the new role counts at once')
  const last = await patch(owner, owner.userId, { role: 'admin' })
  t.equal(last.statusCode, 409, 'the last owner cannot be demoted')
  t.equal((await patch(owner, admin.userId, { role: 'owner' })).statusCode, 200)
  t.equal((await patch(owner, owner.userId, { role: 'admin' })).statusCode, 200, 'with another owner, they can')
  t.equal((await patch(owner, owner.userId, {})).statusCode, 400, 'an empty change is refused')
  const listed = await app.inject({ url: `${V2}/users`, headers: stranger.auth })
  t.same(listed.json().data.map((u: { id: string }) => u.id), [stranger.userId], 'each organization lists its own')
})

t.test('removing a person ends their sessions and keys at once; their documents stay', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const admin = await addUser(app, owner, 'admin')
  const member = await addUser(app, owner, 'member')
  await app.inject({ method: 'POST', url: `${V2}/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
    payload: { userId: member.userId, role: 'member' } })
  const key = await createKey(app, member, ['knowledge:read'])
  const keyAuth = { authorization: `Bearer ${key.key}` }
  t.equal((await app.inject({ url: '/api/knowledge/documents', headers: keyAuth })).statusCode, 200)

  t.equal((await app.inject({ method: 'DELETE', url: `${V2}/users/${owner.userId}`, headers: admin.auth }))
    .statusCode, 403, 'an admin cannot remove an owner')
  const removed = await app.inject({ method: 'DELETE', url: `${V2}/users/${member.userId}`, headers: admin.auth })
  t.equal(removed.statusCode, 200, removed.body)
  t.equal((await me(app, member.token)).statusCode, 401, 'their session ends')
  t.equal((await app.inject({ url: '/api/knowledge/documents', headers: keyAuth })).statusCode, 401, 'their key too')
  t.equal((await login(app, member.email, member.password)).statusCode, 401, 'they cannot sign in')
  const members = await app.inject({ url: `${V2}/workspaces/${owner.workspaceId}/members`, headers: owner.auth })
  t.notOk(members.json().data.some((m: { user_id: string }) => m.user_id === member.userId))
  t.equal((await app.inject({ method: 'DELETE', url: `${V2}/users/${member.userId}`, headers: admin.auth }))
    .statusCode, 404, 'gone')
  t.equal((await app.inject({ method: 'DELETE', url: `${V2}/users/${owner.userId}`, headers: owner.auth }))
    .statusCode, 409, 'the last owner cannot be removed')
})

t.test('changing one\'s password ends the other sessions; a reset link ends them all', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const member = await addUser(app, owner, 'member')
  const other = (await login(app, member.email, member.password)).json().data.token
  const change = (payload: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: `${V2}/auth/password`, headers: member.auth, payload })

  t.equal((await change({ currentPassword: 'not it', newPassword: 'brand new password' })).statusCode, 403)
  t.equal((await change({ currentPassword: member.password, newPassword: 'short' })).statusCode, 400)
  t.equal((await change({ currentPassword: member.password, newPassword: 'brand new password' })).statusCode, 200)
  t.equal((await me(app, member.token)).statusCode, 200, 'this session goes on')
  t.equal((await me(app, other)).statusCode, 401, 'the other ends')
  t.equal((await login(app, member.email, member.password)).statusCode, 401)
  t.equal((await login(app, member.email, 'brand new password')).statusCode, 200)

  const byMember = await app.inject({ method: 'POST', url: `${V2}/users/${owner.userId}/password-reset`,
    headers: member.auth })
  t.equal(byMember.statusCode, 403)
  const link = await app.inject({ method: 'POST', url: `${V2}/users/${member.userId}/password-reset`,
    headers: owner.auth })
  t.equal(link.statusCode, 201, link.body)
  t.match(link.json().data.url, /\/reset-password\/[\w-]{43}$/)
  const reset = (newPassword: string) => app.inject({ method: 'POST', url: `${V2}/auth/password-reset`,
    payload: { token: tokenOf(link.json().data.url), newPassword } })
  t.equal((await reset('reset password here')).statusCode, 200)
  t.equal((await me(app, member.token)).statusCode, 401, 'every session ends')
  t.equal((await reset('and once more')).statusCode, 404, 'single use')
  t.equal((await login(app, member.email, 'reset password here')).statusCode, 200)
})

t.test('workspace members: listed by members, roles changed by owners and admins', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const stranger = await signup(app)
  const member = await addUser(app, owner, 'member')
  const admin = await addUser(app, owner, 'member')
  const ws = owner.workspaceId
  for (const [u, role] of [[member, 'member'], [admin, 'admin']] as const) {
    await app.inject({ method: 'POST', url: `${V2}/workspaces/${ws}/members`, headers: owner.auth,
      payload: { userId: u.userId, role } })
  }
  const list = await app.inject({ url: `${V2}/workspaces/${ws}/members`, headers: member.auth })
  t.equal(list.statusCode, 200)
  t.same(list.json().data.map((m: { user_id: string; role: string }) => [m.user_id, m.role]),
    [[owner.userId, 'owner'], [member.userId, 'member'], [admin.userId, 'admin']])
  t.equal((await app.inject({ url: `${V2}/workspaces/${ws}/members`, headers: stranger.auth })).statusCode, 403)
  const patch = (by: TestUser, userId: string, role: string) => app.inject({ method: 'PATCH',
    url: `${V2}/workspaces/${ws}/members/${userId}`, headers: by.auth, payload: { role } })
  t.equal((await patch(member, admin.userId, 'member')).statusCode, 403)
  t.equal((await patch(admin, owner.userId, 'member')).statusCode, 403, 'an admin cannot demote the owner')
  t.equal((await patch(admin, member.userId, 'admin')).statusCode, 200)
  t.equal((await patch(owner, owner.userId, 'admin')).statusCode, 409, 'the last owner stays')
  t.equal((await patch(owner, stranger.userId, 'admin')).statusCode, 404)
})

t.test('with SMTP configured, invitation and reset links are e-mailed (a real SMTP server)', async (t) => {
  const received: Array<{ to: string[]; body: string }> = []
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), body: Buffer.concat(chunks).toString() })
        callback()
      })
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server.server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const port = (server.server.address() as AddressInfo).port
  const app = await build(t, { config: { mail: { smtpUrl: `smtp://127.0.0.1:${port}`, from: 'Cairn <c@example.test>' } } })
  const owner = await signup(app)
  const inv = (await invite(app, owner, { email: 'mailed@example.test' })).json().data
  t.equal(inv.emailed, true)
  t.same(received[0].to, ['mailed@example.test'])
  t.ok(received[0].body.replace(/=\r\n/g, '').includes(tokenOf(inv.url)), 'the mail holds the link')
  const member = await addUser(app, owner)
  const link = (await app.inject({ method: 'POST', url: `${V2}/users/${member.userId}/password-reset`,
    headers: owner.auth })).json().data
  t.equal(link.emailed, true)
  t.same(received[1].to, [member.email])

  // a mail server that refuses: the link is still made and shown, and the answer says it was not sent
  server.onRcptTo = (_address, _session, callback) => callback(new Error('mailbox unavailable'))
  const refused = (await invite(app, owner, { email: 'refused@example.test' })).json().data
  t.equal(refused.emailed, false)
  t.match(refused.url, /\/invite\//)
})
