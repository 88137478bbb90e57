import t from 'tap'
import { build, signup, createKey } from '../helper.js'
import { limitFor } from '../../src/http/rate-limit.js'

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
    headers: { 'x-api-key': key.key } })).statusCode, 429, 'an API key counts on its own')
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
