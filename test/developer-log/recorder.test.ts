import t from 'tap'
import { randomBytes } from 'node:crypto'
import { build, signup, createKey } from '../helper.js'
import { loggerOptions, type App } from '../../src/app.js'
import { createTimestamps, MAX_ENTRY_BYTES } from '../../src/developer-log/recorder.js'
import { fillDatabase, freeDatabase } from '../db/fill-disk.js'
import { decodeChunk, encodeEntry, placeId } from '../../src/developer-log/format.js'
import { INTENT, OUTBOX_HOLDER, releaseHolder, writeIntentOf } from '../../src/db/write-intent.js'

/** every stored developer-log entry, oldest first, with its chunk's key and user */
function storedEntries(app: App) {
  const chunks = app.sqlite.prepare('SELECT seq, user_id, api_key_id, entries FROM developer_log_chunks ORDER BY seq')
    .all() as Array<{ seq: number; user_id: string; api_key_id: string | null; entries: string }>
  return chunks.flatMap((c) => decodeChunk(c.entries, c.seq).map((e) => ({ user_id: c.user_id, api_key_id: c.api_key_id,
    id: e.id, category: e.category, action: e.action, method: e.method, path: e.path, status_code: e.statusCode,
    duration_ms: e.durationMs, metadata: e.metadata, created_at: e.createdAt })))
}

t.test('every API-key request is recorded with key, group, action, status and duration; usage ' +
  'counts per day', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const reader = await createKey(app, u, ['read'])
  const writer = await createKey(app, u, ['write'])
  const url = `/api/v2/developer/api-keys/${reader.id}/usage`
  t.equal((await app.inject({ url, headers: { 'x-api-key': reader.key } })).statusCode, 200)
  t.equal((await app.inject({ url: url + '?days=3', headers: { authorization: `Bearer ${reader.key}` } })).statusCode,
    200)
  t.equal((await app.inject({ url, headers: { 'x-api-key': writer.key } })).statusCode, 403)
  t.equal((await app.inject({ url, headers: u.auth })).statusCode, 200, 'JWT requests are not API-key requests')
  app.devLog.flush()

  const rows = storedEntries(app)
  t.equal(rows.length, 3)
  t.same(rows.map((r) => [r.api_key_id, r.category, r.action, r.method, r.path, r.status_code]), [
    [reader.id, 'developer', 'developer.key_usage', 'GET', url, 200],
    [reader.id, 'developer', 'developer.key_usage', 'GET', url, 200],
    [writer.id, 'developer', 'developer.key_usage', 'GET', url, 403]
  ])
  t.ok(rows.every((r) => Number.isInteger(r.duration_ms) && r.duration_ms >= 0 && r.user_id === u.userId))

  const usage = await app.inject({ url: url + '?days=7', headers: { 'x-api-key': reader.key } })
  const d = usage.json().data
  t.equal(d.key_id, reader.id)
  t.equal(d.days, 7)
  t.equal(d.sparkline.length, 7)
  t.same(d.sparkline.slice(0, 6), [0, 0, 0, 0, 0, 0])
  t.equal(d.sparkline[6], 2, 'today counts the two earlier requests (this one is recorded after it answers)')
  const key = await app.inject({ url: `/api/v2/api-keys/${reader.id}`, headers: u.auth })
  t.type(key.json().data.last_used_at, 'string', 'last_used_at is kept')
})

t.test('usage sparkline counts each UTC day in its slot', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const k = await createKey(app, u, ['read'])
  const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10)
  const put = app.sqlite.prepare('INSERT INTO key_usage_daily (key_id, day, count) VALUES (?, ?, ?)')
  put.run(k.id, day(0), 5)
  put.run(k.id, day(1), 4)
  put.run(k.id, day(3), 2)
  put.run(k.id, day(10), 99)
  const res = await app.inject({ url: `/api/v2/developer/api-keys/${k.id}/usage?days=4`, headers: u.auth })
  t.same(res.json().data.sparkline, [2, 0, 4, 5])
})

