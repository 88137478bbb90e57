import t from 'tap'
import { spawnSync } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { PermanentJobError } from '../../src/jobs/queue.js'
import { INDEX_HOLDER, releaseHolder, writeIntentOf } from '../../src/db/write-intent.js'
import fs from 'node:fs'
import path from 'node:path'
import { build, createKey, runCli, signup, tempDir, uploadDocument } from '../helper.js'
import { needsPrograms } from '../system-tools.js'
import { loggerOptions } from '../../src/app.js'

const runBackup = (dataDir: string, target: string) => runCli('backup', dataDir, target)

t.test('online backup while the service writes, then a restore that compares equal', async (t) => {
  const dataDir = tempDir(t)
  const app = await build(t, { dataDir,
    config: { allowPrivateUrls: true, rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
  const u = await signup(app)
  const h = { ...u.auth, 'x-workspace-id': u.workspaceId }
  // a webhook delivery recorded in the outbox file: the backup carries it
  const rx = http.createServer((_req, res) => res.writeHead(204).end())
  await new Promise<void>((resolve) => rx.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => rx.close(resolve)))
  const hook = (await app.inject({ method: 'POST', url: '/api/v2/developer/webhooks', headers: h,
    payload: { url: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/`, events: ['message.created'] } }))
    .json().data
  t.equal((await app.inject({ method: 'POST', url: `/api/v2/developer/webhooks/${hook.id}/test`, headers: h }))
    .json().data.delivered, true, 'a test ping delivered')
  const deliveries = async (a: typeof app) => (await a.inject({ url: `/api/v2/developer/webhooks/${hook.id}/deliveries`,
    headers: h })).json().data.map((d: { id: string; event_type: string }) => `${d.id} ${d.event_type}`)
  for (let i = 0; i < 50; i++) {
    await app.inject({ method: 'POST', url: '/api/v2/artifacts', headers: h,
      payload: { type: 'task_plan', title: `before ${i}`, content: { i } } })
  }
  const doc = await uploadDocument(app, u, { filename: 'kestrel.txt', content: 'Notes on the amber kestrel.' })
  const key = await createKey(app, u, ['knowledge:read'], { workspaceId: u.workspaceId })
  // keep writing while the backup runs
  let writing = true
  const writer = (async () => {
    let i = 0
    while (writing) await app.inject({ method: 'POST', url: '/api/v2/artifacts', headers: h,
      payload: { type: 'task_plan', title: `during ${i++}` } })
  })()
  const target = path.join(tempDir(t), 'backup.tar.gz')
  const result = await runBackup(dataDir, target)
  writing = false
  await writer
  t.equal(result.code, 0, result.stderr)
  t.match(result.stderr, /backed up .* the database \(\d+ pages\) and \d+ files/)
  t.same(fs.readdirSync(path.dirname(target)), ['backup.tar.gz'], 'one archive, nothing beside it')
  t.equal(fs.statSync(target).mode & 0o777, 0o600, 'readable by its user only')
  t.equal((await runBackup(dataDir, target)).code, 1, 'never overwrites')
  t.notOk(fs.readdirSync(dataDir).some((name) => name.startsWith('.backup')), 'no staging left in the data dir')

  const notEmpty = await runCli('restore', dataDir, target)
  t.equal(notEmpty.code, 1)
  t.match(notEmpty.stderr, /is not empty/, 'a restore never writes over a data dir in use')
  const restored = tempDir(t)
  const restore = await runCli('restore', restored, target)
  t.equal(restore.code, 0, restore.stderr)
  t.match(restore.stderr, /restored .* stored files and 3 key files/)
  t.equal(fs.statSync(path.join(restored, 'cairn.db')).mode & 0o777, 0o600)
  t.equal(fs.statSync(path.join(restored, 'jwt-secret')).mode & 0o777, 0o600)
  const copy = await build(t, { dataDir: restored })
  t.equal(copy.sqlite.pragma('integrity_check', { simple: true }), 'ok')
  const before = (db: typeof copy.sqlite) => db.prepare(`SELECT id, title, content FROM artifacts
    WHERE title LIKE 'before %' ORDER BY id`).all()
  t.same(before(copy.sqlite), before(app.sqlite), 'every artifact written before the backup is in the copy, unchanged')
  t.same(await deliveries(copy), await deliveries(app), 'the delivery records too (moved back into an outbox file)')
  t.equal((await deliveries(copy)).length, 1)
  t.equal(fs.statSync(path.join(restored, 'cairn-outbox.db')).mode & 0o777, 0o600)
  const me = await copy.inject({ url: '/api/v2/auth/me', headers: u.auth })
  t.equal(me.statusCode, 200, 'the restored service accepts the same session')
  t.equal(me.json().data.user.id, u.userId)
  // the copy is the main file alone: the trigram index's file is made again from its passages at the start
  t.ok(fs.existsSync(path.join(restored, 'cairn-trigrams.db')))
  const found = await copy.inject({ method: 'POST', url: '/api/knowledge/search', headers: u.auth,
    payload: { query: 'amber kest', mode: 'substring' } })
  t.same(found.json().results.map((r: { document: { id: string } }) => r.document.id), [doc.id],
    'substring search finds the restored passages')
  const download = await copy.inject({ url: `/api/knowledge/document/${doc.id}/download`, headers: u.auth })
  t.equal(download.statusCode, 200, 'the stored original came back with the database')
  t.equal(download.body, 'Notes on the amber kestrel.')
  const byKey = await copy.inject({ url: `/api/knowledge/document/${doc.id}/download`,
    headers: { authorization: `Bearer ${key.key}` } })
  t.equal(byKey.statusCode, 200, 'an API key made before the backup works on the restored service')
  t.equal(byKey.body, 'Notes on the amber kestrel.')
})

t.test('restore refuses an archive that is not a whole Cairn backup, and writes nothing', async (t) => {
  const dir = tempDir(t)
  fs.mkdirSync(path.join(dir, 'src'))
  fs.writeFileSync(path.join(dir, 'src', 'cairn.db'), 'not a database')
  fs.writeFileSync(path.join(dir, 'src', 'cairn-backup.json'),
    JSON.stringify({ format: 1, created_at: new Date().toISOString(), database: 'cairn.db', files: ['jwt-secret'],
      bytes: 1 }))
  const tar = await import('tar')
  const incomplete = path.join(dir, 'incomplete.tar')
  await tar.create({ file: incomplete, cwd: path.join(dir, 'src') }, ['cairn-backup.json', 'cairn.db'])
  const target = tempDir(t)
  const result = await runCli('restore', target, incomplete)
  t.equal(result.code, 1)
  t.match(result.stderr, /lacks 1 of its files: jwt-secret/)
  t.same(fs.readdirSync(target), [], 'the data dir is left as it was')
  const none = await runCli('restore', target, path.join(dir, 'missing.tar'))
  t.match(none.stderr, /does not exist/)
})

t.test('Prometheus metrics: off by default; on with a bearer token', async (t) => {
  const off = await build(t)
  t.equal((await off.inject({ url: '/metrics' })).statusCode, 404)
  const token = 'metrics-token-0123456789'
  const app = await build(t, { config: { metrics: { enabled: true, token } } })
  const u = await signup(app)
  await app.inject({ url: '/api/v2/auth/me', headers: u.auth })
  await app.inject({ url: '/api/v2/auth/me' })
  t.equal((await app.inject({ url: '/metrics' })).statusCode, 401)
  t.equal((await app.inject({ url: '/metrics',
    headers: { authorization: 'Bearer wrong-token-000000000' } })).statusCode, 401)
  const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /text\/plain/)
  t.match(res.body, /cairn_http_requests_total\{method="GET",route="\/api\/v2\/auth\/me",status="200"\} 1/)
  t.match(res.body, /cairn_http_requests_total\{method="GET",route="\/api\/v2\/auth\/me",status="401"\} 1/)
  t.match(res.body, /cairn_http_request_duration_seconds_bucket\{le="0.1",method="GET",route="\/api\/v2\/auth\/me"\}/)
  t.match(res.body, /cairn_database_size_bytes \d+/)
  t.match(res.body, /^process_resident_memory_bytes \d+/m, 'process metrics keep their standard names')
  t.match(res.body, /^nodejs_eventloop_lag_seconds /m)
  t.match(res.body, /# TYPE cairn_jobs_in_queue gauge/)
  t.match(res.body, /# TYPE cairn_jobs_total counter/)
  t.match(res.body, /# TYPE cairn_webhook_deliveries_total counter/)
  t.match(res.body, /^cairn_db_write_waits_total 0$/m, 'no write has waited for a background thread')
  t.match(res.body, /^cairn_db_write_turns_total 0$/m)
  // a background thread's flag that nobody clears: a request that writes waits its bounded time for its turn (the
  // event loop free), then its write waits its bounded time again (blocking), each counted
  const intent = writeIntentOf(app.sqlite)!
  Atomics.store(intent, INDEX_HOLDER, 1)
  await signup(app)
  releaseHolder(intent, INDEX_HOLDER)
  const after = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` } })).body
  t.match(after, /^cairn_db_write_waits_total [1-9]\d*$/m)
  t.ok(Number(/^cairn_db_write_wait_seconds_total (\S+)$/m.exec(after)?.[1]) >= 0.999,
    'with the time it waited')
  t.match(after, /^cairn_db_write_turns_total [1-9]\d*$/m)
  t.ok(Number(/^cairn_db_write_turn_seconds_total (\S+)$/m.exec(after)?.[1]) >= 0.999, 'and the turn\'s')
})

/** The Prometheus text format's naming rules, as `promtool check metrics` applies them. */
function conventionProblems(text: string): string[] {
  const problems: string[] = []
  const types = new Map<string, string>()
  const helps = new Set<string>()
  for (const line of text.split('\n')) {
    const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
    if (m?.[1] === 'TYPE') types.set(m[2], m[3])
    else if (m?.[1] === 'HELP') helps.add(m[2])
  }
  for (const [name, type] of types) {
    if (!helps.has(name)) problems.push(`${name}: no help text`)
    if (type === 'counter' && !name.endsWith('_total')) {
      problems.push(`${name}: counter metrics should have "_total" suffix`)
    }
    if (type !== 'counter' && name.endsWith('_total')) {
      problems.push(`${name}: non-counter metrics should not have "_total" suffix`)
    }
    if (/[A-Z]/.test(name)) problems.push(`${name}: metric names should be written in snake_case`)
  }
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const name = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line)![1]
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '')
    if (!types.has(family)) problems.push(`${name}: sample without TYPE`)
    for (const [,
      label] of line.matchAll(/[{,]([a-zA-Z_][a-zA-Z0-9_]*)="/g)) if (/[A-Z]/.test(label)) problems.push(`${name}: label ${label} not snake_case`)
  }
  return problems
}

t.test('metrics follow the Prometheus conventions: counters of jobs and webhook deliveries, unmatched ' +
  'routes as one series', async (t) => {
  const app = await build(t, { config: { metrics: { enabled: true }, allowPrivateUrls: true } })
  const u = await signup(app)
  app.jobs.register('metrics_probe',
    async (payload) => { if ((payload as { fail?: boolean }).fail) throw new PermanentJobError('no') })
  app.jobs.enqueue('metrics_probe', {})
  app.jobs.enqueue('metrics_probe', { fail: true })
  await app.jobs.idle()
  // (paths outside /api are the console's: see test/console/serving.test.ts)
  for (const path of ['/api/wp-admin', '/api/.env', '/api/v2/nope']) await app.inject({ url: path })
  // a webhook delivery to a real receiver, recorded by the service
  const received: string[] = []
  const rx = http.createServer((req, res) => {
    req.resume(); req.on('end',
      () => { received.push(req.url!); res.writeHead(200); res.end() })
  })
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r))
  t.teardown(() => rx.close())
  const h = { ...u.auth, 'x-workspace-id': u.workspaceId }
  const hook = await app.inject({ method: 'POST', url: '/api/v2/developer/webhooks', headers: h, payload: { url: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/in`, events: ['message.created'] } })
  t.equal(hook.statusCode, 201, hook.body)
  await app.inject({ method: 'POST', url: `/api/v2/developer/webhooks/${hook.json().data.id}/test`, headers: h })
  await app.jobs.idle()

  const text = (await app.inject({ url: '/metrics' })).body
  t.same(conventionProblems(text), [], 'no naming problems')
  t.match(text, /^cairn_jobs_total\{type="metrics_probe",outcome="completed"\} 1$/m)
  t.match(text, /^cairn_jobs_total\{type="metrics_probe",outcome="failed"\} 1$/m)
  t.match(text, /^cairn_webhook_deliveries_total\{outcome="success"\} [1-9]/m)
  t.match(text, /^cairn_http_requests_total\{method="GET",route="unmatched",status="404"\} 3$/m,
    'unknown paths are one series')
  t.notMatch(text, /wp-admin|\.env/)
  const again = (await app.inject({ url: '/metrics' })).body
  t.equal(/^cairn_webhook_deliveries_total\{outcome="success"\} (\d+)$/m.exec(again)?.[1],
    /^cairn_webhook_deliveries_total\{outcome="success"\} (\d+)$/m.exec(text)?.[1],
    'a scrape does not count deliveries twice')

  // promtool itself (.ci/run installs it; elsewhere the rules above are the check)
  t.test('promtool check metrics', async (t) => {
    if (!needsPrograms(t, ['promtool'], 'apt-get install prometheus')) return
    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
    t.equal(promtool.status, 0, promtool.stdout + promtool.stderr)
    t.equal((promtool.stdout + promtool.stderr).trim(), '', 'promtool finds nothing to complain about')
  })
})

t.test('request ids: a sane x-request-id is kept, anything else replaced; on every answer, in error bodies ' +
  'and in the log', async (t) => {
  const lines: string[] = []
  const app = await build(t, { logger: loggerOptions('info', { write: (l: string) => { lines.push(l) } }) })
  const kept = await app.inject({ url: '/api/health', headers: { 'x-request-id': 'trace-42.a:b_c' } })
  t.equal(kept.headers['x-request-id'], 'trace-42.a:b_c')
  const refused = await app.inject({ url: '/api/v2/auth/me', headers: { 'x-request-id': 'bad id\u0007<script>' } })
  t.match(refused.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'an unsafe id is replaced by a generated one')
  t.equal(refused.statusCode, 401)
  t.equal(refused.json().requestId, refused.headers['x-request-id'], 'the error body names the request')
  t.equal(refused.headers['www-authenticate'], 'Bearer', '401 names the scheme')
  const tooLong = await app.inject({ url: '/api/health', headers: { 'x-request-id': 'x'.repeat(129) } })
  t.not(tooLong.headers['x-request-id'], 'x'.repeat(129))
  const generated = await app.inject({ url: '/api/nowhere' })
  t.equal(generated.statusCode, 404)
  t.match(generated.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  t.equal(generated.json().requestId, generated.headers['x-request-id'])
  const a = await app.inject({ url: '/api/health' })
  const b = await app.inject({ url: '/api/health' })
  t.not(a.headers['x-request-id'], b.headers['x-request-id'], 'generated ids differ')
  const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.reqId === 'trace-42.a:b_c')
  t.ok(logged.length > 0, 'the log lines of the request carry its id')
})

t.test('what every request pays: one hook sets the headers every answer carries, one refuses an address past its ' +
  'failed authentications, one checks credentials',
async (t) => {
  const app = await build(t)
  const routes = app.printRoutes({ includeHooks: true, commonPrefix: false }).split('\n')
  const at = routes.findIndex((l) => l.includes('/api/health (GET)'))
  const onRequest = routes.slice(at + 1).find((l) => l.includes('(onRequest)'))!
  t.equal((JSON.parse(onRequest.slice(onRequest.indexOf('['))) as string[]).length, 3)
  const res = await app.inject({ url: '/api/health' })
  t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  t.equal(res.headers['x-content-type-options'], 'nosniff')
})

t.test('CORS: off by default; with CAIRN_CORS_ORIGINS, listed origins get headers and preflight', async (t) => {
  const off = await build(t)
  const plain = await off.inject({ url: '/api/health', headers: { origin: 'https://app.example.org' } })
  t.notOk(plain.headers['access-control-allow-origin'], 'no CORS headers by default')
  const noPreflight = await off.inject({ method: 'OPTIONS', url: '/api/v2/artifacts', headers: { origin: 'https://app.example.org', 'access-control-request-method': 'POST' } })
  t.notOk(noPreflight.headers['access-control-allow-origin'])

  const app = await build(t, { config: { corsOrigins: ['https://app.example.org'] } })
  const preflight = await app.inject({
    method: 'OPTIONS', url: '/api/v2/artifacts',
    headers: { origin: 'https://app.example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-workspace-id, idempotency-key' }
  })
  t.equal(preflight.statusCode, 204, 'the preflight needs no credentials')
  t.equal(preflight.headers['access-control-allow-origin'], 'https://app.example.org')
  t.match(preflight.headers['access-control-allow-methods'], /POST/)
  t.match(preflight.headers['access-control-allow-headers'], /x-workspace-id/)
  const u = await signup(app)
  const real = await app.inject({ url: '/api/v2/auth/me', headers: { ...u.auth, origin: 'https://app.example.org' } })
  t.equal(real.headers['access-control-allow-origin'], 'https://app.example.org')
  t.match(real.headers['access-control-expose-headers'], /x-request-id/)
  const refused = await app.inject({ url: '/api/v2/auth/me', headers: { origin: 'https://app.example.org' } })
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers['access-control-allow-origin'], 'https://app.example.org', 'a browser can read the 401')
  const other = await app.inject({ url: '/api/health', headers: { origin: 'https://evil.example' } })
  t.notOk(other.headers['access-control-allow-origin'], 'an origin not listed gets nothing')
})
