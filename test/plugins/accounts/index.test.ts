import t from 'tap'
import { build, signup, addUser } from '../../helper.js'

t.test('first-user sign-up opens once, then closes', async (t) => {
  const app = await build(t, { config: { signup: 'first-user' } })
  const first = await app.inject({ method: 'POST', url: '/api/v2/auth/signup',
    payload: { email: 'Owner@Example.test', password: 'long enough', name: 'Olive', organizationName: 'Acme' } })
  t.equal(first.statusCode, 201)
  const body = first.json()
  t.equal(body.success, true)
  t.equal(body.data.user.email, 'owner@example.test', 'email is normalised')
  t.equal(body.data.user.name, 'Olive')
  t.match(body.data.customerId, /^[0-9a-f-]{36}$/)
  t.match(body.data.workspaceId, /^[0-9a-f-]{36}$/)
  t.type(body.data.token, 'string')

  const second = await app.inject({ method: 'POST', url: '/api/v2/auth/signup',
    payload: { email: 'other@example.test', password: 'long enough' } })
  t.equal(second.statusCode, 403)
  t.equal(second.json().code, 'SIGNUP_CLOSED')
})

t.test('open sign-up: new organizations; email taken is 409; validation 400', async (t) => {
  const app = await build(t)
  const a = await signup(app, 'a@example.test')
  const b = await signup(app, 'b@example.test')
  t.not(a.customerId, b.customerId, 'each sign-up is its own organization')
  const dup = await app.inject({ method: 'POST', url: '/api/v2/auth/signup',
    payload: { email: 'A@example.test', password: 'long enough' } })
  t.equal(dup.statusCode, 409)
  t.equal(dup.json().code, 'EMAIL_TAKEN')
  const short = await app.inject({ method: 'POST', url: '/api/v2/auth/signup',
    payload: { email: 'c@example.test', password: 'short' } })
  t.equal(short.statusCode, 400)
  t.equal(short.json().code, 'VALIDATION_ERROR')
  const badEmail = await app.inject({ method: 'POST', url: '/api/v2/auth/signup',
    payload: { email: 'not-an-email', password: 'long enough' } })
  t.equal(badEmail.statusCode, 400)
})

t.test('login: success, and the same 401 for a wrong password and an unknown email', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const ok = await app.inject({ method: 'POST', url: '/api/v2/auth/login',
    payload: { email: u.email.toUpperCase(), password: u.password } })
  t.equal(ok.statusCode, 200)
  t.type(ok.json().data.token, 'string')
  t.ok(Date.parse(ok.json().data.expiresAt) > Date.now() + 86_000_000, 'expires in about a day')
  const me = await app.inject({ url: '/api/v2/auth/me', headers: { authorization: `Bearer ${ok.json().data.token}` } })
  t.equal(me.statusCode, 200)

  const wrong = await app.inject({ method: 'POST', url: '/api/v2/auth/login',
    payload: { email: u.email, password: 'wrong password' } })
  const unknown = await app.inject({ method: 'POST', url: '/api/v2/auth/login',
    payload: { email: 'nobody@example.test', password: 'wrong password' } })
  t.equal(wrong.statusCode, 401)
  t.equal(unknown.statusCode, 401)
  const withoutId = ({ requestId, ...rest }: Record<string, unknown>) => { t.type(requestId, 'string'); return rest }
  t.same(withoutId(wrong.json()), withoutId(unknown.json()), 'no hint whether the email exists')
  const empty = await app.inject({ method: 'POST', url: '/api/v2/auth/login', payload: {} })
  t.equal(empty.statusCode, 400)
})

t.test('auth/me lists the caller, organization role and workspaces', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const res = await app.inject({ url: '/api/v2/auth/me', headers: u.auth })
  t.equal(res.statusCode, 200)
  const d = res.json().data
  t.equal(d.user.id, u.userId)
  t.equal(d.customerId, u.customerId)
  t.equal(d.orgRole, 'owner')
  t.same(d.workspaces, [{ id: u.workspaceId, name: 'General', role: 'owner' }])
  t.notOk('passwordHash' in d.user || 'password_hash' in d.user)
})