t.test('nothing secret reaches the log', async (t) => {
  const lines: string[] = []
  const serviceKey = 'svc-' + randomBytes(24).toString('hex')
  const app = await build(t, {
    logger: loggerOptions('trace', { write: (line: string) => { lines.push(line) } }),
    config: { serviceKey }
  })
  const u = await signup(app)
  const login = await app.inject({ method: 'POST', url: '/api/v2/auth/login',
    payload: { email: u.email, password: u.password } })
  const jwt = login.json().data.token
  const k = await createKey(app, u, ['read'])
  await app.inject({ url: `/api/v2/developer/api-keys/${k.id}/usage`, headers: { 'x-api-key': k.key } })
  await app.inject({ url: `/api/v2/developer/api-keys/${k.id}/usage`, headers: { authorization: `Bearer ${k.key}` } })
  await app.inject({ url: '/api/v2/auth/me', headers: { 'x-service-key': serviceKey } })
  await app.inject({ method: 'POST', url: '/api/v2/auth/login',
    payload: { email: u.email, password: 'a wrong password guess' } })
  await app.inject({ method: 'POST', url: `/api/v2/api-keys/${k.id}/rotate`,
    headers: { authorization: `Bearer ${jwt}` } })
  const hash = (app.sqlite.prepare('SELECT key_hash FROM ' +
    'api_keys WHERE id = ?').get(k.id) as { key_hash: string }).key_hash
  const pwHash = (app.sqlite.prepare('SELECT password_hash FROM ' +
    'users WHERE id = ?').get(u.userId) as { password_hash: string }).password_hash

  const log = lines.join('')
  t.ok(lines.length > 10, 'requests were logged')
  for (const [name, secret] of [['password', u.password], ['wrong password', 'a wrong password guess'],
    ['API key', k.key],
    ['key hash', hash], ['password hash', pwHash], ['JWT', jwt], ['sign-up JWT', u.token],
    ['service key', serviceKey]]) {
    t.notOk(log.includes(secret), `no ${name} in the log`)
  }
})

t.test('timestamps of queued entries: ISO text and UTC day of each millisecond, across a midnight', async (t) => {
  const stamp = createTimestamps()
  const midnight = Date.UTC(2026, 10, 21)
  for (const ms of [midnight - 2, midnight - 1, midnight - 1, midnight, midnight, midnight + 1, midnight - 1, 0,
    1_700_000_000_123]) {
    t.equal(stamp.iso(ms), new Date(ms).toISOString(), `iso of ${ms}`)
    t.equal(stamp.day(ms), new Date(ms).toISOString().slice(0, 10), `day of ${ms}`)
  }
})

