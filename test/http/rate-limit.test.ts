import t from 'tap'
import { build, signup, createKey } from '../helper.js'
import { limitFor, FAILED_AUTH_LIMIT } from '../../src/http/rate-limit.js'

t.test('429 with Retry-After and x-ratelimit headers, per caller', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 30, voiceNotes: 100, artifacts: 120, default: 3 } } })
  const a = await signup(app)
  const b = await signup(app)
  for (let i = 0; i < 3; i++) {
    const ok = await app.inject({ url: '/api/v2/auth/me', headers: a.auth })
    t.equal(ok.statusCode, 200)
    t.equal(ok.headers['x-ratelimit-limit'], '3')
    t.equal(ok.headers['x-ratelimit-remaining'], String(2 - i))
  }
  const limited = await app.inject({ url: '/api/v2/auth/me', headers: a.auth })
  t.equal(limited.statusCode, 429)
  t.ok(Number(limited.headers['retry-after']) > 0 && Number(limited.headers['retry-after']) <= 60,
    'Retry-After in seconds')
  t.equal(limited.headers['x-ratelimit-remaining'], '0')
  t.ok(limited.headers['x-ratelimit-reset'])
  const body = limited.json()
  t.same(Object.keys(body).sort(), ['code', 'error', 'message', 'requestId', 'statusCode', 'success'])
  t.equal(body.code, 'RATE_LIMITED')
  t.equal(body.error, 'Too Many Requests')

  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: b.auth })).statusCode, 200,
    'another caller has its own budget')
  const key = await createKey(app, b, ['read'])
  for (let i = 0; i < 3; i++) {
    t.equal((await app.inject({ url: `/api/v2/developer/api-keys/${key.id}/usage`,
      headers: { 'x-api-key': key.key } })).statusCode, 200)
  }
  t.equal((await app.inject({ url: `/api/v2/developer/api-keys/${key.id}/usage`,
    headers: { 'x-api-key': key.key } })).statusCode, 429, 'an API key spends its user\'s budget')
  const second = await createKey(app, b, ['read'])
  t.equal((await app.inject({ url: `/api/v2/developer/api-keys/${second.id}/usage`,
    headers: { 'x-api-key': second.key } })).statusCode, 429,
  'a second key of the same user buys no more requests')
  t.equal((await app.inject({ url: `/api/v2/developer/api-keys/${second.id}/usage`, headers: b.auth })).statusCode,
    429, 'nor does the user\'s session')
  for (let i = 0; i < 5; i++) t.equal((await app.inject({ url: '/api/health' })).statusCode, 200,
    'health is never limited')
})

t.test('0 disables a limit; group mapping', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 30, voiceNotes: 100, artifacts: 120, default: 0 } } })
  const a = await signup(app)
  for (let i = 0; i < 20; i++) t.equal((await app.inject({ url: '/api/v2/auth/me', headers: a.auth })).statusCode, 200)
  const limits = { knowledge: 30, voiceNotes: 100, artifacts: 120, default: 600 }
  t.equal(limitFor(limits, 'knowledge'), 30)
  t.equal(limitFor(limits, 'voice_notes'), 100)
  t.equal(limitFor(limits, 'artifacts'), 120)
  t.equal(limitFor(limits, 'agents'), 600)
})

t.test('failed authentication counts against the client address: past the limit its credentials get 429 for the ' +
  'rest of the minute; other addresses and logins are not affected', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const attacker = '203.0.113.9'
  const bogus = (remoteAddress: string, i: number) => app.inject({ url: '/api/v2/auth/me', remoteAddress,
    headers: i % 2 === 0 ? { 'x-api-key': `cairn_${'A'.repeat(42)}${i % 10}` }
      : { authorization: `Bearer not.a.token${i}` } })
  for (let i = 0; i < FAILED_AUTH_LIMIT; i++) t.equal((await bogus(attacker, i)).statusCode, 401)
  const limited = await bogus(attacker, 0)
  t.equal(limited.statusCode, 429)
  t.equal(limited.json().code, 'RATE_LIMITED')
  t.ok(Number(limited.headers['retry-after']) > 0 && Number(limited.headers['retry-after']) <= 60)
  t.equal((await app.inject({ url: '/api/v2/auth/me', remoteAddress: attacker, headers: u.auth })).statusCode, 429,
    'credentials from that address wait too, before they are checked')
  t.equal((await bogus('198.51.100.4', 1)).statusCode, 401, 'another address is counted apart')
  t.equal((await app.inject({ url: '/api/v2/auth/me', remoteAddress: '198.51.100.4', headers: u.auth })).statusCode,
    200)
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/auth/login', remoteAddress: attacker,
    payload: { email: u.email, password: u.password } })).statusCode, 200,
  'routes without credentials are left to their own limits (a login answers)')
})
