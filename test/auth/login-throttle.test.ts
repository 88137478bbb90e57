import t from 'tap'
import { createLoginThrottle, sqliteThrottleStore } from '../../src/auth/login-throttle.js'
import { build, signup, tempDir } from '../helper.js'

t.test('per account and address: exponential locks from the 5th failure, capped at 5 minutes; a ' +
  'success resets', async (t) => {
  let clock = 1_000_000
  const th = createLoginThrottle({ now: () => clock })
  for (let i = 0; i < 4; i++) th.failed('a@x', '1.1.1.1')
  t.equal(th.retryAfterMs('a@x', '1.1.1.1'), 0, 'four failures: no lock')
  th.failed('a@x', '1.1.1.1')
  t.equal(th.retryAfterMs('a@x', '1.1.1.1'), 1000, 'fifth: 1 s')
  t.equal(th.retryAfterMs('a@x', '2.2.2.2'), 0, 'another address is not locked by it')
  t.equal(th.retryAfterMs('b@x', '1.1.1.1'), 0, 'nor another account')
  const locks: number[] = []
  for (let i = 0; i < 12; i++) {
    clock += th.retryAfterMs('a@x', '1.1.1.1'); th.failed('a@x',
      '1.1.1.1'); locks.push(th.retryAfterMs('a@x', '1.1.1.1'))
  }
  t.same(locks.slice(0, 8), [2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000], 'doubling')
  t.equal(Math.max(...locks), 300_000, 'never more than 5 minutes')
  th.succeeded('a@x', '1.1.1.1')
  t.equal(th.retryAfterMs('a@x', '1.1.1.1'), 0, 'a success resets')
  // failures are forgotten after 15 minutes without one
  for (let i = 0; i < 4; i++) th.failed('c@x', '1.1.1.1')
  clock += 16 * 60_000
  th.failed('c@x', '1.1.1.1')
  t.equal(th.retryAfterMs('c@x', '1.1.1.1'), 0, 'old failures forgotten')
})

t.test('per account from anywhere: from the 20th failure, at most 60 s, so the owner is never ' +
  'locked out for long', async (t) => {
  let clock = 5_000_000
  const th = createLoginThrottle({ now: () => clock })
  // an attacker spread over many addresses, never tripping the per-address rule
  for (let i = 0; i < 19; i++) th.failed('owner@x', `10.0.${i}.1`)
  t.equal(th.retryAfterMs('owner@x', '192.0.2.7'), 0, '19 failures: the owner may still try')
  th.failed('owner@x', '10.0.99.1')
  t.equal(th.retryAfterMs('owner@x', '192.0.2.7'), 1000)
  let worst = 0
  for (let i = 0; i < 50; i++) {
    clock += th.retryAfterMs('owner@x', `10.1.${i}.1`)
    th.failed('owner@x', `10.1.${i}.1`)
    worst = Math.max(worst, th.retryAfterMs('owner@x', '192.0.2.7'))
  }
  t.equal(worst, 60_000, 'the owner waits at most a minute however long the attack goes on')
})

t.test('the login route: 429 with Retry-After once throttled, whatever the password; the owner ' +
  'elsewhere still logs in', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const login = (password: string, remoteAddress: string, email = u.email) =>
    app.inject({ method: 'POST', url: '/api/v2/auth/login', remoteAddress, payload: { email, password } })
  for (let i = 0; i < 5; i++) t.equal((await login('wrong password', '203.0.113.9')).statusCode, 401)
  const locked = await login(u.password, '203.0.113.9')
  t.equal(locked.statusCode, 429, 'even the right password waits')
  t.equal(locked.json().code, 'LOGIN_THROTTLED')
  t.equal(locked.headers['retry-after'], '1')
  t.equal((await login(u.password, '198.51.100.4')).statusCode, 200,
    'the owner from their own address is not locked out')
  // unknown emails are throttled alike: a lock reveals nothing
  for (let i = 0; i < 5; i++) t.equal((await login('wrong password', '203.0.113.9', 'nobody@example.test')).statusCode,
    401)
  t.equal((await login('wrong password', '203.0.113.9', 'nobody@example.test')).statusCode, 429)
})

t.test('the counters outlive a restart (a restart handed an attacker fresh guesses) and name no account or ' +
  'address', async (t) => {
  const dataDir = tempDir(t)
  const first = await build(t, { dataDir })
  const u = await signup(first)
  const login = (app: typeof first, password: string) => app.inject({ method: 'POST', url: '/api/v2/auth/login',
    remoteAddress: '203.0.113.9', payload: { email: u.email, password } })
  for (let i = 0; i < 4; i++) t.equal((await login(first, 'wrong password')).statusCode, 401)
  const rows = first.sqlite.prepare('SELECT * FROM login_failures').all() as Array<Record<string, unknown>>
  t.equal(rows.length, 2, 'one counter for the account, one for the account and address')
  t.ok(rows.every((r) => /^[0-9a-f]{64}$/.test(String(r.key)) && r.failures === 4))
  t.notOk(JSON.stringify(rows).includes(u.email.split('@')[0]) || JSON.stringify(rows).includes('203.0.113'),
    'digests only')
  await first.close()
  const second = await build(t, { dataDir })
  t.equal((await login(second, 'wrong password')).statusCode, 401, 'the fifth failure, after the restart')
  t.equal((await login(second, u.password)).statusCode, 429, 'locks as if there had been no restart')
})

t.test('in SQLite: forgotten counters are pruned; a success deletes its own', async (t) => {
  const app = await build(t)
  let clock = 10_000_000
  const th = createLoginThrottle({ now: () => clock, store: sqliteThrottleStore(app.sqlite, 'test secret', 3) })
  const count = () => app.sqlite.prepare('SELECT count(*) FROM login_failures').pluck().get()
  for (let i = 0; i < 5; i++) th.failed('a@x', '1.1.1.1')
  t.equal(th.retryAfterMs('a@x', '1.1.1.1'), 1000)
  th.failed('b@x', '1.1.1.1')
  t.equal(count(), 4)
  th.succeeded('b@x', '1.1.1.1')
  t.equal(count(), 2, 'a success deletes its counters')
  clock += 16 * 60_000
  th.failed('c@x', '1.1.1.1')
  t.equal(count(), 2, 'counters 15 minutes old, locks over, pruned at the next failure')
  t.equal(th.retryAfterMs('a@x', '1.1.1.1'), 0)
  th.failed('d@x', '1.1.1.1')
  t.equal(count(), 4)
  clock += 2 * 60_000
  th.failed('e@x', '1.1.1.1')
  t.equal(count(), 3, 'past its size, the oldest counters go')
  t.equal(app.sqlite.prepare('SELECT count(*) FROM login_failures WHERE last_failure = ?').pluck().get(clock), 2,
    'the newest kept')
})
