import t from 'tap'
import { build, signup } from '../helper.js'
import type { App } from '../../src/app.js'

/** Signs in as a browser would, over a real socket: the cookie of the answer, or the failed answer. */
async function cookieLogin(base: string, email: string, password: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/api/v2/auth/login`, { method: 'POST',
    headers: { 'content-type': 'application/json', 'x-cairn-csrf': '1', ...headers },
    body: JSON.stringify({ email, password, cookie: true }) })
  const setCookie = res.headers.get('set-cookie') ?? ''
  return { res, body: await res.json() as Record<string, unknown>, setCookie,
    cookie: setCookie.split(';')[0] }
}

async function listening(t: Parameters<typeof build>[0], app: App) {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (!address || typeof address === 'string') throw new Error('no address')
  t.teardown(() => app.close())
  return `http://127.0.0.1:${address.port}`
}

t.test('cookie sign-in: HttpOnly SameSite=Strict, no token in the body, the cookie works for reads', async (t) => {
  const app = await build(t)
  const base = await listening(t, app)
  const u = await signup(app)
  const { res, body, setCookie, cookie } = await cookieLogin(base, u.email, u.password)
  t.equal(res.status, 200)
  t.notOk((body.data as Record<string, unknown>).token, 'the token is not readable by page scripts')
  t.match(setCookie, /^cairn_session=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict$/)
  t.notMatch(setCookie, /Secure/, 'not Secure over plain http')
  const me = await fetch(`${base}/api/v2/auth/me`, { headers: { cookie } })
  t.equal(me.status, 200)
  t.equal((await me.json() as { data: { user: { email: string } } }).data.user.email, u.email)
  const keys = await fetch(`${base}/api/v2/api-keys`, { headers: { cookie } })
  t.equal(keys.status, 200, 'a route for people only accepts the cookie')
})

t.test('cookie sign-in over https (as the public URL says) sets Secure', async (t) => {
  const app = await build(t, { config: { publicUrl: 'https://cairn.example.test' } })
  const u = await signup(app)
  const res = await app.inject({ method: 'POST', url: '/api/v2/auth/login', headers: { 'x-cairn-csrf': '1' },
    payload: { email: u.email, password: u.password, cookie: true } })
  t.equal(res.statusCode, 200)
  t.match(res.headers['set-cookie'], /; Secure$/)
})

t.test('CSRF: writes carried by the cookie need x-cairn-csrf and the own origin', async (t) => {
  const app = await build(t)
  const base = await listening(t, app)
  const u = await signup(app)
  const { cookie } = await cookieLogin(base, u.email, u.password)
  const create = (headers: Record<string, string>) => fetch(`${base}/api/v2/workspaces`, { method: 'POST',
    headers: { 'content-type': 'application/json', cookie, ...headers }, body: JSON.stringify({ name: 'forged' }) })

  const forged = await create({})
  t.equal(forged.status, 403, 'no header: refused')
  t.equal((await forged.json() as { code: string }).code, 'CSRF_REJECTED')
  t.equal((await create({ 'x-cairn-csrf': '1', origin: 'https://evil.example' })).status, 403, 'another origin')
  t.equal((await create({ 'x-cairn-csrf': '1', 'sec-fetch-site': 'same-site' })).status, 403, 'a sibling site')
  t.equal((await create({ 'x-cairn-csrf': '1', 'sec-fetch-site': 'cross-site' })).status, 403, 'another site')
  const names = app.sqlite.prepare('SELECT count(*) FROM workspaces WHERE name = ?').pluck()
  t.equal(names.get('forged'), 0, 'nothing was written')

  t.equal((await create({ 'x-cairn-csrf': '1', origin: base, 'sec-fetch-site': 'same-origin' })).status, 201,
    'the console itself')
  t.equal(names.get('forged'), 1)

  const login = await cookieLogin(base, u.email, u.password, { 'x-cairn-csrf': '0' })
  t.equal(login.res.status, 403, 'a cookie sign-in without the header (login CSRF) is refused')
  t.equal(login.setCookie, '')

  const bearer = await fetch(`${base}/api/v2/workspaces`, { method: 'POST',
    headers: { 'content-type': 'application/json', ...u.auth, origin: 'https://elsewhere.example' },
    body: JSON.stringify({ name: 'api client' }) })
  t.equal(bearer.status, 201, 'API clients with Authorization are unaffected')
})

t.test('logout ends the session for good: a copied cookie or token stops working', async (t) => {
  const app = await build(t)
  const base = await listening(t, app)
  const u = await signup(app)
  const { cookie } = await cookieLogin(base, u.email, u.password)
  const copied = cookie
  const other = await cookieLogin(base, u.email, u.password)

  const refused = await fetch(`${base}/api/v2/auth/logout`, { method: 'POST', headers: { cookie } })
  t.equal(refused.status, 403, 'logout by cookie is a write too: CSRF header required')
  const out = await fetch(`${base}/api/v2/auth/logout`, { method: 'POST', headers: { cookie, 'x-cairn-csrf': '1' } })
  t.equal(out.status, 200)
  t.match(out.headers.get('set-cookie'), /^cairn_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/,
    'the cookie is removed')

  const again = await fetch(`${base}/api/v2/auth/me`, { headers: { cookie: copied } })
  t.equal(again.status, 401, 'the copied cookie no longer works')
  t.equal((await again.json() as { message: string }).message, 'The session has ended: sign in again')
  t.equal((await fetch(`${base}/api/v2/auth/me`, { headers: { cookie: other.cookie } })).status, 200,
    'another session of the same person goes on')

  // a bearer token from login is a session too
  const login = await app.inject({ method: 'POST', url: '/api/v2/auth/login',
    payload: { email: u.email, password: u.password } })
  const auth = { authorization: `Bearer ${login.json().data.token}` }
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/auth/logout', headers: auth })).statusCode, 200)
  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: auth })).statusCode, 401, 'the token stops working')
  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: u.auth })).statusCode, 200,
    'the sign-up token is its own session')
})

t.test('a cookie with a forged or foreign token is refused; Authorization wins over a cookie', async (t) => {
  const app = await build(t)
  const a = await signup(app)
  const b = await signup(app)
  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: { cookie: 'cairn_session=abc.def.ghi' } })).statusCode,
    401)
  const both = await app.inject({ url: '/api/v2/auth/me', headers: { ...a.auth, cookie: `cairn_session=${b.token}` } })
  t.equal(both.json().data.user.email, a.email)
  const unrelated = await app.inject({ url: '/api/v2/auth/me', headers: { cookie: 'theme=dark; other=1' } })
  t.equal(unrelated.statusCode, 401, 'other cookies are not credentials')
})
