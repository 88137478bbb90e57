import t from 'tap'
import { build, signup } from '../helper.js'

t.test('callers without credentials share no Idempotency-Key space: another person\'s request under the same key ' +
  'is neither refused nor answered with the first one\'s response; the same request is replayed', async (t) => {
  const app = await build(t)
  const existing = await signup(app)
  const key = 'retry-1'
  const first = await app.inject({ method: 'POST', url: '/api/v2/auth/signup', headers: { 'idempotency-key': key },
    payload: { email: 'first@example.test', password: 'correct horse battery' } })
  t.equal(first.statusCode, 201)

  // someone else behind the same address (here both are 127.0.0.1) happens to send the same key
  const other = await app.inject({ method: 'POST', url: '/api/v2/auth/login', headers: { 'idempotency-key': key },
    payload: { email: existing.email, password: existing.password } })
  t.equal(other.statusCode, 200, 'not 422: a different request is a caller of its own')
  t.notOk(other.headers['idempotency-replayed'])
  t.not(other.json().data.token, first.json().data.token)

  const again = await app.inject({ method: 'POST', url: '/api/v2/auth/signup', headers: { 'idempotency-key': key },
    payload: { email: 'first@example.test', password: 'correct horse battery' } })
  t.equal(again.statusCode, 201, 'the first caller\'s retry is replayed')
  t.equal(again.headers['idempotency-replayed'], 'true')
  t.equal(again.json().data.token, first.json().data.token)
})
