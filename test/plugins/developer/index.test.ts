import t, { type Test } from 'tap'
import http from 'node:http'
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { migrate } from 'drizzle-orm/better-sqlite3/migrator'
import type { AddressInfo } from 'node:net'
import { build, signup, addUser, createKey, tempDir, type TestUser } from '../../helper.js'
import type { App } from '../../../src/app.js'
import { openDatabase, projectRoot } from '../../../src/db/index.js'
import type { StoredEntry } from '../../../src/developer-log/format.js'
import { createLogStore, LOG_SCAN_BUDGET } from '../../../src/developer-log/reader.js'
import { hostile } from '../../fixtures/hostile-urls.js'

interface Received { path: string; headers: http.IncomingHttpHeaders; raw: Buffer }

/** A real webhook receiver on 127.0.0.1 with one behaviour per path. */
async function receiver(t: Test) {
  const got: Received[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      got.push({ path: req.url!, headers: req.headers, raw: Buffer.concat(chunks) })
      if (req.url === '/ok') {
        res.writeHead(200, { 'content-type': 'text/plain' })
        res.end('thanks ' + 'x'.repeat(3000))
      } else if (req.url === '/fail') {
        res.writeHead(500)
        res.end('receiver broke')
      } else if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' })
        res.end()
      } else if (req.url === '/close') {
        req.socket.destroy()
      }
      // '/hang': never answers
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got }
}

const BASE = '/api/v2/developer'
function ws(user: TestUser, workspaceId = user.workspaceId) {
  return { ...user.auth, 'x-workspace-id': workspaceId }
}
async function createHook(app: App, headers: Record<string, string>, payload: object) {
  return app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers, payload })
}

t.test('webhook management: secret once, validation, roles, tenants', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const res = await createHook(app, ws(owner), { url: 'https://93.184.216.34/cairn', events: ['message.created', 'workflow.completed'], description: 'team hook' })
  t.equal(res.statusCode, 201)
  const hook = res.json().data
  t.match(hook.signing_secret, /^whsec_[0-9a-f]{64}$/)
  t.match(hook, { workspace_id: owner.workspaceId, url: 'https://93.184.216.34/cairn', events: ['message.created', 'workflow.completed'], active: true, description: 'team hook' })
  t.notOk('updated_at' in hook)
  const list = await app.inject({ url: `${BASE}/webhooks`, headers: ws(owner) })
  t.equal(list.statusCode, 200)
  t.notOk(list.body.includes(hook.signing_secret), 'the secret never appears again')
  t.same(Object.keys(list.json().data[0]).sort(),
    ['active', 'created_at', 'description', 'disabled_reason', 'events', 'id', 'updated_at', 'url'])
  t.equal(list.json().data[0].disabled_reason, null, 'on, so no reason it is off')

  t.equal((await createHook(app, ws(owner), { url: 'https://93.184.216.34/x', events: ['message.deleted'] })).json().code, 'UNKNOWN_EVENT')
  t.equal((await createHook(app, ws(owner), { url: 'https://93.184.216.34/x', events: [] })).statusCode, 400)
  for (const url of hostile) {
    const r = await createHook(app, ws(owner), { url, events: ['test.ping'] })
    t.equal(r.statusCode, 400, url)
    t.equal(r.json().code, 'URL_NOT_ALLOWED')
  }
  t.equal((await createHook(app, owner.auth, { url: 'https://93.184.216.34/x', events: ['test.ping'] })).statusCode, 400, 'workspace context needed')

  const member = await addUser(app, owner)
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
    payload: { userId: member.userId, role: 'member' } })
  t.equal((await createHook(app, ws(member, owner.workspaceId), { url: 'https://93.184.216.34/x', events: ['test.ping'] })).statusCode, 403, 'members do not manage')
  t.equal((await app.inject({ url: `${BASE}/webhooks`, headers: ws(member, owner.workspaceId) })).statusCode, 200,
    'members may list')

  const put = await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${hook.id}`, headers: ws(owner),
    payload: { active: false, events: ['test.ping'] } })
  t.equal(put.statusCode, 200)
  t.same(Object.keys(put.json().data).sort(), ['active', 'disabled_reason', 'events', 'id', 'updated_at', 'url'])
  t.equal(put.json().data.active, false)
  t.equal((await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${hook.id}`, headers: ws(owner),
    payload: {} })).statusCode, 400)
  t.equal((await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${hook.id}`, headers: ws(owner), payload: { url: 'http://10.0.0.1/' } })).statusCode, 400)
  t.equal((await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${hook.id}`, headers: ws(owner),
    payload: { events: ['nope'] } })).statusCode, 400)

  const stranger = await signup(app)
  for (const [method, url] of [['PUT', `${BASE}/webhooks/${hook.id}`], ['DELETE', `${BASE}/webhooks/${hook.id}`],
    ['GET', `${BASE}/webhooks/${hook.id}/deliveries`], ['POST', `${BASE}/webhooks/${hook.id}/test`]] as const) {
    const r = await app.inject({ method, url, headers: ws(stranger),
      payload: method === 'PUT' ? { active: true } : undefined })
    t.equal(r.statusCode, 404, `foreign webhook: ${method} ${url.replace(hook.id, ':id')}`)
  }
  t.same((await app.inject({ url: `${BASE}/webhooks`, headers: ws(stranger) })).json().data, [])
  t.equal((await app.inject({ url: `${BASE}/webhooks`, headers: ws(stranger, owner.workspaceId) })).statusCode, 403)

  const del = await app.inject({ method: 'DELETE', url: `${BASE}/webhooks/${hook.id}`, headers: ws(owner) })
  t.same(del.json(), { success: true, message: 'Webhook deleted' })
  t.equal((await app.inject({ method: 'DELETE', url: `${BASE}/webhooks/${hook.id}`, headers: ws(owner) })).statusCode,
    404)
})

