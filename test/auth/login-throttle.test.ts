import t from 'tap'
import { createLoginThrottle, sqliteThrottleStore } from '../../src/auth/login-throttle.js'
import { build, signup, tempDir } from '../helper.js'
import { loggerOptions } from '../../src/app.js'

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

t.test('per account from anywhere: from the 20th failure, a lock period of at most 60 s for the addresses that ' +
  'failed in it, so a continuous attack never keeps the owner out for more than a minute', async (t) => {
  let clock = 5_000_000
  const th = createLoginThrottle({ now: () => clock })
  // an attacker spread over many addresses, never tripping the per-address rule
  for (let i = 0; i < 19; i++, clock += 10) th.failed('owner@x', `10.0.${i}.1`)
  t.equal(th.retryAfterMs('owner@x', '10.0.3.1'), 0, '19 failures: no lock')
  th.failed('owner@x', '10.0.99.1')
  t.equal(th.retryAfterMs('owner@x', '10.0.99.1'), 1000, 'the 20th starts a period of 1 s')
  t.equal(th.retryAfterMs('owner@x', '10.0.3.1'), 0, 'an address that has not failed in it may try once')
  th.failed('owner@x', '10.0.3.1')
  t.equal(th.retryAfterMs('owner@x', '10.0.3.1'), 1000, 'and then waits for the period\'s end')
  t.equal(th.retryAfterMs('owner@x', '192.0.2.7'), 0, 'the owner\'s own address is not held back')

  // the attacker tries again from every address the moment it may, for an hour; now and then the owner mistypes,
  // and logs in as soon as allowed
  let worst = 0
  let waitingSince: number | undefined
  let attacks = 0
  const attackers = Array.from({ length: 40 }, (_, i) => `10.1.${i}.1`)
  for (const end = clock + 3_600_000; clock < end; clock += 250) {
    for (const a of attackers) {
      if (th.retryAfterMs('owner@x', a) === 0) { th.failed('owner@x', a); attacks++ }
    }
    if (waitingSince === undefined && Math.floor(clock / 250) % 997 === 0) {
      t.equal(th.retryAfterMs('owner@x', '192.0.2.7'), 0, 'the owner may try at once')
      th.failed('owner@x', '192.0.2.7')
      waitingSince = clock
    } else if (waitingSince !== undefined && th.retryAfterMs('owner@x', '192.0.2.7') === 0) {
      worst = Math.max(worst, clock - waitingSince)
      waitingSince = undefined
      th.succeeded('owner@x', '192.0.2.7')
    }
  }
  t.ok(worst > 0 && worst <= 60_000, `after a mistake the owner waits at most a minute (${worst} ms)`)
  t.ok(attacks < 40 * 60 * 2, `40 addresses guess about once a minute each (${attacks} in an hour)`)
  th.succeeded('owner@x', '192.0.2.7')
  t.equal(th.retryAfterMs('owner@x', '192.0.2.7'), 0, 'the owner\'s success ends the lock')
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

t.test('behind a reverse proxy (CAIRN_TRUST_PROXY): each client counts by its own address, so bogus logins from ' +
  'one block neither the others\' sign-ins and sign-ups nor the owner of a targeted account', async (t) => {
  const limits = { knowledge: 30, voiceNotes: 100, artifacts: 120, default: 25 }
  const app = await build(t, { config: { trustProxy: ['127.0.0.1'], rateLimits: limits } })
  const u = await signup(app)
  // every request comes from the proxy (inject's 127.0.0.1), which names the client in X-Forwarded-For
  const via = (client: string) => ({ 'x-forwarded-for': client })
  const login = (client: string, password: string, email = u.email) => app.inject({ method: 'POST',
    url: '/api/v2/auth/login', headers: via(client), payload: { email, password } })

  // one client spends its whole budget of the route group on bogus logins
  for (let i = 0; i < 25; i++) {
    t.equal((await login('203.0.113.9', 'wrong password', `nobody${i}@example.test`)).statusCode, 401)
  }
  const limited = await login('203.0.113.9', 'wrong password', 'nobody@example.test')
  t.equal(limited.statusCode, 429)
  t.equal(limited.json().code, 'RATE_LIMITED')
  t.equal((await login('198.51.100.4', u.password)).statusCode, 200, 'another client still signs in')
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/auth/signup', headers: via('198.51.100.5'),
    payload: { email: 'new@example.test', password: 'correct horse battery' } })).statusCode, 201,
  'and signs up')

  // 20 addresses guess the owner's password: the account's lock period holds back those addresses only
  for (let i = 0; i < 20; i++) t.equal((await login(`10.9.${i}.1`, 'wrong password')).statusCode, 401)
  t.equal((await login('10.9.19.1', 'wrong password')).statusCode, 429, 'the address that started the period waits')
  t.equal((await login('10.9.3.1', 'wrong password')).statusCode, 401, 'one that failed before it may try once')
  const held = await login('10.9.3.1', 'wrong password')
  t.equal(held.statusCode, 429)
  t.equal(held.json().code, 'LOGIN_THROTTLED')
  t.equal((await login('198.51.100.4', u.password)).statusCode, 200, 'the owner from their own address signs in')

  // a peer that is not the trusted proxy cannot name an address
  const direct = await app.inject({ method: 'POST', url: '/api/v2/auth/login', remoteAddress: '203.0.113.9',
    headers: via('198.51.100.77'), payload: { email: 'nobody@example.test', password: 'wrong password' } })
  t.equal(direct.statusCode, 429, 'X-Forwarded-For from an untrusted peer is ignored: still 203.0.113.9')
})

t.test('without CAIRN_TRUST_PROXY, X-Forwarded-For is ignored: every client behind a proxy is the proxy', async (t) => {
  const limits = { knowledge: 30, voiceNotes: 100, artifacts: 120, default: 5 }
  const lines: string[] = []
  const app = await build(t, { config: { rateLimits: limits },
    logger: loggerOptions('warn', { write: (line: string) => { lines.push(line) } }) })
  const login = (client: string) => app.inject({ method: 'POST', url: '/api/v2/auth/login',
    headers: { 'x-forwarded-for': client }, payload: { email: 'nobody@example.test', password: 'wrong password' } })
  for (let i = 0; i < 5; i++) t.equal((await login('203.0.113.9')).statusCode, 401)
  t.equal((await login('198.51.100.4')).statusCode, 429, 'the header names nobody: both are 127.0.0.1')
  t.equal(lines.filter((l) => l.includes('CAIRN_TRUST_PROXY is unset')).length, 1, 'said once in the log')
})
