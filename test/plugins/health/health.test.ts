import t from 'tap'
import { build } from '../../helper.js'

t.test('health: answers at once with the time of each probe (kept per millisecond, never longer)', async (t) => {
  const app = await build(t)
  const before = Date.now()
  const first = await app.inject({ url: '/api/health' })
  t.equal(first.statusCode, 200)
  const body = first.json()
  t.match(body, { status: 'ok', database: 'ok', version: String })
  t.ok(Date.parse(body.timestamp) >= before && Date.parse(body.timestamp) <= Date.now(), 'the time of the probe')
  t.equal(new Date(body.timestamp).toISOString(), body.timestamp, 'ISO 8601, UTC, milliseconds')
  // a later millisecond gives a later time: the kept string is renewed
  const start = Date.now()
  while (Date.now() < start + 2) { /* wait for the clock to move on (no timer: the answer is what is checked) */ }
  const later = (await app.inject({ url: '/api/health' })).json()
  t.ok(Date.parse(later.timestamp) > Date.parse(body.timestamp), 'renewed when the clock moves on')
  t.ok(Date.parse(later.timestamp) >= start + 2)
})
