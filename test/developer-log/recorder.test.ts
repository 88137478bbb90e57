import t from 'tap'
import { randomBytes } from 'node:crypto'
import { build, signup, createKey } from '../helper.js'
import { loggerOptions, type App } from '../../src/app.js'
import { createTimestamps } from '../../src/developer-log/recorder.js'
import { decodeChunk, decodeEntry, encodeEntry, type StoredEntry } from '../../src/developer-log/format.js'

/** every stored developer-log entry, oldest first, with its chunk's key and user */
function storedEntries(app: App) {
  const chunks = app.sqlite.prepare('SELECT user_id, api_key_id, entries FROM ' +
    'developer_log_chunks ORDER BY seq').all() as Array<{ user_id: string; api_key_id: string | null; entries: string }>
  return chunks.flatMap((c) => (JSON.parse(c.entries) as StoredEntry[]).map(([id, category, action, method, path,
    status_code, duration_ms, metadata, created_at]) =>
    ({ user_id: c.user_id, api_key_id: c.api_key_id, id, category, action, method, path, status_code, duration_ms,
      metadata, created_at })))
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

t.test('the entry format: named fields in code, the stored tuple on disk, and back', async (t) => {
  const entry = {
    id: 'e1', category: 'knowledge', action: 'knowledge.list', method: 'GET', path: '/api/knowledge/documents',
    statusCode: 200, durationMs: 3, metadata: { n: 1 }, createdAt: '2026-01-01T00:00:00.000Z'
  }
  const stored = encodeEntry(entry)
  t.same(stored,
    ['e1', 'knowledge', 'knowledge.list', 'GET', '/api/knowledge/documents', 200, 3, { n: 1 },
      '2026-01-01T00:00:00.000Z'])
  t.same(decodeChunk(JSON.stringify([stored])), [entry])
  t.same(decodeEntry(encodeEntry({ ...entry, metadata: undefined })).metadata, null, 'no metadata is stored as null')
})
