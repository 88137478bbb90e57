import t, { type Test } from 'tap'
import http from 'node:http'
import fs from 'node:fs'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { Worker } from 'node:worker_threads'
import { createHmac } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { build, signup, addUser, createKey, tempDir, type TestUser } from '../helper.js'
import { loggerOptions, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { projectRoot } from '../../src/db/index.js'

interface Received { path: string; headers: http.IncomingHttpHeaders; raw: Buffer }

/**
 * A real receiver on 127.0.0.1. Paths: /ok answers 204; /fail answers 500; /flaky fails its first two
 * requests, then answers 200; /hold keeps each request open until release() is called.
 */
async function receiver(t: Test) {
  const got: Received[] = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const held: http.ServerResponse[] = []
  let flaky = 0
  let droppedHolds = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      got.push({ path: req.url!, headers: req.headers, raw: Buffer.concat(chunks) })
      for (const w of waiters.filter((w) => got.length >= w.n)) { waiters.splice(waiters.indexOf(w), 1); w.resolve() }
      if (req.url === '/ok') res.writeHead(204).end()
      else if (req.url === '/fail') res.writeHead(500).end('down')
      else if (req.url === '/flaky') res.writeHead(++flaky <= 2 ? 503 : 200).end()
      else if (req.url === '/hold') {
        held.push(res); res.on('close',
          () => { if (!res.writableEnded) droppedHolds++ })
      } else res.writeHead(404).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    /** resolves once n requests in all have arrived */
    received: (n: number) => new Promise<void>((resolve) => {
      if (got.length >= n) resolve(); else waiters.push({ n,
        resolve })
    }),
    release: () => { for (const r of held.splice(0)) r.writeHead(200).end() },
    /** held requests the sender gave up on */
    dropped: () => droppedHolds
  }
}

const BASE = '/api/v2/developer'
const ws = (u: TestUser) => ({ ...u.auth, 'x-workspace-id': u.workspaceId })

async function hookAndChannel(app: App, u: TestUser, url: string, events = ['message.created']) {
  const hook = (await app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers: ws(u),
    payload: { url, events } })).json().data
  const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: ws(u),
    payload: { name: 'general', type: 'public' } })).json().data
  return { hook, channel }
}
const post = (app: App, u: TestUser, channelId: string, content = 'hello') =>
  app.inject({ method: 'POST', url: '/api/v2/messages', headers: u.auth, payload: { channel_id: channelId, content } })
/** outbox events to be fanned out that the outbox thread has not expanded yet */
const eventsToExpand = (app: App) => app.sqlite.prepare(`SELECT COUNT(*) FROM webhook_events
  WHERE expanded = 0 AND seq > ?`).pluck().get(app.outboxSqlite.prepare(`SELECT expanded_through FROM outbox_state`)
  .pluck().get()) as number
const deliveries = async (app: App, u: TestUser, hookId: string) =>
  (await app.inject({ url: `${BASE}/webhooks/${hookId}/deliveries`, headers: ws(u) })).json().data as Array<{
    id: string; message_id: string; attempt: number; next_attempt_at: string | null; success: boolean;
    status_code: number; event_type: string
  }>

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