t.test('users: org owners and admins add users; members cannot', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const admin = await addUser(app, owner, 'admin')
  const member = await addUser(app, owner, 'member')
  const byAdmin = await app.inject({ method: 'POST', url: '/api/v2/users', headers: admin.auth,
    payload: { email: 'x1@example.test', password: 'long enough' } })
  t.equal(byAdmin.statusCode, 201)
  t.equal(byAdmin.json().data.role, 'member', 'default role member')
  const byMember = await app.inject({ method: 'POST', url: '/api/v2/users', headers: member.auth,
    payload: { email: 'x2@example.test', password: 'long enough' } })
  t.equal(byMember.statusCode, 403)
  const asOwner = await app.inject({ method: 'POST', url: '/api/v2/users', headers: owner.auth,
    payload: { email: 'x3@example.test', password: 'long enough', role: 'owner' } })
  t.equal(asOwner.statusCode, 400, 'owner role cannot be given')
  const taken = await app.inject({ method: 'POST', url: '/api/v2/users', headers: owner.auth,
    payload: { email: member.email, password: 'long enough' } })
  t.equal(taken.statusCode, 409)
  const me = await app.inject({ url: '/api/v2/auth/me', headers: member.auth })
  t.equal(me.json().data.orgRole, 'member')
  t.equal(me.json().data.customerId, owner.customerId)
})

t.test('workspaces and members', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const member = await addUser(app, owner)
  const stranger = await signup(app)

  const created = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: owner.auth,
    payload: { name: 'Research' } })
  t.equal(created.statusCode, 201)
  const ws = created.json().data
  t.same({ name: ws.name, customer_id: ws.customer_id, role: ws.role },
    { name: 'Research', customer_id: owner.customerId, role: 'owner' })

  const list = await app.inject({ url: '/api/v2/workspaces', headers: owner.auth })
  t.same(list.json().data.map((w: { name: string }) => w.name), ['General', 'Research'])

  const add = await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws.id}/members`, headers: owner.auth,
    payload: { userId: member.userId, role: 'member' } })
  t.equal(add.statusCode, 201)
  t.same(add.json().data, { workspace_id: ws.id, user_id: member.userId, role: 'member' })
  const memberList = await app.inject({ url: '/api/v2/workspaces', headers: member.auth })
  t.same(memberList.json().data, [{ id: ws.id, name: 'Research', role: 'member' }])

  const foreignUser = await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws.id}/members`,
    headers: owner.auth, payload: { userId: stranger.userId, role: 'member' } })
  t.equal(foreignUser.statusCode, 404, 'a user of another organization is not found')

  const byMember = await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws.id}/members`, headers: member.auth,
    payload: { userId: member.userId, role: 'admin' } })
  t.equal(byMember.statusCode, 403, 'members cannot manage members')

  const byStranger = await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws.id}/members`,
    headers: stranger.auth, payload: { userId: stranger.userId, role: 'admin' } })
  t.equal(byStranger.statusCode, 403, 'a foreign workspace named in the path is 403')

  const demoteOwner = await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws.id}/members`,
    headers: owner.auth, payload: { userId: owner.userId, role: 'member' } })
  t.equal(demoteOwner.statusCode, 409)

  const promote = await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws.id}/members`, headers: owner.auth,
    payload: { userId: member.userId, role: 'admin' } })
  t.equal(promote.statusCode, 201)
  t.equal(promote.json().data.role, 'admin')

  const removeOwner = await app.inject({ method: 'DELETE', url: `/api/v2/workspaces/${ws.id}/members/${owner.userId}`,
    headers: member.auth })
  t.equal(removeOwner.statusCode, 409)
  const remove = await app.inject({ method: 'DELETE', url: `/api/v2/workspaces/${ws.id}/members/${member.userId}`,
    headers: owner.auth })
  t.equal(remove.statusCode, 200)
  t.same(remove.json(), { success: true, message: 'Member removed' })
  const again = await app.inject({ method: 'DELETE', url: `/api/v2/workspaces/${ws.id}/members/${member.userId}`,
    headers: owner.auth })
  t.equal(again.statusCode, 404)
  const after = await app.inject({ url: '/api/v2/workspaces', headers: member.auth })
  t.same(after.json().data, [])
})