t.test('API key capabilities on webhooks: read lists, write manages, execute tests', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const u = await signup(app)
  const key = async (scopes: string[]) => ({ 'x-api-key': (await createKey(app, u, scopes,
    { workspaceId: u.workspaceId })).key })
  const read = await key(['read'])
  const write = await key(['write'])
  const exec = await key(['execute'])
  t.equal((await createHook(app, read, { url: `${rx.base}/ok`, events: ['test.ping'] })).statusCode, 403)
  const created = await createHook(app, write, { url: `${rx.base}/ok`, events: ['test.ping'] })
  t.equal(created.statusCode, 201)
  const id = created.json().data.id
  t.equal((await app.inject({ url: `${BASE}/webhooks`, headers: read })).statusCode, 200)
  t.equal((await app.inject({ url: `${BASE}/webhooks`, headers: write })).statusCode, 403)
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/webhooks/${id}/test`, headers: write })).statusCode, 403,
    'write alone is not enough')
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/webhooks/${id}/test`, headers: exec })).statusCode, 200)
  t.equal((await app.inject({ url: `${BASE}/webhooks/${id}/deliveries`, headers: read })).json().data.length, 1)
  t.equal((await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${id}`, headers: write,
    payload: { active: false } })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: `${BASE}/webhooks/${id}`, headers: read })).statusCode, 403)
  t.equal((await app.inject({ method: 'DELETE', url: `${BASE}/webhooks/${id}`, headers: write })).statusCode, 200)
})

t.test('deliveries: signed raw body, recorded preview and hash, failures without retry', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const rx = await receiver(t)
  const u = await signup(app)
  const hook = (await createHook(app, ws(u), { url: `${rx.base}/ok`, events: ['message.created'] })).json().data

  const test = await app.inject({ method: 'POST', url: `${BASE}/webhooks/${hook.id}/test`, headers: ws(u) })
  t.equal(test.statusCode, 200)
  const td = test.json().data
  t.match(td, { delivered: true, status_code: 200, delivery: { event_type: 'test.ping' } })
  t.type(td.latency_ms, 'number')
  const ping = rx.got[0]
  const expected = createHmac('sha256', hook.signing_secret).update(ping.raw).digest()
  t.ok(timingSafeEqual(Buffer.from(ping.headers['x-cairn-signature'] as string, 'hex'), expected),
    'signature verifies over the raw bytes')
  t.equal(ping.headers['x-cairn-event'], 'test.ping')
  t.equal(ping.headers['x-cairn-delivery'], td.delivery.id)
  t.match(ping.headers['user-agent'], /^Cairn-Webhooks\/\d/)
  const parsed = JSON.parse(ping.raw.toString())
  t.same(parsed.data, {})
  t.equal(parsed.event, 'test.ping')
  t.match(parsed.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

  // an event with a body over 2 KB, fanned out through the queue
  const content = 'é'.repeat(1500) + ' end'
  const received = rx.got.length
  t.equal(app.events.emit(u.workspaceId, 'message.created', { id: 'm1', content }), 1)
  t.equal(rx.got.length, received, 'emitting does not wait for the receiver: delivery happens on a later turn')
  await app.jobs.idle()
  const big = rx.got[1]
  t.equal(big.headers['x-cairn-event'], 'message.created')
  const deliveries = (await app.inject({ url: `${BASE}/webhooks/${hook.id}/deliveries`, headers: ws(u) })).json().data
  t.equal(deliveries.length, 2)
  t.equal(deliveries[0].event_type, 'message.created', 'newest first')
  const rb = deliveries[0].request_body
  t.equal(rb.body_sha256, createHash('sha256').update(big.raw).digest('hex'))
  t.equal(rb.body_bytes, big.raw.length)
  t.equal(rb.truncated, true)
  t.ok(Buffer.byteLength(rb.body_preview) <= 2048 && Buffer.byteLength(rb.body_preview) >= 2046)
  t.ok(big.raw.toString().startsWith(rb.body_preview), 'the preview is the start of what was sent')
  t.equal(deliveries[0].success, true)
  t.equal(Buffer.byteLength(deliveries[0].response_body), 2048, 'first 2 KB of the response')
  t.equal(deliveries[1].request_body.truncated, false)

  // failing receivers: each attempt recorded once, never retried
  for (const [path, check] of [['/fail', 500], ['/redirect', 302], ['/close', 0], ['/hang', 0]] as const) {
    const h = (await createHook(app, ws(u), { url: `${rx.base}${path}`, events: ['workflow.completed'] })).json().data
    const r = (await app.inject({ method: 'POST', url: `${BASE}/webhooks/${h.id}/test`, headers: ws(u) })).json().data
    t.equal(r.delivered, false, path)
    t.equal(r.status_code, check, `${path} status`)
    const recorded = (await app.inject({ url: `${BASE}/webhooks/${h.id}/deliveries`, headers: ws(u) })).json().data
    t.equal(recorded.length, 1, `${path}: one attempt`)
    t.equal(recorded[0].success, false)
    if (path === '/fail') t.equal(recorded[0].response_body, 'receiver broke')
    if (path === '/redirect') t.match(recorded[0].error, /redirect/)
    if (path === '/hang') t.equal(recorded[0].error, 'no answer within 10 s', 'gave up after the 10 s timeout')
  }
  t.equal(rx.got.filter((g) => g.path === '/fail').length, 1, 'no retry')
  t.equal(rx.got.filter((g) => g.path === '/elsewhere').length, 0, 'redirect not followed')

  // inactive or unsubscribed hooks get nothing
  await app.inject({ method: 'PUT', url: `${BASE}/webhooks/${hook.id}`, headers: ws(u), payload: { active: false } })
  t.equal(app.events.emit(u.workspaceId, 'message.created', { id: 'm2' }), 0)
  t.equal(app.events.emit(u.workspaceId, 'agent.completed', {}), 0)
})

t.test('a private receiver is refused at connect time unless allowed', async (t) => {
  const app = await build(t)
  const rx = await receiver(t)
  const u = await signup(app)
  // stored while private URLs were allowed (or a name that now resolves privately)
  app.sqlite.prepare(`INSERT INTO webhooks (id, customer_id, workspace_id, url, events, signing_secret, active,
    description, created_by, created_at, updated_at)
    VALUES ('00000000-0000-4000-8000-000000000001', ?, ?, ?, '["test.ping"]', 'whsec_x', 1, '', ?,
      '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`)
    .run(u.customerId, u.workspaceId, `${rx.base.replace('127.0.0.1', 'localhost')}/ok`, u.userId)
  const r = (await app.inject({ method: 'POST', url: `${BASE}/webhooks/00000000-0000-4000-8000-000000000001/test`,
    headers: ws(u) })).json().data
  t.equal(r.delivered, false)
  t.match(r.error, /non-public/)
  t.equal(rx.got.length, 0, 'nothing reached the receiver')
})

t.test('developer logs: filters, cursor pages without gaps or duplicates, limits', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
  const u = await signup(app)
  const k1 = await createKey(app, u, ['read', 'write'])
  const k2 = await createKey(app, u, ['read'])
  const hit = (k: { key: string; id: string }) => app.inject({ url: `${BASE}/api-keys/${k.id}/usage`,
    headers: { 'x-api-key': k.key } })
  for (let i = 0; i < 30; i++) await hit(i % 3 === 0 ? k2 : k1)
  const act = await app.inject({ method: 'POST', url: '/api/v2/activity/log', headers: { 'x-api-key': k1.key },
    payload: { action: 'sync.finished', category: 'sync', metadata: { items: 3 } } })
  t.equal(act.statusCode, 201)
  t.match(act.json().data,
    { category: 'sync', action: 'sync.finished', api_key_id: k1.id, status_code: 201, metadata: { items: 3 } })
  const other = await signup(app)
  const ok3 = await createKey(app, other, ['read'])
  await hit(ok3)

  const logs = (q = '') => app.inject({ url: `${BASE}/logs${q}`, headers: u.auth })
  const all = (await logs('?limit=100')).json()
  t.equal(all.data.length, 31,
    '30 requests and one activity entry; the activity replaced its own request entry; none of the other user')
  t.equal(all.nextCursor, null)
  t.same(Object.keys(all.data[1]).sort(),
    ['action', 'api_key_id', 'category', 'created_at', 'duration_ms', 'id', 'status_code'])
  t.equal(all.data[0].action, 'sync.finished', 'newest first')
  t.equal((await logs(`?api_key_id=${k2.id}`)).json().data.length, 10)
  t.equal((await logs('?categories=sync')).json().data.length, 1)
  t.equal((await logs('?categories=developer,sync&limit=100')).json().data.length, 31)
  t.equal((await logs('?categories=knowledge')).json().data.length, 0)
  t.equal((await logs(`?start=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).json().data.length,
    0)
  t.equal((await logs(`?end=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`)).json().data.length, 0)
  t.equal((await logs('?limit=101')).statusCode, 400)
  t.equal((await logs('?cursor=garbage')).statusCode, 400)
  t.equal((await logs('?start=yesterday')).statusCode, 400)

  // pages of 7 while new entries keep arriving: every old entry exactly once
  const seen: string[] = []
  let cursor: string | null = null
  do {
    const page: { data: Array<{ id: string }>;
      nextCursor: string | null } = (await logs(`?limit=7${cursor ? `&cursor=${cursor}` : ''}`)).json()
    seen.push(...page.data.map((e) => e.id))
    cursor = page.nextCursor
    await hit(k1)
  } while (cursor)
  const original = all.data.map((e: { id: string }) => e.id)
  t.equal(new Set(seen).size, seen.length, 'no duplicates')
  t.same(seen.filter((id) => original.includes(id)), original, 'no gaps, in order')

  // retention
  app.devLog.flush()
  app.sqlite.prepare(`UPDATE developer_log_chunks
    SET first_at = '2000-01-01T00:00:00.000Z', last_at = '2000-01-01T00:00:00.000Z' WHERE api_key_id = ?`).run(k2.id)
  app.runMaintenance()
  t.equal((await logs(`?api_key_id=${k2.id}`)).json().data.length, 0)
  t.ok((await logs(`?api_key_id=${k1.id}`)).json().data.length > 0, 'the other key\'s entries are kept')
})

t.test('developer logs: a filter that matches little gives short pages with a cursor, never a scan ' +
  'of the whole log', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const k = await createKey(app, u, ['read'])
  // one chunk: an old `sync` entry, then more `developer` entries than one page may examine
  const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i).toISOString()
  const entries: StoredEntry[] = [[randomUUID(), 'sync', 'sync.done', null, null, 201, 1, { items: 1 }, at(0)]]
  for (let i = 1; i <= LOG_SCAN_BUDGET + 5000; i++) entries.push([randomUUID(), 'developer', 'developer.logs', 'GET',
    '/x', 200, 1, null, at(i)])
  app.sqlite.prepare(`INSERT INTO developer_log_chunks (user_id, api_key_id, categories, first_at, last_at, count,
    entries) VALUES (?, ?, ',sync,developer,', ?, ?, ?, ?)`)
    .run(u.userId, k.id, at(0), at(entries.length - 1), entries.length, JSON.stringify(entries))
  const logs = (q: string) => app.inject({ url: `${BASE}/logs${q}`, headers: u.auth })

  const first = (await logs('?categories=sync')).json()
  t.same(first.data, [], 'the budget ran out before a match')
  t.type(first.nextCursor, 'string')
  const second = (await logs(`?categories=sync&cursor=${first.nextCursor}`)).json()
  t.same(second.data.map((e: { action: string; metadata: unknown }) => [e.action, e.metadata]),
    [['sync.done', { items: 1 }]])
  t.equal(second.nextCursor, null)

  // unfiltered pages walk the same chunk newest first, without gaps
  const n = entries.length
  const page1 = (await logs('?limit=3')).json()
  t.same(page1.data.map((e: { created_at: string }) => e.created_at), [at(n - 1), at(n - 2), at(n - 3)])
  const page2 = (await logs(`?limit=2&cursor=${page1.nextCursor}`)).json()
  t.same(page2.data.map((e: { created_at: string }) => e.created_at), [at(n - 4), at(n - 5)])
  // time filters narrow within a chunk
  const windowQuery = `?start=${encodeURIComponent(at(n - 12))}&end=${encodeURIComponent(at(n - 10))}`
  const window = (await logs(windowQuery)).json()
  t.same(window.data.map((e: { created_at: string }) => e.created_at), [at(n - 10), at(n - 11), at(n - 12)])
  // following the cursor to its end finds nothing more (the rest of this oversized chunk is older than start)
  let cursor: string | null = window.nextCursor
  let pages = 0
  while (cursor) {
    const page: { data: unknown[]; nextCursor: string | null } = (await logs(`${windowQuery}&cursor=${cursor}`)).json()
    t.same(page.data, [])
    cursor = page.nextCursor
    t.ok(++pages < 5, 'the walk ends')
  }
  // a cursor from another user's log shows nothing of theirs; a malformed one is refused
  const other = await signup(app)
  t.same((await app.inject({ url: `${BASE}/logs?cursor=${page1.nextCursor}`, headers: other.auth })).json().data, [])
  t.same((await app.inject({ url: `${BASE}/logs?api_key_id=${k.id}`, headers: other.auth })).json().data, [],
    'nor does a filter on their key')
  t.equal((await logs(`?cursor=${Buffer.from('c1.x').toString('base64url')}`)).statusCode, 400)
})

t.test('the chunked developer log takes over entries written before it (migration 0010)', async (t) => {
  const dir = tempDir(t)
  // a database as the previous release left it: migrations up to 0009, with developer_logs rows
  const folder = path.join(dir, 'migrations')
  fs.cpSync(path.join(projectRoot(), 'schema', 'migrations'), folder, { recursive: true })
  fs.rmSync(path.join(folder, '0010_developer_log_chunks.sql'))
  const journalFile = path.join(folder, 'meta', '_journal.json')
  const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as { entries: Array<{ idx: number }> }
  journal.entries = journal.entries.filter((e) => e.idx < 10)
  fs.writeFileSync(journalFile, JSON.stringify(journal))
  const old = new Database(path.join(dir, 'cairn.db'))
  migrate(drizzle(old), { migrationsFolder: folder })
  const insert = old.prepare(`INSERT INTO developer_logs (id, customer_id, user_id, api_key_id, category, action,
    method, path, status_code, duration_ms, metadata, created_at)
    VALUES (?, 'c', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  insert.run('e1', 'u1', 'k1', 'developer', 'developer.key_usage', 'GET', '/api/v2/developer/api-keys/k1/usage', 200, 3,
    null, '2026-11-01T10:00:00.000Z')
  insert.run('e2', 'u1', null, 'sync', 'sync.done', null, null, 201, 0, '{"items":2}', '2026-11-01T10:00:01.000Z')
  insert.run('e3', 'u2', 'k2', 'knowledge', 'knowledge.search', 'GET', '/api/knowledge/search', 200, 9, null,
    '2026-11-01T10:00:02.000Z')
  old.close()

  const handle = openDatabase(path.join(dir, 'cairn.db'))
  t.teardown(() => handle.close())
  t.notOk(handle.sqlite.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'developer_logs'`).get(),
    'the old table is gone')
  const page = createLogStore(handle.sqlite).page('u1', { limit: 10 })
  t.same(page.data, [
    { id: 'e2', category: 'sync', action: 'sync.done', api_key_id: null, status_code: 201, duration_ms: 0,
      metadata: { items: 2 }, created_at: '2026-11-01T10:00:01.000Z' },
    { id: 'e1', category: 'developer', action: 'developer.key_usage', api_key_id: 'k1', status_code: 200,
      duration_ms: 3, created_at: '2026-11-01T10:00:00.000Z' }
  ])
  t.equal(page.nextCursor, null)
  t.equal(createLogStore(handle.sqlite).page('u2', { limit: 10, categories: ['knowledge'] }).data[0].id, 'e3')
})

t.test('developer logs: large activity entries (up to the 64 KB cap) are split across chunks and paged',
  async (t) => {
    const app = await build(t)
    const u = await signup(app)
    const big = 'x'.repeat(60_000)
    for (let i = 0; i < 40; i++) app.devLog.record({ userId: u.userId, apiKeyId: null, category: 'activity',
      action: `big.${i}`, statusCode: 201, durationMs: 0, metadata: { i, big } })
    app.devLog.flush()
    const chunks = app.sqlite.prepare('SELECT count, length(entries) AS bytes FROM developer_log_chunks WHERE ' +
      'user_id = ? ORDER BY seq').all(u.userId) as Array<{ count: number; bytes: number }>
    t.ok(chunks.length >= 3, `40 entries of 60 KB in ${chunks.length} chunks`)
    t.ok(chunks.every((c) => c.bytes <= 1 << 20), 'each chunk under 1 MB')
    t.equal(chunks.reduce((n, c) => n + c.count, 0), 40)

    const seen: number[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: { data: Array<{ action: string; metadata: { i: number; big: string } }>; nextCursor: string | null } =
        (await app.inject({ url: `${BASE}/logs?limit=15${cursor ? `&cursor=${cursor}` : ''}`, headers: u.auth }))
          .json()
      t.ok(page.data.length <= 15)
      for (const e of page.data) {
        t.equal(e.metadata.big.length, 60_000)
        seen.push(e.metadata.i)
      }
      cursor = page.nextCursor
      pages++
    } while (cursor)
    t.equal(pages, 3)
    t.same(seen, Array.from({ length: 40 }, (_, i) => 39 - i), 'every entry once, newest first')
  })