t.test('the README\'s receiver.mjs verifies real deliveries, refuses stale timestamps and ' +
  'skips duplicates', async (t) => {
  const readme = fs.readFileSync(path.join(projectRoot(), 'README.md'), 'utf8')
  const code = /```js\n(\/\/ receiver\.mjs\n[\s\S]*?)```/.exec(readme)?.[1]
  if (!code) throw new Error('no receiver.mjs example in the README')
  t.ok(code.includes('.listen(8080)'))
  const dir = tempDir(t)
  const file = path.join(dir, 'receiver.mjs')
  fs.writeFileSync(file,
    code.replace('.listen(8080)', `.listen(0, '127.0.0.1', function () { console.log('port', this.address().port) })`))

  const app = await build(t, { config: { allowPrivateUrls: true } })
  const u = await signup(app)
  const hook = (await app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers: ws(u), payload: { url: 'http://127.0.0.1:1/', events: ['message.created'] } })).json().data
  const child = spawn(process.execPath, [file],
    { env: { ...process.env, CAIRN_WEBHOOK_SECRET: hook.signing_secret }, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill() })
  let out = ''
  const lineWaiters: Array<() => void> = []
  child.stdout.on('data', (c: Buffer) => { out += c; for (const w of lineWaiters.splice(0)) w() })
  const until = async (check: () => boolean) => { while (!check()) await new Promise<void>((r) => lineWaiters.push(r)) }
  await until(() => /port \d+/.test(out))
  const port = Number(/port (\d+)/.exec(out)![1])
  await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${hook.id}`, headers: ws(u), payload: { url: `http://127.0.0.1:${port}/` } })
  const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: ws(u),
    payload: { name: 'general', type: 'public' } })).json().data

  await post(app, u, channel.id, 'seen by the receiver')
  await until(() => out.includes('seen by the receiver'))
  await app.jobs.idle()
  const first = (await deliveries(app, u, hook.id))[0]
  t.match(first, { success: true, status_code: 204 })

  // a redelivery (same webhook-id) is acknowledged but not handled twice
  await app.inject({ method: 'POST', url: `${BASE}/webhooks/${hook.id}/deliveries/${first.id}/redeliver`,
    headers: ws(u) })
  await app.jobs.idle()
  t.match((await deliveries(app, u, hook.id))[0], { attempt: 2, success: true, status_code: 204 })
  t.equal(out.split('seen by the receiver').length - 1, 1, 'handled once')

  // a correctly signed request with an old timestamp, and one with a wrong signature
  const send = async (timestamp: number, secret: string) => {
    const body = JSON.stringify({ event: 'message.created', timestamp: new Date().toISOString(),
      data: { content: 'forged' } })
    const id = `msg_${timestamp}`
    const signature = 'v1,' +
      createHmac('sha256', Buffer.from(secret.slice(6), 'base64')).update(`${id}.${timestamp}.${body}`).digest('base64')
    return (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body, headers: { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature } })).status
  }
  const now = Math.floor(Date.now() / 1000)
  t.equal(await send(now - 6 * 60, hook.signing_secret), 400, 'older than 5 minutes')
  t.equal(await send(now, `whsec_${'1'.repeat(64)}`), 401, 'wrong signature')
  t.equal(await send(now, hook.signing_secret), 204, 'a fresh, signed request is accepted')
  await until(() => out.includes('forged'))
  t.equal(out.split('forged').length - 1, 1, 'only the valid request was handled')
})

t.test('a delivery job queued by the previous version is sent as a message of its own', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { hook } = await hookAndChannel(app, u, `${rx.base}/ok`)
  app.jobs.enqueue('webhook.deliver',
    { webhookId: hook.id, event: 'message.created', data: { id: 'm-old', content: 'queued before the upgrade' } })
  await rx.received(1)
  t.ok(new Webhook(hook.signing_secret).verify(rx.got[0].raw.toString(), rx.got[0].headers as Record<string, string>))
  t.equal(JSON.parse(rx.got[0].raw.toString()).data.content, 'queued before the upgrade')
  await app.jobs.idle()
  t.match((await deliveries(app, u, hook.id))[0],
    { attempt: 1, success: true, message_id: rx.got[0].headers['webhook-id'] })
})

