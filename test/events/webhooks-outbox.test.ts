import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { Worker } from 'node:worker_threads'
import { createHmac } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { projectRoot } from '../../src/db/index.js'
import { build, signup, tempDir, threadNiceness } from '../helper.js'
import { loggerOptions, type App } from '../../src/app.js'
import { receiver, BASE, ws, hookAndChannel, post, eventsToExpand, deliveries } from './webhook-helpers.js'

t.test('the receiver.mjs of docs/api/webhooks.md verifies real deliveries, refuses stale timestamps and ' +
  'skips duplicates', async (t) => {
  const page = fs.readFileSync(path.join(projectRoot(), 'docs/api/webhooks.md'), 'utf8')
  const code = /```js\n(\/\/ receiver\.mjs\n[\s\S]*?)```/.exec(page)?.[1]
  if (!code) throw new Error('no receiver.mjs example in docs/api/webhooks.md')
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
    const before = threadNiceness()
    const { channel } = await hookAndChannel(app, u, `${rx.base}/ok`)
    await post(app, u, channel.id)
    await rx.received(1)
    const own = before.get(String(process.pid))!
    const added = [...threadNiceness()].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice)
    t.ok(added.includes(Math.min(19, own + 10)), `a new thread at niceness ${own + 10} (new threads: ${added})`)
    t.equal(threadNiceness().get(String(process.pid)), own, 'the request thread keeps its priority')
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
