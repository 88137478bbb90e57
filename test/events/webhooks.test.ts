import t from 'tap'
import { createHmac } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { loadConfig } from '../../src/config.js'
import { build, signup, addUser, createKey, tempDir } from '../helper.js'
import { loggerOptions } from '../../src/app.js'
import { receiver, BASE, ws, hookAndChannel, post, eventsToExpand, deliveries } from './webhook-helpers.js'

t.test('deliveries verify with the standardwebhooks library, and with X-Cairn-Signature, using the ' +
  'one secret string', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { hook, channel } = await hookAndChannel(app, u, `${rx.base}/ok`)
  const created = await app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers: ws(u),
    payload: { url: `${rx.base}/ok`, events: ['test.ping'] } })
  t.equal(created.headers['cache-control'], 'no-store', 'the response carrying a secret is not cached')

  const res = await post(app, u, channel.id, 'verify me ✓')
  t.equal(res.statusCode, 201)
  await rx.received(1)
  const d = rx.got[0]
  const wh = new Webhook(hook.signing_secret)
  const payload = wh.verify(d.raw.toString('utf8'), d.headers as Record<string, string>) as { event: string;
    data: { id: string; content: string } }
  t.equal(payload.event, 'message.created')
  t.equal(payload.data.id, res.json().data.id)
  t.equal(payload.data.content, 'verify me ✓')
  t.match(d.headers['webhook-id'], /^msg_[0-9a-f]{32}$/)
  t.ok(Math.abs(Number(d.headers['webhook-timestamp']) - Date.now() / 1000) < 300, 'unix seconds')
  t.match(d.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/, 'one signature while no rotation is under way')
  t.equal(d.headers['x-cairn-signature'], createHmac('sha256', hook.signing_secret).update(d.raw).digest('hex'),
    'the hex signature is kept')
  t.throws(() => new Webhook(`whsec_${'0'.repeat(64)}`).verify(d.raw.toString('utf8'),
    d.headers as Record<string, string>), 'another secret fails')
  const tampered = { ...d.headers, 'webhook-id': 'msg_other' } as unknown as Record<string, string>
  t.throws(() => wh.verify(d.raw.toString('utf8'), tampered), 'the id is signed')

  // the test ping carries the same headers
  const ping = await app.inject({ method: 'POST', url: `${BASE}/webhooks/${hook.id}/test`, headers: ws(u) })
  t.equal(ping.json().data.delivered, true)
  await rx.received(2)
  t.same(wh.verify(rx.got[1].raw.toString('utf8'), rx.got[1].headers as Record<string, string>),
    JSON.parse(rx.got[1].raw.toString()))
  t.equal(rx.got[1].headers['x-cairn-delivery'], ping.json().data.delivery.id)

  const list = await deliveries(app, u, hook.id)
  t.equal(list.length, 2)
  t.match(list[1],
    { message_id: d.headers['webhook-id'], attempt: 1, next_attempt_at: null, success: true,
      id: d.headers['x-cairn-delivery'] })
})

t.test('one outbox row per event in the message\'s transaction; no job row per webhook; the request never waits ' +
  'for a receiver', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { channel } = await hookAndChannel(app, u, `${rx.base}/hold`)
  for (let i = 0; i < 2; i++) await app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers: ws(u),
    payload: { url: `${rx.base}/hold`, events: ['message.created'] } })

  const count = (sql: string) => (app.sqlite.prepare(sql).pluck().get() as number)
  const inOutbox = (sql: string) => (app.outboxSqlite.prepare(sql).pluck().get() as number)
  const res = await post(app, u, channel.id)
  t.equal(res.statusCode, 201, 'answered while every receiver still holds its delivery')
  t.equal(count(`SELECT COUNT(*) FROM webhook_events`), 1, 'one outbox row for the event')
  t.equal(count(`SELECT COUNT(*) FROM jobs WHERE type != 'webhook.fanout'`), 0, 'no job per webhook')
  await rx.received(3)
  t.equal(inOutbox(`SELECT COUNT(*) FROM webhook_messages WHERE state = 'pending'`), 3,
    'expanded in the background to one message per webhook')
  rx.release()
  await app.jobs.idle()
  t.equal(inOutbox(`SELECT COUNT(*) FROM webhook_messages WHERE state = 'delivered'`), 3)
  t.equal(new Set(rx.got.map((g) => g.headers['webhook-id'])).size, 3, 'a message id per webhook')

  // the message and its event commit together: an outbox write that fails leaves no message either
  app.sqlite.exec(`CREATE TEMP TRIGGER outbox_broken BEFORE INSERT ON webhook_events BEGIN
    SELECT RAISE(ABORT, 'outbox unavailable'); END`)
  const failed = await post(app, u, channel.id, 'never stored')
  t.equal(failed.statusCode, 500)
  t.equal(count(`SELECT COUNT(*) FROM channel_messages WHERE content = 'never stored'`), 0,
    'no message without its event')
  app.sqlite.exec(`DROP TRIGGER outbox_broken`)

  // workspaces without a subscribed webhook write no outbox row at all
  const other = await signup(app)
  const ch2 = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: ws(other),
    payload: { name: 'quiet', type: 'public' } })).json().data
  t.equal((await post(app, other, ch2.id)).statusCode, 201)
  t.equal(count(`SELECT COUNT(*) FROM webhook_events`), 1)
})

