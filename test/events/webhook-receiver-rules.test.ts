import t, { type Test } from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Ajv } from 'ajv'
import formats from 'ajv-formats'
import { build, signup } from '../helper.js'
import { parseRetryAfter } from '../../src/events/delivery.js'
import { GONE_ERROR, retryDelayMs } from '../../src/events/outbox.js'
import { BASE, deliveries, hookAndChannel, post, ws } from './webhook-helpers.js'

/**
 * A real receiver answering each request with the next of `answers` for its path (the last one repeats), as
 * [status, headers].
 */
async function scripted(t: Test, answers: Record<string, Array<[number, Record<string, string>?]>>) {
  const got: Array<{ path: string; body: string; headers: http.IncomingHttpHeaders }> = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const served = new Map<string, number>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = req.url!
      got.push({ path, body: Buffer.concat(chunks).toString(), headers: req.headers })
      const list = answers[path] ?? [[404]]
      const i = served.get(path) ?? 0
      served.set(path, i + 1)
      const [status, headers] = list[Math.min(i, list.length - 1)]
      res.writeHead(status, headers ?? {}).end()
      for (const w of waiters.filter((w) => got.length >= w.n)) { waiters.splice(waiters.indexOf(w), 1); w.resolve() }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    received: (n: number) => new Promise<void>((resolve) => {
      if (got.length >= n) resolve(); else waiters.push({ n, resolve })
    })
  }
}

/** the webhook's deliveries once `n` are recorded (newest first) */
async function recorded(app: Awaited<ReturnType<typeof build>>, u: Awaited<ReturnType<typeof signup>>, id: string,
  n: number) {
  for (;;) {
    const list = await deliveries(app, u, id)
    if (list.length >= n) return list
    await new Promise((r) => setTimeout(r, 10))
  }
}

t.test('Retry-After: delay-seconds and HTTP-dates, nothing else', async (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z')
  t.equal(parseRetryAfter('120', now), 120_000)
  t.equal(parseRetryAfter(' 0 ', now), 0)
  t.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now), 30_000)
  t.equal(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now), 0, 'a date past is now')
  for (const bad of [undefined, '', '1.5', '-3', 'soon', '12 s']) {
    t.equal(parseRetryAfter(bad, now), undefined, String(bad))
  }
})

t.test('a retry waits its step, or longer when the receiver asks, never past the longest step; plus jitter',
  async (t) => {
    const schedule = [5, 300, 1800]
    t.equal(retryDelayMs(schedule, 0, undefined, () => 0), 5000)
    t.equal(retryDelayMs(schedule, 0, undefined, () => 1), 5500, 'at most 10% more')
    t.equal(retryDelayMs(schedule, 0, 60_000, () => 0), 60_000, 'Retry-After honoured')
    t.equal(retryDelayMs(schedule, 1, 1000, () => 0), 300_000, 'never sooner than the step')
    t.equal(retryDelayMs(schedule, 0, 365 * 86_400_000, () => 0), 1_800_000, 'at most the longest step')
    const delays = new Set(Array.from({ length: 20 }, () => retryDelayMs(schedule, 1)))
    t.ok(delays.size > 1, 'random jitter')
    for (const d of delays) t.ok(d >= 300_000 && d <= 330_000, String(d))
  })

t.test('410 Gone switches the webhook off and stops its retries; the delivery log and the webhook say why',
  async (t) => {
    const app = await build(t, { config: { allowPrivateUrls: true, webhookRetrySchedule: [0.05, 0.05, 0.05] } })
    const rx = await scripted(t, { '/gone': [[503], [410]] })
    const u = await signup(app)
    const { hook, channel } = await hookAndChannel(app, u, `${rx.base}/gone`)
    t.equal((await post(app, u, channel.id)).statusCode, 201)
    await rx.received(2) // the first attempt (503), its retry (410)
    const [gone, first] = await recorded(app, u, hook.id, 2)
    await app.jobs.idle()
    t.equal(first.status_code, 503)
    t.ok(first.next_attempt_at, 'the 503 was to be retried')
    t.equal(gone.status_code, 410)
    t.equal(gone.next_attempt_at, null, 'no retry after 410, though the schedule has more')
    t.equal((gone as { error?: string }).error, GONE_ERROR)
    t.equal(app.sqlite.prepare(`SELECT COUNT(*) FROM jobs WHERE type = 'webhook.retry'`).pluck().get(), 0)
    t.equal(app.outboxSqlite.prepare('SELECT state FROM webhook_messages').pluck().get(), 'failed')
    const [listed] = (await app.inject({ url: `${BASE}/webhooks`, headers: ws(u) })).json().data
    t.match(listed, { id: hook.id, active: false, disabled_reason: 'gone' })

    // nothing more goes to it; switched on again by a person, it is active with no reason left
    t.equal((await post(app, u, channel.id)).statusCode, 201)
    await app.jobs.idle()
    t.equal(rx.got.length, 2)
    const on = await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${hook.id}`, headers: ws(u),
      payload: { active: true } })
    t.equal(on.statusCode, 200, on.body)
    t.match(on.json().data, { active: true, disabled_reason: null })
    // another organization cannot see or switch it
    const other = await signup(app)
    t.equal((await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${hook.id}`, headers: ws(other),
      payload: { active: true } })).statusCode, 404)
  })

