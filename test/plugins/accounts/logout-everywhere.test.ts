import t from 'tap'
import { build, signup, addUser, createKey } from '../../helper.js'

t.test('signing out everywhere ends every session of the caller, and only theirs; keys go on', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const login = async (email: string, password: string) => {
    const res = await app.inject({ method: 'POST', url: '/api/v2/auth/login', payload: { email, password } })
    return { authorization: `Bearer ${res.json().data.token as string}` }
  }
  const laptop = await login(u.email, u.password)
  const phone = await login(u.email, u.password)
  const colleague = await addUser(app, u)
  const key = await createKey(app, u, ['read'])

  const refused = await app.inject({ method: 'POST', url: '/api/v2/auth/logout-everywhere',
    headers: { authorization: `Bearer ${key.key}` } })
  t.equal(refused.statusCode, 403, 'an API key has no sessions to end')

  const res = await app.inject({ method: 'POST', url: '/api/v2/auth/logout-everywhere', headers: laptop })
  t.equal(res.statusCode, 200)
  t.match(res.headers['set-cookie'], /^cairn_session=; Path=\/; Max-Age=0/, 'the console cookie is removed')
  for (const [name, auth] of [['this session', laptop], ['another session', phone], ['the sign-up session', u.auth]]) {
    t.equal((await app.inject({ url: '/api/v2/auth/me', headers: auth as Record<string, string> })).statusCode, 401,
      `${name as string} has ended`)
  }
  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: colleague.auth })).statusCode, 200,
    'a colleague stays signed in')
  t.equal((await app.inject({ url: '/api/v2/developer/logs', headers: { authorization: `Bearer ${key.key}` } }))
    .statusCode, 200, 'API keys keep working')
  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: await login(u.email, u.password) })).statusCode, 200,
    'signing in again works')
})