t.test('a receiver that holds its deliveries does not hold up another webhook\'s events', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const slow = await signup(app)
  const fast = await signup(app)
  const a = await hookAndChannel(app, slow, `${rx.base}/hold`)
  const b = await hookAndChannel(app, fast, `${rx.base}/ok`)
  await post(app, slow, a.channel.id)
  await rx.received(1)
  await post(app, fast, b.channel.id)
  await rx.received(2)
  t.equal(rx.got[1].path, '/ok')
  t.equal(rx.dropped(), 0, 'delivered while the slow attempt is still in flight')
  rx.release()
  await app.jobs.idle()
  t.same((await deliveries(app, slow, a.hook.id)).map((d) => d.success), [true])
})

t.test('a test ping in flight is sent once: a fan-out running meanwhile leaves its message alone', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const u = await signup(app)
  const held = (await app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers: ws(u),
    payload: { url: `${rx.base}/hold`, events: ['test.ping'] } })).json().data
  const { channel } = await hookAndChannel(app, u, `${rx.base}/ok`)
  const ping = app.inject({ method: 'POST', url: `${BASE}/webhooks/${held.id}/test`, headers: ws(u) })
  await rx.received(1)
  // two events fanned out (their messages read with whatever is pending) while the ping's attempt is held
  await post(app, u, channel.id, 'one')
  await rx.received(2)
  await post(app, u, channel.id, 'two')
  await rx.received(3)
  rx.release()
  t.equal((await ping).json().data.delivered, true)
  await app.jobs.idle()
  t.same(rx.got.map((r) => r.path).sort(), ['/hold', '/ok', '/ok'], 'one ping, two messages')
  t.same((await deliveries(app, u, held.id)).map((d) => [d.attempt, d.success, d.event_type]),
    [[1, true, 'test.ping']])
  t.equal(app.outboxSqlite.prepare(`SELECT count(*) FROM webhook_messages WHERE state = 'pending'`).pluck().get(), 0)
})

t.test('retries follow the configured schedule with the same webhook-id; attempts are listed; ' +
  'exhausted messages stop', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true, webhookRetrySchedule: [0.05, 0.1, 0.1] } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { hook, channel } = await hookAndChannel(app, u, `${rx.base}/flaky`)
  const dead = (await app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers: ws(u),
    payload: { url: `${rx.base}/fail`, events: ['message.created'] } })).json().data
  await post(app, u, channel.id)
  await rx.received(7) // flaky: 2 failures and a success; fail: 1 + 3 retries
  await app.jobs.idle()

  const flaky = rx.got.filter((g) => g.path === '/flaky')
  t.equal(flaky.length, 3)
  t.equal(new Set(flaky.map((g) => g.headers['webhook-id'])).size, 1, 'one webhook-id for every attempt')
  t.equal(new Set(flaky.map((g) => g.headers['x-cairn-delivery'])).size, 3, 'a delivery id per attempt')
  const wh = new Webhook(hook.signing_secret)
  for (const g of flaky) t.ok(wh.verify(g.raw.toString(), g.headers as Record<string, string>),
    'each attempt is signed anew')
  const list = (await deliveries(app, u, hook.id)).reverse()
  t.same(list.map((d) => [d.attempt, d.success, d.status_code]), [[1, false, 503], [2, false, 503], [3, true, 200]])
  t.ok(list[0].next_attempt_at && list[1].next_attempt_at, 'failed attempts say when the next one is due')
  t.equal(list[2].next_attempt_at, null)
  t.ok(Date.parse(list[0].next_attempt_at!) >=
    Date.parse((list[0] as unknown as { created_at: string }).created_at) + 50, 'after the first delay')

  const deadList = (await deliveries(app, u, dead.id)).reverse()
  t.same(deadList.map((d) => d.attempt), [1, 2, 3, 4], 'the first attempt and one per entry of the schedule')
  t.same(deadList.map((d) => d.next_attempt_at === null), [false, false, false, true], 'the last one announces none')
  t.equal(rx.got.filter((g) => g.path === '/fail').length, 4, 'nothing after the schedule ends')
  t.equal(app.outboxSqlite.prepare(`SELECT state FROM webhook_messages WHERE webhook_id = ?`).pluck().get(dead.id),
    'failed')
})