t.test('Retry-After on 429 and 503 sets the next attempt, within the schedule\'s longest step; jitter on each',
  async (t) => {
    const app = await build(t, { config: { allowPrivateUrls: true, webhookRetrySchedule: [1, 120] } })
    // whole seconds, a minute ahead: the attempts are made well before it (and after `start`)
    const start = Date.now()
    const date = new Date(start + 60_000).toUTCString()
    const rx = await scripted(t, {
      '/seconds': [[503, { 'retry-after': '8' }]],
      '/date': [[429, { 'retry-after': date }]],
      '/far': [[429, { 'retry-after': '86400' }]],
      '/ignored': [[500, { 'retry-after': '8' }]],
      '/fail': [[500]]
    })
    const u = await signup(app)
    const made: Record<string, string> = {}
    for (const path of ['seconds', 'date', 'far', 'ignored', 'fail']) {
      const { hook } = await hookAndChannel(app, u, `${rx.base}/${path}`)
      made[path] = hook.id
    }
    const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: ws(u),
      payload: { name: 'more', type: 'public' } })).json().data
    for (let i = 0; i < 5; i++) t.equal((await post(app, u, channel.id)).statusCode, 201)
    await rx.received(25)
    const waitOf = async (path: string) => (await recorded(app, u, made[path], 5)).map((d) => {
      t.ok(d.next_attempt_at, `${path}: a retry is due`)
      return Date.parse(d.next_attempt_at!) - Date.parse((d as unknown as { created_at: string }).created_at)
    })
    const within = (waits: number[], lo: number, hi: number, what: string) => {
      for (const w of waits) t.ok(w >= lo && w <= hi, `${what}: ${w} ms in [${lo}, ${hi}]`)
    }
    within(await waitOf('seconds'), 8000, 8800, 'Retry-After: 8 on a 503')
    // the retry is due at the date, plus at most 10 %: the wait runs from the answer (which came after `start`) and is
    // counted from the attempt's record (created_at, the same instant as the due time is worked out)
    for (const d of await recorded(app, u, made.date, 5)) {
      const due = Date.parse(d.next_attempt_at!)
      const at = Date.parse((d as unknown as { created_at: string }).created_at)
      t.ok(due >= Date.parse(date) && due <= at + (Date.parse(date) - start) * 1.1 + 1,
        `Retry-After as an HTTP-date on a 429: due ${d.next_attempt_at}, asked ${date}`)
    }
    within(await waitOf('far'), 120_000, 132_000, 'a day asked for: the schedule\'s longest step')
    within(await waitOf('ignored'), 1000, 1100, 'Retry-After on a 500 is not a reason to wait')
    const plain = await waitOf('fail')
    within(plain, 1000, 1100, 'the step, plus at most 10%')
    t.ok(new Set(plain).size > 1, `jitter: the five waits differ (${plain.join(', ')})`)
  })

t.test('the OpenAPI document publishes each event\'s body as a callback; real deliveries validate against it',
  async (t) => {
    const app = await build(t, { config: { allowPrivateUrls: true } })
    const doc = (await app.inject({ url: '/api/docs/json' })).json()
    const create = doc.paths['/api/v2/developer/webhooks'].post
    const ajv = new Ajv({ strict: false, allErrors: true })
    formats.default(ajv)
    const validators = new Map<string, ReturnType<typeof ajv.compile>>()
    for (const name of ['message.created', 'workflow.completed', 'test.ping', 'knowledge.indexed']) {
      const schema = create.callbacks[name]['{$request.body#/url}'].post.requestBody.content['application/json'].schema
      validators.set(name, ajv.compile(schema))
    }
    const rx = await scripted(t, { '/ok': [[204]] })
    const u = await signup(app)
    const { hook, channel } = await hookAndChannel(app, u, `${rx.base}/ok`, ['message.created', 'workflow.completed'])
    t.equal((await post(app, u, channel.id, 'schema check')).statusCode, 201)
    const ping = await app.inject({ method: 'POST', url: `${BASE}/webhooks/${hook.id}/test`, headers: ws(u) })
    t.equal(ping.json().data.delivered, true)
    await rx.received(2)
    for (const { body } of rx.got) {
      const parsed = JSON.parse(body) as { event: string }
      const validate = validators.get(parsed.event)!
      t.ok(validate(parsed), `${parsed.event} matches its schema ${JSON.stringify(validate.errors)}`)
    }
    t.same(rx.got.map((g) => (JSON.parse(g.body) as { event: string }).event).sort(), ['message.created', 'test.ping'])
    // the schemas are strict enough to fail: a body with a field missing does not validate
    const broken = JSON.parse(rx.got.find((g) => g.body.includes('message.created'))!.body) as { data: object }
    delete (broken.data as Record<string, unknown>).channel_id
    t.notOk(validators.get('message.created')!(broken), 'a missing field is caught')
    t.notOk(validators.get('workflow.completed')!({ event: 'workflow.completed', timestamp: 'x', data: {} }))
  })
