import t from 'tap'
import { INTENT, OUTBOX_HOLDER, releaseHolder, writeIntentOf, writeWaitsOf } from '../../src/db/write-intent.js'
import { build, signup } from '../helper.js'

t.test('a request that writes waits for another thread\'s writer before its handler, other requests answered meanwhile',
  async (t) => {
    const app = await build(t)
    const user = await signup(app)
    const intent = writeIntentOf(app.sqlite)!
    const waitsBefore = writeWaitsOf(app.sqlite)!.count
    // the webhook outbox thread's flag, as if it held SQLite's write lock (idle here: nothing else sets or clears it)
    Atomics.store(intent, OUTBOX_HOLDER, 1)
    t.teardown(() => releaseHolder(intent, OUTBOX_HOLDER))
    let answered = false
    const posting = app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: user.auth,
      payload: { name: 'waits', scopes: ['read'] } }).then((res) => { answered = true; return res })
    // its wait shows as a write intent (the other thread ends its transaction and starts none)
    for (let i = 0; i < 10_000 && !answered && Atomics.load(intent, INTENT) === 0; i++) {
      await new Promise((resolve) => setImmediate(resolve))
    }
    t.equal(Atomics.load(intent, INTENT), 1, 'the request waits, counted as a write intent')
    const health = await app.inject({ method: 'GET', url: '/api/health' })
    t.equal(health.statusCode, 200, 'another request is answered meanwhile')
    const listing = await app.inject({ method: 'GET', url: '/api/v2/api-keys', headers: user.auth })
    t.equal(listing.statusCode, 200)
    t.equal(listing.json().data.length, 0, 'the waiting request has written nothing yet')
    t.notOk(answered, 'the write still waits')
    releaseHolder(intent, OUTBOX_HOLDER)
    const res = await posting
    t.equal(res.statusCode, 201, 'then it goes on')
    t.equal(Atomics.load(intent, INTENT), 0)
    t.equal(writeWaitsOf(app.sqlite)!.count, waitsBefore + 1, 'one wait, counted')

    // reads carry no wait, nor searches (POST routes that only read): answered while the flag is up
    Atomics.store(intent, OUTBOX_HOLDER, 1)
    const read = await app.inject({ method: 'GET', url: '/api/v2/api-keys', headers: user.auth })
    t.equal(read.statusCode, 200)
    for (const url of ['/api/knowledge/search', '/api/v2/search']) {
      const search = await app.inject({ method: 'POST', url, headers: user.auth, payload: { query: 'anything' } })
      t.equal(search.statusCode, 200, url)
    }
    t.equal(Atomics.load(intent, INTENT), 0)
    t.equal(writeWaitsOf(app.sqlite)!.count, waitsBefore + 1, 'they do not wait')
  })