t.test('a retry job whose seq names another message now (an outbox file made anew) attempts nothing', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true, webhookRetrySchedule: [3600] } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { channel } = await hookAndChannel(app, u, `${rx.base}/fail`)
  await post(app, u, channel.id)
  await rx.received(1)
  const retryJob = () => app.sqlite.prepare(`SELECT id, payload FROM jobs WHERE type = 'webhook.retry'`)
    .get() as { id: string; payload: string } | undefined
  for (let i = 0; i < 1000 && !retryJob(); i++) await new Promise((r) => setTimeout(r, 10))
  const queued = retryJob()!
  const payload = JSON.parse(queued.payload) as { seq: number; retry: number; messageId: string }
  t.match(payload.messageId, /^msg_/, 'the job names its message')
  // due in an hour: this test runs it now, once under another message's id, then under its own
  app.sqlite.prepare('DELETE FROM jobs WHERE id = ?').run(queued.id)
  app.jobs.enqueue('webhook.retry', { ...payload, messageId: 'msg_someone_else' })
  await app.jobs.idle()
  t.equal(rx.got.length, 1, 'nothing attempted')
  app.jobs.enqueue('webhook.retry', payload)
  await rx.received(2)
  t.equal(rx.got[1].headers['webhook-id'], payload.messageId, 'its own message is retried')
})

t.test('retries survive a restart; events written before a crash are delivered after it', async (t) => {
  const dataDir = tempDir(t)
  const rx = await receiver(t)
  const config = { allowPrivateUrls: true, webhookRetrySchedule: [0.3] }
  const first = await build(t, { dataDir, config })
  const u = await signup(first)
  const { hook, channel } = await hookAndChannel(first, u, `${rx.base}/flaky`)
  await post(first, u, channel.id)
  await rx.received(1)
  // the failed first attempt is recorded with its retry queued; the process stops before the retry is due
  // (attempts are recorded in batches a few ms apart: wait for this one's)
  for (let i = 0; i < 1000 &&
    !first.sqlite.prepare(`SELECT 1 FROM jobs
      WHERE type = 'webhook.retry'`).get(); i++) await new Promise((r) => setTimeout(r, 10))
  t.ok(first.sqlite.prepare(`SELECT 1 FROM jobs WHERE type = 'webhook.retry'`).get(), 'the retry is a queued job')
  // a second event is written while background work is stopped, and the process ends without fanning it out
  await first.jobs.stop()
  t.equal((await post(first, u, channel.id, 'written before the crash')).statusCode, 201)
  first.sqlite.prepare(`DELETE FROM jobs WHERE type = 'webhook.fanout'`).run()
  await first.close()

  const second = await build(t, { dataDir, config })
  await rx.received(3) // the retry (fails: flaky's second answer) and the new event's first attempt (succeeds)
  await second.jobs.idle()
  const byId = new Map<string, string[]>()
  for (const g of rx.got) byId.set(g.headers['webhook-id'] as string,
    [...(byId.get(g.headers['webhook-id'] as string) ?? []), JSON.parse(g.raw.toString()).data.content])
  t.equal(byId.size, 2, 'two events, each with its own webhook-id')
  t.ok([...byId.values()].some((contents) => contents.includes('written before the crash')),
    'the event written before the crash was delivered')
  const list = await deliveries(second, u, hook.id)
  t.ok(list.some((d) => d.success), 'delivered after the restart')
  t.equal(eventsToExpand(second), 0, 'every event expanded')
})