t.test('the entry format: named fields in code, the stored tuple on disk, and back; fields an entry shares with ' +
  'the one before it in its chunk are stored once; chunks of earlier versions decode as they are', async (t) => {
  const at = Date.UTC(2026, 0, 1)
  const entry = {
    id: 'e1', category: 'knowledge', action: 'knowledge.list', method: 'GET', path: '/api/knowledge/documents',
    statusCode: 200, durationMs: 3, metadata: { n: 1 }, at
  }
  const createdAt = '2026-01-01T00:00:00.000Z'
  const { at: _, ...named } = { ...entry, createdAt }
  const stored = encodeEntry(entry)
  t.same(stored, ['e1', 'knowledge', 'knowledge.list', 'GET', '/api/knowledge/documents', 200, 3, { n: 1 }, at])
  t.same(decodeChunk(JSON.stringify([stored]), 1), [named])

  // a request entry has no id of its own: its place in the log (chunk seq, index) is its id
  const second = { ...entry, id: null, metadata: undefined, at: at + 5 }
  const third = { ...entry, id: 'e3', method: null, path: null, action: 'knowledge.read', at: at + 5 }
  const fourth = { ...entry, id: 'e4', method: null, path: null, action: 'knowledge.read', category: 'x', at: at + 7 }
  const chunk = [encodeEntry(entry), encodeEntry(second, entry), encodeEntry(third, second), encodeEntry(fourth, third)]
  t.equal(placeId(0xfedcba987654, 0xabc), 'fedcba98-7654-8000-8000-000000000abc')
  t.same(chunk.slice(1), [
    [0, 0, 0, 0, 0, 200, 3, null, at + 5],
    ['e3', 0, 'knowledge.read', null, null, 200, 3, { n: 1 }, at + 5],
    ['e4', 'x', 0, 0, 0, 200, 3, { n: 1 }, at + 7]
  ], 'repeated text fields (null too) are stored as 0; no metadata is stored as null')
  t.same(decodeChunk(JSON.stringify(chunk), 42).map((e) => [e.id, e.category, e.action, e.method, e.path, e.metadata,
    e.createdAt]), [
    ['e1', 'knowledge', 'knowledge.list', 'GET', '/api/knowledge/documents', { n: 1 }, createdAt],
    ['00000000-002a-8000-8000-000000000001', 'knowledge', 'knowledge.list', 'GET', '/api/knowledge/documents', null,
      '2026-01-01T00:00:00.005Z'],
    ['e3', 'knowledge', 'knowledge.read', null, null, { n: 1 }, '2026-01-01T00:00:00.005Z'],
    ['e4', 'x', 'knowledge.read', null, null, { n: 1 }, '2026-01-01T00:00:00.007Z']
  ])
  t.same(decodeChunk('[[0,0,0,0,0,200,1,null,0]]', 7).map((e) => [e.category, e.action, e.method, e.path]),
    [['', '', null, null]], 'a damaged chunk whose first entry says "same as before" still decodes')
  const older = [['o1', 'sync', 'sync.done', null, null, 201, 1, { items: 1 }, createdAt],
    ['o2', 'sync', 'sync.done', null, null, 201, 1, null, createdAt]]
  t.same(decodeChunk(JSON.stringify(older), 1).map((e) => [e.id, e.category, e.action, e.method, e.createdAt]),
    [['o1', 'sync', 'sync.done', null, createdAt], ['o2', 'sync', 'sync.done', null, createdAt]])
})

/** turns the event loop until `done` holds (at most a million turns) */
async function turnUntil(done: () => boolean) {
  for (let i = 0; i < 1_000_000 && !done(); i++) await new Promise((resolve) => setImmediate(resolve))
}

t.test('a batch\'s flush waits for another thread\'s writer with the event loop free', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const reader = await createKey(app, u, ['read'])
  app.devLog.flush()
  const intent = writeIntentOf(app.sqlite)!
  // the webhook outbox thread's flag, as if it held SQLite's write lock (idle here: nothing else sets or clears it)
  Atomics.store(intent, OUTBOX_HOLDER, 1)
  t.teardown(() => releaseHolder(intent, OUTBOX_HOLDER))
  const url = `/api/v2/developer/api-keys/${reader.id}/usage`
  t.equal((await app.inject({ url, headers: { 'x-api-key': reader.key } })).statusCode, 200)
  // the batch's timer fires, and its flush waits, counted as a write intent
  await turnUntil(() => Atomics.load(intent, INTENT) !== 0)
  t.equal(Atomics.load(intent, INTENT), 1, 'the flush waits while the event loop turns')
  t.equal(storedEntries(app).length, 0, 'nothing written yet')
  releaseHolder(intent, OUTBOX_HOLDER)
  await turnUntil(() => Atomics.load(intent, INTENT) === 0)
  t.equal(storedEntries(app).length, 1, 'then the batch is written')

  // a full batch is flushed at the next turn of the event loop, after its write turn too
  Atomics.store(intent, OUTBOX_HOLDER, 1)
  for (let i = 0; i < 500; i++) {
    app.devLog.record({ userId: u.userId, apiKeyId: null, category: 'activity', action: 'activity.log',
      statusCode: 200, durationMs: 1 })
  }
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(Atomics.load(intent, INTENT), 1, 'the full batch\'s flush waits')
  t.equal(storedEntries(app).length, 1, 'nothing more written yet')
  releaseHolder(intent, OUTBOX_HOLDER)
  await turnUntil(() => Atomics.load(intent, INTENT) === 0)
  t.equal(storedEntries(app).length, 501, 'then it is written')
})

