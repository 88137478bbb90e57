import t, { type Test } from 'tap'
import { INTENT, OUTBOX_HOLDER, releaseHolder, writeIntentOf, writeTurnsOf, writeWaitsOf } from
  '../../src/db/write-intent.js'
import type { App } from '../../src/app.js'
import { build, signup } from '../helper.js'

/** settles once `ready` holds, or once `settled` has come (the event loop turning meanwhile) */
async function until(ready: () => boolean, settled: () => boolean) {
  for (let i = 0; i < 100_000 && !ready() && !settled(); i++) await new Promise((resolve) => setImmediate(resolve))
}

/** the webhook outbox thread's flag, as if it held SQLite's write lock (idle here: nothing else sets or clears it) */
function holdLock(t: Test, app: App) {
  const intent = writeIntentOf(app.sqlite)!
  Atomics.store(intent, OUTBOX_HOLDER, 1)
  t.teardown(() => releaseHolder(intent, OUTBOX_HOLDER))
  return { intent, release: () => releaseHolder(intent, OUTBOX_HOLDER) }
}

t.test('a request that writes waits for another thread\'s writer before its handler, other requests answered meanwhile',
  async (t) => {
    const app = await build(t)
    const user = await signup(app)
    const turnsBefore = writeTurnsOf(app.sqlite)!.count
    const { intent, release } = holdLock(t, app)
    let answered = false
    const posting = app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: user.auth,
      payload: { name: 'waits', scopes: ['read'] } }).then((res) => { answered = true; return res })
    await until(() => Atomics.load(intent, INTENT) > 0, () => answered)
    t.equal(Atomics.load(intent, INTENT), 1, 'the request waits, counted as a write intent (the other thread yields)')
    const health = await app.inject({ method: 'GET', url: '/api/health' })
    t.equal(health.statusCode, 200, 'another request is answered meanwhile')
    const listing = await app.inject({ method: 'GET', url: '/api/v2/api-keys', headers: user.auth })
    t.equal(listing.statusCode, 200)
    t.equal(listing.json().data.length, 0, 'the waiting request has written nothing yet')
    t.notOk(answered, 'the write still waits')
    release()
    const res = await posting
    t.equal(res.statusCode, 201, 'then it goes on')
    t.equal(Atomics.load(intent, INTENT), 0)
    t.equal(writeTurnsOf(app.sqlite)!.count, turnsBefore + 1, 'one wait for a turn, counted')
    t.equal(writeWaitsOf(app.sqlite)!.count, 0, 'and no write blocked the event loop')

    // reads carry no wait, nor searches (POST routes that only read): answered while the flag is up
    holdLock(t, app)
    const read = await app.inject({ method: 'GET', url: '/api/v2/api-keys', headers: user.auth })
    t.equal(read.statusCode, 200)
    for (const url of ['/api/knowledge/search', '/api/v2/search']) {
      const search = await app.inject({ method: 'POST', url, headers: user.auth, payload: { query: 'anything' } })
      t.equal(search.statusCode, 200, url)
    }
    t.equal(Atomics.load(intent, INTENT), 0)
    t.equal(writeTurnsOf(app.sqlite)!.count, turnsBefore + 1, 'they do not wait')
    t.equal(writeWaitsOf(app.sqlite)!.count, 0, 'nor write')
  })

t.test('the turn comes before the Idempotency-Key is stored; a request refused before its body is read never waits',
  async (t) => {
    const rateLimits = { knowledge: 30, voiceNotes: 100, artifacts: 120, default: 2 }
    const app = await build(t, { config: { rateLimits } })
    const user = await signup(app)
    const keys = app.sqlite.prepare('SELECT count(*) FROM idempotency_keys').pluck()
    const { intent, release } = holdLock(t, app)
    let answered = false
    const posting = app.inject({ method: 'POST', url: '/api/v2/workspaces', payload: { name: 'Once' },
      headers: { ...user.auth, 'idempotency-key': 'turn-1' } }).then((res) => { answered = true; return res })
    await until(() => Atomics.load(intent, INTENT) > 0, () => answered)
    t.equal(Atomics.load(intent, INTENT), 1, 'it waits')
    t.equal(keys.get(), 0, 'its Idempotency-Key is not stored yet: that is a write too')
    release()
    t.equal((await posting).statusCode, 201)
    t.equal(keys.get(), 1)

    // a malformed body is refused by its parser, a caller over its rate limit by the limiter: neither waits
    holdLock(t, app)
    const turns = writeTurnsOf(app.sqlite)!.count
    const malformed = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: { ...user.auth,
      'content-type': 'application/json' }, payload: '{"name":' })
    t.equal(malformed.statusCode, 400)
    // (the limit of 2 a minute: the create and the malformed one)
    const limited = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: user.auth,
      payload: { name: 'Twice' } })
    t.equal(limited.statusCode, 429)
    t.equal(writeTurnsOf(app.sqlite)!.count, turns, 'none of them waited')
  })