t.test('redelivery: same webhook-id, a new delivery id, 202; rights and tenants', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { hook, channel } = await hookAndChannel(app, u, `${rx.base}/ok`)
  await post(app, u, channel.id)
  await rx.received(1)
  await app.jobs.idle()
  const original = (await deliveries(app, u, hook.id))[0]
  const url = `${BASE}/webhooks/${hook.id}/deliveries/${original.id}/redeliver`

  const res = await app.inject({ method: 'POST', url, headers: ws(u) })
  t.equal(res.statusCode, 202)
  t.same(Object.keys(res.json()), ['success', 'data'])
  const newId = res.json().data.id
  await rx.received(2)
  t.equal(rx.got[1].headers['webhook-id'], rx.got[0].headers['webhook-id'], 'the same message id')
  t.equal(rx.got[1].headers['x-cairn-delivery'], newId, 'the new attempt\'s id')
  t.same(rx.got[1].raw, rx.got[0].raw, 'the same body')
  await app.jobs.idle()
  const list = await deliveries(app, u, hook.id)
  t.match(list.find((d) => d.id === newId),
    { attempt: 2, success: true, next_attempt_at: null, message_id: original.message_id })

  // another webhook's delivery, an unknown one, another tenant, a member, API keys
  const otherHook = (await app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers: ws(u),
    payload: { url: `${rx.base}/ok`, events: ['test.ping'] } })).json().data
  t.equal((await app.inject({ method: 'POST',
    url: `${BASE}/webhooks/${otherHook.id}/deliveries/${original.id}/redeliver`, headers: ws(u) })).statusCode, 404)
  t.equal((await app.inject({ method: 'POST',
    url: `${BASE}/webhooks/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`,
    headers: ws(u) })).statusCode, 404)
  const stranger = await signup(app)
  t.equal((await app.inject({ method: 'POST', url, headers: ws(stranger) })).statusCode, 404)
  const member = await addUser(app, u)
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${u.workspaceId}/members`, headers: u.auth,
    payload: { userId: member.userId, role: 'member' } })
  t.equal((await app.inject({ method: 'POST', url,
    headers: { ...member.auth, 'x-workspace-id': u.workspaceId } })).statusCode, 403)
  const read = (await createKey(app, u, ['read'], { workspaceId: u.workspaceId })).key
  const write = (await createKey(app, u, ['write'], { workspaceId: u.workspaceId })).key
  t.equal((await app.inject({ method: 'POST', url, headers: { 'x-api-key': read } })).statusCode, 403)
  t.equal((await app.inject({ method: 'POST', url, headers: { 'x-api-key': write } })).statusCode, 202)
  await app.jobs.idle()
  t.equal(rx.got.length, 3, 'no other redelivery was sent')
})

t.test('secret rotation: both signatures for 24 hours, then only the new one; never logged', async (t) => {
  const lines: string[] = []
  const app = await build(t,
    { config: { allowPrivateUrls: true },
      logger: loggerOptions('trace', { write: (line: string) => { lines.push(line) } }) })
  const rx = await receiver(t)
  const u = await signup(app)
  const { hook, channel } = await hookAndChannel(app, u, `${rx.base}/ok`)
  const res = await app.inject({ method: 'POST', url: `${BASE}/webhooks/${hook.id}/rotate-secret`, headers: ws(u) })
  t.equal(res.statusCode, 201)
  t.equal(res.headers['cache-control'], 'no-store')
  const secret = res.json().data.signing_secret
  t.match(secret, /^whsec_[0-9a-f]{64}$/)
  t.not(secret, hook.signing_secret)

  await post(app, u, channel.id)
  await rx.received(1)
  const d = rx.got[0]
  const headers = d.headers as Record<string, string>
  t.equal(headers['webhook-signature'].split(' ').length, 2, 'two signatures, space-separated')
  t.ok(new Webhook(secret).verify(d.raw.toString(), headers), 'the new secret verifies')
  t.ok(new Webhook(hook.signing_secret).verify(d.raw.toString(), headers), 'the old secret still verifies')
  t.equal(headers['x-cairn-signature'], createHmac('sha256', secret).update(d.raw).digest('hex'),
    'the hex signature uses the new secret')

  // 24 hours later
  app.sqlite.prepare(`UPDATE webhooks SET previous_secret_expires_at = ?
    WHERE id = ?`).run(new Date(Date.now() - 1000).toISOString(), hook.id)
  await post(app, u, channel.id)
  await rx.received(2)
  const later = rx.got[1].headers as Record<string, string>
  t.equal(later['webhook-signature'].split(' ').length, 1)
  t.ok(new Webhook(secret).verify(rx.got[1].raw.toString(), later))
  t.throws(() => new Webhook(hook.signing_secret).verify(rx.got[1].raw.toString(), later),
    'the old secret no longer verifies')

  const stranger = await signup(app)
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/webhooks/${hook.id}/rotate-secret`,
    headers: ws(stranger) })).statusCode, 404)
  const write = (await createKey(app, u, ['write'], { workspaceId: u.workspaceId })).key
  const exec = (await createKey(app, u, ['execute'], { workspaceId: u.workspaceId })).key
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/webhooks/${hook.id}/rotate-secret`,
    headers: { 'x-api-key': exec } })).statusCode, 403)
  const byKey = await app.inject({ method: 'POST', url: `${BASE}/webhooks/${hook.id}/rotate-secret`,
    headers: { 'x-api-key': write } })
  t.equal(byKey.statusCode, 201)
  await app.jobs.idle()
  const logged = lines.join('\n')
  for (const s of [hook.signing_secret, secret,
    byKey.json().data.signing_secret]) t.notOk(logged.includes(s.slice(6)), 'no secret in the log')
})

t.test('an endpoint failing every attempt for 5 days is set inactive; switching it on again starts over', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true, webhookRetrySchedule: [0.05] } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { hook, channel } = await hookAndChannel(app, u, `${rx.base}/fail`)
  await post(app, u, channel.id)
  await rx.received(2)
  await app.jobs.idle()
  const row = () => app.sqlite.prepare(`SELECT active, failing_since FROM webhooks
    WHERE id = ?`).get(hook.id) as { active: number; failing_since: string | null }
  t.equal(row().active, 1, 'failing for less than 5 days: still active')
  t.ok(row().failing_since)

  app.sqlite.prepare(`UPDATE webhooks SET failing_since = ?
    WHERE id = ?`).run(new Date(Date.now() - 5 * 86_400_000 - 1000).toISOString(), hook.id)
  await post(app, u, channel.id)
  await rx.received(3)
  await app.jobs.idle()
  t.equal(row().active, 0, 'set inactive')
  t.equal((await deliveries(app, u, hook.id))[0].next_attempt_at, null, 'no retry for an inactive endpoint')
  t.equal(rx.got.length, 3)
  await post(app, u, channel.id)
  await app.jobs.idle()
  t.equal(rx.got.length, 3, 'an inactive endpoint gets nothing')
  const listed = (await app.inject({ url: `${BASE}/webhooks`, headers: ws(u) })).json().data
  t.equal(listed[0].active, false)

  await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${hook.id}`, headers: ws(u), payload: { active: true } })
  t.same(row(), { active: 1, failing_since: null })

  // a success clears the failure streak
  await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${hook.id}`, headers: ws(u),
    payload: { url: `${rx.base}/ok` } })
  app.sqlite.prepare(`UPDATE webhooks SET failing_since = ?
    WHERE id = ?`).run(new Date(Date.now() - 86_400_000).toISOString(), hook.id)
  await post(app, u, channel.id)
  await rx.received(4)
  await app.jobs.idle()
  t.same(row(), { active: 1, failing_since: null })
})

t.test('CAIRN_WEBHOOK_RETRY_SCHEDULE', async (t) => {
  t.same(loadConfig({}).webhookRetrySchedule, [5, 300, 1800, 7200, 18000, 36000, 36000],
    'Standard Webhooks\' schedule by default')
  t.same(loadConfig({ CAIRN_WEBHOOK_RETRY_SCHEDULE: '0.5, 2,10' }).webhookRetrySchedule, [0.5, 2, 10])
  for (const bad of ['', 'soon', '1,,2', '-1',
    '1;2']) t.throws(() => loadConfig({ CAIRN_WEBHOOK_RETRY_SCHEDULE: bad }), bad)
})