t.test('a delivery job of the previous version stopped mid-way makes its event and message once', async (t) => {
  const dataDir = tempDir(t)
  const rx = await receiver(t)
  const config = { allowPrivateUrls: true }
  const first = await build(t, { dataDir, config })
  const u = await signup(first)
  const { hook } = await hookAndChannel(first, u, `${rx.base}/ok`)
  // the job's first run made its event (the seq in its payload, one transaction), then the process stopped: once
  // before its message was added, once after (the message delivered already)
  await first.jobs.stop()
  const now = new Date().toISOString()
  const insertEvent = first.sqlite.prepare(`INSERT INTO webhook_events (workspace_id, event, body, expanded,
    created_at) VALUES (?, 'message.created', ?, 1, ?)`)
  const addEvent = (content: string) => Number(insertEvent.run(hook.workspace_id ?? u.workspaceId,
    JSON.stringify({ event: 'message.created', timestamp: now, data: { content } }), now).lastInsertRowid)
  const addJob = (id: string, eventSeq: number, content: string) => first.sqlite.prepare(`INSERT INTO jobs (id, type,
    payload, status, attempts, max_attempts, run_at, created_at, updated_at)
    VALUES (?, 'webhook.deliver', ?, 'running', 1, 1, 0, ?, ?)`).run(id, JSON.stringify({ webhookId: hook.id,
    event: 'message.created', data: { content }, eventSeq }), now, now)
  const beforeMessage = addEvent('stopped before its message')
  addJob('legacy-1', beforeMessage, 'stopped before its message')
  const afterMessage = addEvent('stopped after its message')
  addJob('legacy-2', afterMessage, 'stopped after its message')
  first.outboxSqlite.prepare(`INSERT INTO webhook_messages (id, event_seq, webhook_id, state, attempts, created_at,
    updated_at) VALUES ('msg_delivered_before', ?, ?, 'delivered', 1, ?, ?)`).run(afterMessage, hook.id, now, now)
  const events = () => first.sqlite.prepare(`SELECT count(*) FROM webhook_events`).pluck().get()
  const eventsBefore = events()
  await first.close()

  const second = await build(t, { dataDir, config })
  await rx.received(1)
  await second.jobs.idle()
  t.equal(second.sqlite.prepare(`SELECT count(*) FROM jobs WHERE type = 'webhook.deliver'`).pluck().get(), 0,
    'both jobs ran to their end')
  t.equal(second.sqlite.prepare(`SELECT count(*) FROM webhook_events`).pluck().get(), eventsBefore,
    'no event made again')
  const messages = second.outboxSqlite.prepare(`SELECT event_seq FROM webhook_messages WHERE webhook_id = ?
    ORDER BY event_seq`).pluck()
  t.same(messages.all(hook.id), [beforeMessage, afterMessage], 'one message each')
  t.equal(rx.got.length, 1, 'one delivery')
  t.equal(JSON.parse(rx.got[0].raw.toString()).data.content, 'stopped before its message')
})

t.test('the delivery thread runs nicer than the request thread (Linux)', { skip: process.platform !== 'linux' },
  async (t) => {
    const app = await build(t, { config: { allowPrivateUrls: true } })
    const rx = await receiver(t)
    const u = await signup(app)
    const niceness = () => new Map(fs.readdirSync('/proc/self/task').map((tid) => {
      const fields = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')
      return [tid, Number(fields[16])] as const // field 19 of stat: nice
    }))
    const before = niceness()
    const { channel } = await hookAndChannel(app, u, `${rx.base}/ok`)
    await post(app, u, channel.id)
    await rx.received(1)
    const own = before.get(String(process.pid))!
    const added = [...niceness()].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice)
    t.ok(added.includes(Math.min(19, own + 10)), `a new thread at niceness ${own + 10} (new threads: ${added})`)
    t.equal(niceness().get(String(process.pid)), own, 'the request thread keeps its priority')
  })

t.test('a stream of events is fanned out by one run of the fan-out job', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { channel } = await hookAndChannel(app, u, `${rx.base}/ok`)
  let runs = 0
  const enqueue = app.jobs.enqueue.bind(app.jobs)
  app.jobs.enqueue = ((type, payload, options) => {
    if (type === 'webhook.fanout') runs++
    return enqueue(type, payload, options)
  }) as typeof app.jobs.enqueue
  // 10 events 20 ms apart (50 a second): each one's delivery ends long before the next event
  for (let i = 1; i <= 10; i++) {
    await post(app, u, channel.id, `m${i}`)
    await rx.received(i)
    await new Promise((r) => setTimeout(r, 20))
  }
  await app.jobs.idle()
  t.equal(rx.got.length, 10)
  t.equal(runs, 1, 'one job for the whole stream')
  // ids begin with their time, so that their unique indexes grow at the end: later events sort after earlier ones
  const ids = rx.got.map((r) => r.headers['webhook-id'] as string)
  t.same([...ids].sort(), ids)
  for (const id of ids) t.match(id, /^msg_[0-9a-f]{32}$/)
  const hook = (await app.inject({ url: `${BASE}/webhooks`, headers: ws(u) })).json().data[0] as { id: string }
  const made = await deliveries(app, u, hook.id)
  t.equal(made.length, 10)
  for (const d of made) t.match(d.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  t.same(made.map((d) => d.id), [...made.map((d) => d.id)].sort().reverse(), 'newest first, in id order too')
})