const activity = (app: App, auth: Record<string, string>, metadata: object) => app.inject({ method: 'POST',
  url: '/api/v2/activity/log', headers: auth, payload: { action: 'test.activity', metadata } })

t.test('an activity entry is at most 64 KB: a larger one answers 413 and is not kept', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const key = await createKey(app, u, ['write'])
  const big = await activity(app, { 'x-api-key': key.key }, { blob: 'x'.repeat(MAX_ENTRY_BYTES + 1) })
  t.equal(big.statusCode, 413, 'before: 201, and 0.9 MB entries at 600 a minute filled the disk')
  t.equal(big.json().code, 'PAYLOAD_TOO_LARGE')
  t.equal((await activity(app, { 'x-api-key': key.key }, { blob: 'x'.repeat(60 * 1024) })).statusCode, 201)
  app.devLog.flush()
  t.same(storedEntries(app).map((e) => [e.action, e.status_code]), [['test.activity', 201]],
    'only the entry that fits is kept')
})

t.test('an organization\'s log past its quota loses its oldest entries; another organization\'s log is ' +
  'untouched', async (t) => {
  const quotas = { storedBytes: 0, passages: 0, developerLogBytes: 200_000, runs: 0 }
  const app = await build(t, { config: { quotas } })
  const a = await signup(app)
  const b = await signup(app)
  await activity(app, b.auth, { n: 'b-0', blob: 'b'.repeat(50_000) })
  app.devLog.flush()
  for (let i = 0; i < 10; i++) {
    t.equal((await activity(app, a.auth, { n: `a-${i}`, blob: 'a'.repeat(50_000) })).statusCode, 201)
    app.devLog.flush()
  }
  const bytesOf = (userId: string) => app.sqlite.prepare(`SELECT coalesce(sum(octet_length(entries)), 0)
    FROM developer_log_chunks WHERE user_id = ?`).pluck().get(userId) as number
  await turnUntil(() => bytesOf(a.userId) <= 200_000)
  t.ok(bytesOf(a.userId) <= 200_000, `the log holds ${bytesOf(a.userId)} bytes, within the quota`)
  const kept = storedEntries(app).filter((e) => e.user_id === a.userId)
    .map((e) => (e.metadata as { n: string }).n)
  t.ok(kept.length >= 2 && kept.length < 10, `${kept.length} entries kept`)
  t.same(kept, Array.from({ length: kept.length }, (_, i) => `a-${10 - kept.length + i}`), 'the newest ones')
  t.same(storedEntries(app).filter((e) => e.user_id === b.userId).map((e) => (e.metadata as { n: string }).n),
    ['b-0'], 'the other organization keeps its entry')
})

t.test('a batch that finds the disk full stays in memory and is written once there is space', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  app.devLog.flush()
  fillDatabase(app.sqlite)
  for (let i = 0; i < 3; i++) {
    app.devLog.record({ userId: u.userId, apiKeyId: null, category: 'activity', action: 'activity.log',
      statusCode: 201, durationMs: 1, metadata: { i, blob: 'x'.repeat(20_000) } })
  }
  t.doesNotThrow(() => app.devLog.flush())
  t.equal(storedEntries(app).length, 0, 'nothing written on a full disk')
  freeDatabase(app.sqlite)
  app.devLog.flush()
  t.same(storedEntries(app).map((e) => (e.metadata as { i: number }).i), [0, 1, 2],
    'every entry written once there is space (before: the batch was dropped)')
})
