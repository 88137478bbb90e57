import t from 'tap'
import { build, signup } from '../helper.js'
import { BASE, deliveries, holdingReceiver, hookAndChannel, post, ws } from './webhook-helpers.js'

t.test('a fair job type: due jobs are claimed round-robin over the key, at most perKey of one key at once',
  async (t) => {
    const app = await build(t)
    const started: string[] = []
    const release: Array<() => void> = []
    app.jobs.register('test.fair', async (payload) => {
      const job = payload as { org?: string; n: number }
      started.push(`${job.org ?? '-'}${job.n}`)
      await new Promise<void>((resolve) => release.push(resolve))
    }, { concurrency: 4, fairBy: 'org', perKey: 2 })
    const at = Date.now() - 60_000
    // a's backlog is older than every other job: claimed oldest first, it would take every slot
    for (let n = 0; n < 50; n++) app.jobs.enqueue('test.fair', { org: 'a', n }, { runAt: at + n })
    app.jobs.enqueue('test.fair', { org: 'b', n: 0 }, { runAt: at + 100 })
    app.jobs.enqueue('test.fair', { n: 0 }, { runAt: at + 101 })
    app.jobs.enqueue('test.fair', { org: 'b', n: 1 }, { runAt: at + 102 })
    const running = () => app.sqlite.prepare(`SELECT json_extract(payload, '$.org') AS org, COUNT(*) AS n FROM jobs
      WHERE type = 'test.fair' AND status = 'running' GROUP BY 1 ORDER BY 1`).all()
    while (started.length < 4) await new Promise((r) => setTimeout(r, 5))
    t.same(started.slice().sort(), ['-0', 'a0', 'a1', 'b0'], 'each key\'s first, then a\'s second: a holds perKey')
    t.same(running(), [{ org: null, n: 1 }, { org: 'a', n: 2 }, { org: 'b', n: 1 }])
    // the keyless one ends: the free slot goes to b's next, as a runs perKey already
    release.splice(started.indexOf('-0'), 1)[0]()
    while (started.length < 5) await new Promise((r) => setTimeout(r, 5))
    t.equal(started[4], 'b1')
    for (;;) {
      for (const r of release.splice(0)) r()
      if (started.length === 53) break
      await new Promise((r) => setTimeout(r, 5))
    }
    for (const r of release.splice(0)) r()
    await app.jobs.idle()
    t.equal(new Set(started).size, 53, 'every job ran once')
  })

t.test('one tenant\'s failing retries that hang do not hold up another tenant\'s retry: it is claimed ahead of ' +
  'their backlog, while they hang', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true, webhookRetrySchedule: [0.05] } })
  const hostileRx = await holdingReceiver(t, { failFirst: true })
  const otherRx = await holdingReceiver(t, { failFirst: true })
  const hostile = await signup(app)
  const other = await signup(app)
  const { channel: hostileChannel } = await hookAndChannel(app, hostile, hostileRx.url)
  const { channel: otherChannel } = await hookAndChannel(app, other, otherRx.url)
  for (let i = 0; i < 40; i++) t.equal((await post(app, hostile, hostileChannel.id)).statusCode, 201)
  // the hostile tenant's retries now hold every slot it may have
  await hostileRx.held(4)
  const queuedRetries = () => app.sqlite.prepare(`SELECT COUNT(*) FROM jobs WHERE type = 'webhook.retry'
    AND status = 'queued'`).pluck().get() as number
  while (queuedRetries() < 36) await new Promise((r) => setTimeout(r, 10))
  t.equal(queuedRetries(), 36, 'the rest of its 40 retries wait')

  t.equal((await post(app, other, otherChannel.id)).statusCode, 201)
  await otherRx.held(1)
  t.equal(hostileRx.givenUp(), 0, 'the other tenant\'s retry did not wait for the hanging ones to time out')
  t.equal(hostileRx.ids.length, 4, 'the hanging tenant holds its share of the slots only')
  t.equal(queuedRetries(), 36, 'the other tenant\'s retry went ahead of the whole backlog')

  hostileRx.answer()
  otherRx.answer()
  await app.jobs.idle()
  t.equal(hostileRx.ids.length, 40, 'every held retry made, once')
  t.equal(app.outboxSqlite.prepare(`SELECT COUNT(*) FROM webhook_messages WHERE state = 'delivered'`).pluck().get(), 41)
})

t.test('one tenant\'s redeliveries to receivers that hang do not hold up another tenant\'s redelivery', async (t) => {
  // first attempts fail (500); the one retry is an hour away, so what reaches the receivers next is redeliveries
  const app = await build(t, { config: { allowPrivateUrls: true, webhookRetrySchedule: [3600] } })
  const hostileRx = await holdingReceiver(t, { failFirst: true })
  const otherRx = await holdingReceiver(t, { failFirst: true })
  const hostile = await signup(app)
  const other = await signup(app)
  const { hook: hostileHook, channel: hostileChannel } = await hookAndChannel(app, hostile, hostileRx.url)
  const { hook: otherHook, channel: otherChannel } = await hookAndChannel(app, other, otherRx.url)
  for (let i = 0; i < 10; i++) t.equal((await post(app, hostile, hostileChannel.id)).statusCode, 201)
  t.equal((await post(app, other, otherChannel.id)).statusCode, 201)
  const failed = async (u: typeof hostile, hookId: string, n: number) => {
    for (;;) {
      const list = (await deliveries(app, u, hookId)).filter((d) => !d.success)
      if (list.length >= n) return list
      await new Promise((r) => setTimeout(r, 10))
    }
  }
  const redeliver = (u: typeof hostile, hookId: string, deliveryId: string) => app.inject({ method: 'POST',
    url: `${BASE}/webhooks/${hookId}/deliveries/${deliveryId}/redeliver`, headers: ws(u) })
  for (const d of await failed(hostile, hostileHook.id, 10)) {
    t.equal((await redeliver(hostile, hostileHook.id, d.id)).statusCode, 202)
  }
  // the hostile tenant's redeliveries now hold every slot it may have
  await hostileRx.held(2)
  const queued = () => app.sqlite.prepare(`SELECT COUNT(*) FROM jobs WHERE type = 'webhook.redeliver'
    AND status = 'queued'`).pluck().get() as number
  while (queued() < 8) await new Promise((r) => setTimeout(r, 10))
  t.equal(queued(), 8, 'the rest of its 10 redeliveries wait')

  const [mine] = await failed(other, otherHook.id, 1)
  t.equal((await redeliver(other, otherHook.id, mine.id)).statusCode, 202)
  await otherRx.held(1)
  t.equal(hostileRx.givenUp(), 0, 'the other tenant\'s redelivery did not wait for the hanging ones to time out')
  t.equal(hostileRx.ids.length, 2, 'the hanging tenant holds its share of the slots only')
  t.equal(queued(), 8, 'the other tenant\'s redelivery went ahead of the whole backlog')
  // another organization cannot redeliver a delivery it does not own
  t.equal((await redeliver(other, hostileHook.id, mine.id)).statusCode, 404)

  hostileRx.answer()
  otherRx.answer()
  while (hostileRx.ids.length < 10 || queued() > 0) await new Promise((r) => setTimeout(r, 10))
  t.equal(hostileRx.ids.length, 10, 'every held redelivery made, once')
})