t.test('an event wakes the fan-out after its request has answered, not in the microtasks before the answer is ' +
  'written', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { channel } = await hookAndChannel(app, u, `${rx.base}/ok`)
  // the wake of a waiting run (a message to the outbox thread), or a new run's job
  let notified = 0
  const postMessage = Worker.prototype.postMessage
  Worker.prototype.postMessage = function (this: Worker, ...args: Parameters<Worker['postMessage']>) {
    if ((args[0] as { wake?: true }).wake) notified++
    return postMessage.apply(this, args)
  }
  t.teardown(() => { Worker.prototype.postMessage = postMessage })
  const enqueue = app.jobs.enqueue.bind(app.jobs)
  app.jobs.enqueue = ((type, payload, options) => {
    if (type === 'webhook.fanout') notified++
    return enqueue(type, payload, options)
  }) as typeof app.jobs.enqueue
  for (const [i, content] of ['first', 'second'].entries()) {
    const res = await post(app, u, channel.id, content)
    t.equal(res.statusCode, 201)
    t.equal(notified, i, `${content}: not notified yet when the answer arrives`)
    await rx.received(i + 1)
    t.equal(notified, i + 1, `${content}: notified once after it`)
  }
})

t.test('the fan-out, its attempts and their recording run on the outbox thread\'s own connection: the request ' +
  'thread\'s writes only the event', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true, webhookRetrySchedule: [0.05] } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { hook, channel } = await hookAndChannel(app, u, `${rx.base}/ok`)
  const failing = (await app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers: ws(u),
    payload: { url: `${rx.base}/fail`, events: ['message.created'] } })).json().data
  // temporary triggers belong to the connection that makes them: these refuse the request thread's writes only (to
  // cairn.db and to the outbox file)
  const refused = [[app.outboxSqlite, 'webhook_messages', 'INSERT'], [app.outboxSqlite, 'webhook_messages', 'UPDATE'],
    [app.outboxSqlite, 'webhook_deliveries', 'INSERT'], [app.sqlite, 'webhook_events', 'UPDATE'],
    [app.sqlite, 'webhooks', 'UPDATE']] as const
  for (const [connection, table, op] of refused) {
    connection.exec(`CREATE TEMP TRIGGER not_here_${table}_${op} BEFORE ${op} ON ${table} BEGIN
      SELECT RAISE(ABORT, 'written on the request thread'); END`)
  }
  for (let i = 0; i < 3; i++) t.equal((await post(app, u, channel.id, `m${i}`)).statusCode, 201)
  await rx.received(9) // 3 to /ok, 3 first attempts and 3 retries to /fail
  await app.jobs.idle()
  t.same((await deliveries(app, u, hook.id)).map((d) => d.success), [true, true, true], 'recorded')
  t.same((await deliveries(app, u, failing.id)).map((d) => d.attempt).sort(), [1, 1, 1, 2, 2, 2],
    'the failed attempts recorded, their retries queued and made')
  t.equal(eventsToExpand(app), 0, 'every event expanded')
  for (const connection of [app.sqlite, app.outboxSqlite]) {
    for (const name of connection.prepare(`SELECT name FROM sqlite_temp_master WHERE type = 'trigger'`).pluck()
      .all()) connection.exec(`DROP TRIGGER ${name as string}`)
  }
})

t.test('a deleted webhook\'s messages and delivery records leave the outbox file; retention removes old records ' +
  'and the events no message waits on', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const u = await signup(app)
  const { hook, channel } = await hookAndChannel(app, u, `${rx.base}/ok`)
  const kept = (await app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers: ws(u),
    payload: { url: `${rx.base}/ok`, events: ['message.created'] } })).json().data
  await post(app, u, channel.id)
  await rx.received(2)
  await app.jobs.idle()
  const rowsOf = (id: string) => app.outboxSqlite.prepare(`SELECT (SELECT COUNT(*) FROM webhook_messages
    WHERE webhook_id = @id) || '/' || (SELECT COUNT(*) FROM webhook_deliveries WHERE webhook_id = @id)`).pluck()
    .get({ id })
  t.equal(rowsOf(hook.id), '1/1', 'a message and its delivery')
  t.equal((await app.inject({ method: 'DELETE', url: `${BASE}/webhooks/${hook.id}`, headers: ws(u) })).statusCode, 200)
  // removed by the outbox thread, the outbox file's writer
  for (let i = 0; i < 1000 && rowsOf(hook.id) !== '0/0'; i++) await new Promise((r) => setTimeout(r, 10))
  t.equal(rowsOf(hook.id), '0/0', 'the deleted webhook\'s rows are gone')
  t.equal(rowsOf(kept.id), '1/1', 'the other webhook\'s stay')

  // everything so far is past retention; a new event, not delivered yet (its receiver holds it), is not
  const old = '2000-01-01T00:00:00.000Z'
  app.sqlite.prepare('UPDATE webhook_events SET created_at = ?').run(old)
  app.outboxSqlite.prepare('UPDATE webhook_messages SET created_at = ?').run(old)
  app.outboxSqlite.prepare('UPDATE webhook_deliveries SET created_at = ?').run(old)
  await app.inject({ method: 'PATCH', url: `${BASE}/webhooks/${kept.id}`, headers: ws(u),
    payload: { url: `${rx.base}/hold` } })
  await post(app, u, channel.id, 'held')
  await rx.received(3)
  // held in flight, then old too: its event stays while its message waits
  app.sqlite.prepare('UPDATE webhook_events SET created_at = ?').run(old)
  await app.runMaintenance()
  t.same(app.sqlite.prepare('SELECT json_extract(body, \'$.data.content\') FROM webhook_events').pluck().all(),
    ['held'], 'the delivered event went; the one whose message waits stays')
  t.equal(rowsOf(kept.id), '1/0', 'the delivered message and its delivery record went')
  rx.release()
  await app.jobs.idle()
  t.equal(rowsOf(kept.id), '1/1')

  // more than one chunk of records (2,000 a statement) past retention
  const record = app.outboxSqlite.prepare(`INSERT INTO webhook_deliveries (id, webhook_id, event_type, status_code,
    success, latency_ms, request_body, response_body, created_at) VALUES (?, ?, 'message.created', 204, 1, 1, '{}',
    '', ?)`)
  app.outboxSqlite.transaction(() => { for (let i = 0; i < 4500; i++) record.run(`old-${i}`, kept.id, old) })()
  t.equal(rowsOf(kept.id), '1/4501')
  await app.runMaintenance()
  t.equal(rowsOf(kept.id), '0/1', 'every old record went, and the held event\'s message, delivered since; the ' +
    'new delivery record stays')

  // an event with more messages than a statement removes (one per webhook of its workspace), past retention
  const event = Number(app.sqlite.prepare(`INSERT INTO webhook_events (workspace_id, event, body, expanded, created_at)
    VALUES (?, 'message.created', '{}', 1, ?)`).run(u.workspaceId, old).lastInsertRowid)
  const message = app.outboxSqlite.prepare(`INSERT INTO webhook_messages (id, event_seq, webhook_id, state, created_at,
    updated_at) VALUES (?, ?, ?, 'delivered', ?, ?)`)
  app.outboxSqlite.transaction(() => {
    for (let i = 0; i < 4500; i++) message.run(`old-${i}`, event, kept.id, old, old)
  })()
  const messagesOf = app.outboxSqlite.prepare('SELECT COUNT(*) FROM webhook_messages WHERE event_seq = ?').pluck()
  t.equal(messagesOf.get(event), 4500)
  await app.runMaintenance()
  t.equal(messagesOf.get(event), 0, 'every one of its messages went, 2,000 a statement')
  t.equal(app.sqlite.prepare('SELECT COUNT(*) FROM webhook_events WHERE seq = ?').pluck().get(event), 0,
    'and then the event')
})

t.test('signing secrets are sealed at rest: cairn.db never holds them; secrets written in clear by an earlier ' +
  'version are sealed at start; a data dir whose webhook-key changed fails the attempt, not the process',
async (t) => {
  const dataDir = tempDir(t)
  const rx = await receiver(t)
  const config = { allowPrivateUrls: true, webhookRetrySchedule: Array<number>(100).fill(0.2) }
  const first = await build(t, { dataDir, config })
  const u = await signup(first)
  const { hook, channel } = await hookAndChannel(first, u, `${rx.base}/ok`)
  const rotated = (await first.inject({ method: 'POST', url: `${BASE}/webhooks/${hook.id}/rotate-secret`,
    headers: ws(u) })).json().data.signing_secret as string
  t.match(rotated, /^whsec_/)
  const bytes = () => Buffer.concat(['cairn.db', 'cairn.db-wal'].map((f) => path.join(dataDir, f))
    .filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)))
  for (const secret of [hook.signing_secret, rotated]) {
    t.notOk(bytes().includes(secret), 'neither secret is in the database file or its WAL')
    t.notOk(bytes().includes(secret.slice('whsec_'.length)), 'nor its key part')
  }
  t.equal(fs.statSync(path.join(dataDir, 'webhook-key')).mode & 0o777, 0o600, 'the key file is its user\'s only')
  await post(first, u, channel.id, 'sealed')
  await rx.received(1)
  // recorded before the process stops (else it is sent again after the restart)
  const recorded = async (app: App, n: number) => {
    for (let i = 0; i < 1000 && (await deliveries(app, u, hook.id)).filter((d) => d.success).length < n; i++) {
      await new Promise((r) => setTimeout(r, 10))
    }
  }
  await recorded(first, 1)
  for (const secret of [rotated, hook.signing_secret]) {
    t.ok(new Webhook(secret).verify(rx.got[0].raw.toString('utf8'), rx.got[0].headers as Record<string, string>),
      'both signatures verify during the rotation')
  }
  // as an earlier version wrote it: in clear
  first.sqlite.prepare(`UPDATE webhooks SET signing_secret = ?, previous_signing_secret = NULL WHERE id = ?`)
    .run(hook.signing_secret, hook.id)
  await first.close()

  const second = await build(t, { dataDir, config })
  const row = second.sqlite.prepare(`SELECT signing_secret FROM webhooks WHERE id = ?`).pluck().get(hook.id) as string
  t.match(row, /^enc1:/, 'sealed at start')
  await post(second, u, channel.id, 'after the restart')
  await rx.received(2)
  t.ok(new Webhook(hook.signing_secret).verify(rx.got[1].raw.toString('utf8'),
    rx.got[1].headers as Record<string, string>), 'the same secret still signs')
  await recorded(second, 2)
  await second.close()

  // a restored database without its key file: a new key is made, and the sealed secret cannot be opened
  fs.rmSync(path.join(dataDir, 'webhook-key'))
  const lines: string[] = []
  const third = await build(t, { dataDir, config,
    logger: loggerOptions('info', { write: (line: string) => { lines.push(line) } }) })
  t.equal((await post(third, u, channel.id, 'unreadable')).statusCode, 201, 'the request does not fail')
  for (let i = 0; i < 1000 && !(await deliveries(third, u, hook.id)).some((d) => !d.success); i++) {
    await new Promise((r) => setTimeout(r, 10))
  }
  const failed = (await third.inject({ url: `${BASE}/webhooks/${hook.id}/deliveries`, headers: ws(u) })).json()
    .data.find((d: { success: boolean }) => !d.success) as { status_code: number; error: string }
  t.match(failed, { status_code: 0, error: /cannot be read .*webhook-key.*rotate/ })
  t.equal(rx.got.length, 2, 'nothing was sent unsigned')
  // the delivery thread opens the secrets; the request thread logs the failure, with the webhook and no secret
  const logged = lines.map((l) => JSON.parse(l) as { msg: string; webhookId?: string; error?: string })
    .filter((l) => l.msg === 'webhook signing secret unreadable')
  t.ok(logged.length > 0, 'the unreadable secret is logged')
  t.match(logged[0], { webhookId: hook.id, error: /cannot be read .*webhook-key/ })
  // rotating gives a readable secret again: the next retry is signed with it
  const fresh = (await third.inject({ method: 'POST', url: `${BASE}/webhooks/${hook.id}/rotate-secret`,
    headers: ws(u) })).json().data.signing_secret as string
  await rx.received(3)
  t.match(new Webhook(fresh).verify(rx.got[2].raw.toString('utf8'), rx.got[2].headers as Record<string, string>),
    { data: { content: 'unreadable' } })
})
