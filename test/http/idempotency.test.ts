import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { build, signup, multipart } from '../helper.js'

t.test('Idempotency-Key: replay, 422 on a different request, 409 while in flight', async (t) => {
  let release: () => void = () => {}
  let slowCalls = 0
  let boomCalls = 0
  const app = await build(t, {
    before: (app) => {
      app.post('/api/v2/test/slow', { config: { auth: 'jwt' } }, async (_req, reply) => {
        slowCalls++
        await new Promise<void>((resolve) => { release = resolve })
        reply.code(201)
        return { success: true, n: slowCalls }
      })
      app.post('/api/v2/test/boom', { config: { auth: 'jwt' } }, async () => {
        boomCalls++
        throw new Error('transient')
      })
    }
  })
  const u = await signup(app)
  const headers = { ...u.auth, 'idempotency-key': 'create-ws-1' }

  const first = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers, payload: { name: 'Once' } })
  t.equal(first.statusCode, 201)
  t.notOk(first.headers['idempotency-replayed'])
  const replay = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers, payload: { name: 'Once' } })
  t.equal(replay.statusCode, 201)
  t.equal(replay.headers['idempotency-replayed'], 'true')
  t.equal(replay.body, first.body, 'same body')
  const list = await app.inject({ url: '/api/v2/workspaces', headers: u.auth })
  t.equal(list.json().data.filter((w: { name: string }) => w.name === 'Once').length, 1, 'did nothing again')

  const different = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers, payload: { name: 'Twice' } })
  t.equal(different.statusCode, 422)
  t.equal(different.json().code, 'IDEMPOTENCY_KEY_REUSED')

  const other = await signup(app)
  const sameKeyOtherCaller = await app.inject({ method: 'POST', url: '/api/v2/workspaces',
    headers: { ...other.auth, 'idempotency-key': 'create-ws-1' }, payload: { name: 'Once' } })
  t.equal(sameKeyOtherCaller.statusCode, 201, 'keys are per caller')
  t.notOk(sameKeyOtherCaller.headers['idempotency-replayed'])

  // the first still running: 409
  const slowHeaders = { ...u.auth, 'idempotency-key': 'slow-1' }
  const pending = app.inject({ method: 'POST', url: '/api/v2/test/slow', headers: slowHeaders, payload: { a: 1 } })
  while (slowCalls === 0) await new Promise((r) => setTimeout(r, 5))
  const inFlight = await app.inject({ method: 'POST', url: '/api/v2/test/slow', headers: slowHeaders,
    payload: { a: 1 } })
  t.equal(inFlight.statusCode, 409)
  t.equal(inFlight.json().code, 'IDEMPOTENCY_IN_FLIGHT')
  release()
  t.equal((await pending).statusCode, 201)
  const after = await app.inject({ method: 'POST', url: '/api/v2/test/slow', headers: slowHeaders, payload: { a: 1 } })
  t.equal(after.statusCode, 201)
  t.equal(after.headers['idempotency-replayed'], 'true')
  t.equal(slowCalls, 1)

  // 5xx responses are not kept: a retry runs again
  const boomHeaders = { ...u.auth, 'idempotency-key': 'boom-1' }
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/test/boom', headers: boomHeaders,
    payload: {} })).statusCode, 500)
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/test/boom', headers: boomHeaders,
    payload: {} })).statusCode, 500)
  t.equal(boomCalls, 2)

  // 4xx responses are kept
  const badHeaders = { ...u.auth, 'idempotency-key': 'bad-1' }
  const bad = await app.inject({ method: 'POST', url: '/api/v2/users', headers: badHeaders,
    payload: { email: 'taken@example.test', password: 'long enough' } })
  t.equal(bad.statusCode, 201)
  const badAgain = await app.inject({ method: 'POST', url: '/api/v2/users', headers: badHeaders,
    payload: { email: 'taken@example.test', password: 'long enough' } })
  t.equal(badAgain.statusCode, 201, 'replayed, not 409 email taken')
  t.equal(badAgain.headers['idempotency-replayed'], 'true')

  const tooLong = await app.inject({ method: 'POST', url: '/api/v2/workspaces',
    headers: { ...u.auth, 'idempotency-key': 'x'.repeat(256) }, payload: { name: 'X' } })
  t.equal(tooLong.statusCode, 400)

  // expiry after 24 h
  app.sqlite.prepare(`UPDATE idempotency_keys
    SET created_at = ?`).run(new Date(Date.now() - 25 * 3600_000).toISOString())
  const expired = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers, payload: { name: 'Twice' } })
  t.equal(expired.statusCode, 201, 'an expired key is free again')
  t.notOk(expired.headers['idempotency-replayed'])
})

t.test('Idempotency-Key on an upload: a retry with a new multipart boundary is replayed; other ' +
  'content is refused', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const headers = { ...u.auth, 'idempotency-key': 'upload-1' }
  const file = { filename: 'notes.md', content: '# Notes\n\nThe retry must not make a second document.\n',
    contentType: 'text/markdown' }
  const send = (body: ReturnType<typeof multipart>) =>
    app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...headers, ...body.headers },
      payload: body.payload })

  const first = await send(multipart([file], {}, true, '----cairn-aaaaaaaaaaaaaaaa'))
  t.equal(first.statusCode, 201, first.body)
  const retry = await send(multipart([file], {}, true, '----cairn-bbbbbbbbbbbbbbbb'))
  t.equal(retry.statusCode, 201)
  t.equal(retry.headers['idempotency-replayed'], 'true', 'a new boundary of the same length is the same upload')
  t.equal(retry.body, first.body)
  const quoted = multipart([file], {}, true, '----cairn-cccccccccccccccc')
  quoted.headers['content-type'] = 'multipart/form-data; boundary="----cairn-cccccccccccccccc"'
  t.equal((await send({ ...quoted, payload: quoted.payload })).headers['idempotency-replayed'], 'true',
    'quoted boundary too')
  const docs = await app.inject({ url: '/api/knowledge/documents', headers: u.auth })
  t.equal(docs.json().count, 1, 'one document')

  const other = await send(multipart([{ ...file, content: file.content + 'and more\n' }], {}, true,
    '----cairn-dddddddddddddddd'))
  t.equal(other.statusCode, 422, 'other content (another length) reuses the key: refused')
  t.equal(other.json().code, 'IDEMPOTENCY_KEY_REUSED')
})

t.test('kept responses hold no secret in clear; a replay never reveals a key that was ' +
  'revoked or rotated', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const u = await signup(app)
  const post = (url: string, key: string, payload: object, extra: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url, headers: { ...u.auth, ...extra, 'idempotency-key': key }, payload })

  const created = await post('/api/v2/api-keys', 'key-for-the-ci-7f3a', { name: 'ci', scopes: ['knowledge:read'] })
  t.equal(created.statusCode, 201)
  t.equal(created.headers['cache-control'], 'no-store')
  const value: string = created.json().data.key
  const hook = await post('/api/v2/developer/webhooks', 'hook-once-91c2', { url: 'http://127.0.0.1:9/hook', events: ['message.created'] }, { 'x-workspace-id': u.workspaceId })
  t.equal(hook.statusCode, 201)
  t.equal(hook.headers['cache-control'], 'no-store')
  const signing: string = hook.json().data.signing_secret

  // the database file and its write-ahead log: neither the key value nor the Idempotency-Key values
  const files = ['cairn.db', 'cairn.db-wal'].map((f) => path.join(app.config.dataDir,
    f)).filter((f) => fs.existsSync(f))
  const bytes = Buffer.concat(files.map((f) => fs.readFileSync(f)))
  for (const secret of [value, value.slice(-20), 'key-for-the-ci-7f3a',
    'hook-once-91c2']) t.equal(bytes.indexOf(secret), -1, `${secret.slice(0, 12)}… not in the database files`)
  const kept = JSON.stringify(app.sqlite.prepare('SELECT * FROM idempotency_keys').all())
  t.notOk(kept.includes(signing) || kept.includes(signing.slice(6)), 'the signing secret is not kept in clear')
  t.notOk(kept.includes(value.slice(-20)), 'nor the key value')

  // replays while the secrets still work: the same answer
  const again = await post('/api/v2/api-keys', 'key-for-the-ci-7f3a', { name: 'ci', scopes: ['knowledge:read'] })
  t.equal(again.statusCode, 201)
  t.equal(again.headers['idempotency-replayed'], 'true')
  t.equal(again.headers['cache-control'], 'no-store')
  t.equal(again.body, created.body)

  // revoked: the replay is refused and shows nothing
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/api-keys/${created.json().data.id}`,
    headers: u.auth })).statusCode, 200)
  const afterRevoke = await post('/api/v2/api-keys', 'key-for-the-ci-7f3a', { name: 'ci', scopes: ['knowledge:read'] })
  t.equal(afterRevoke.statusCode, 409)
  t.equal(afterRevoke.json().code, 'IDEMPOTENCY_SECRET_GONE')
  t.notOk(afterRevoke.body.includes(value.slice(-20)))

  // rotated: the old creation is not replayed, the rotation is (its key still works)
  const second = await post('/api/v2/api-keys', 'second-key', { name: 'two', scopes: ['knowledge:read'] })
  const rotated = await post(`/api/v2/api-keys/${second.json().data.id}/rotate`, 'rotate-1', {})
  t.equal(rotated.statusCode, 201)
  t.equal(rotated.headers['cache-control'], 'no-store')
  t.equal((await post('/api/v2/api-keys', 'second-key', { name: 'two', scopes: ['knowledge:read'] })).statusCode, 409,
    'creation of a rotated key: refused')
  const rotateAgain = await post(`/api/v2/api-keys/${second.json().data.id}/rotate`, 'rotate-1', {})
  t.equal(rotateAgain.statusCode, 201)
  t.equal(rotateAgain.body, rotated.body, 'the rotation is replayed while its key works')

  // a deleted webhook's secret is not handed out again
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/developer/webhooks/${hook.json().data.id}`,
    headers: { ...u.auth, 'x-workspace-id': u.workspaceId } })).statusCode, 200)
  const hookAgain = await post('/api/v2/developer/webhooks', 'hook-once-91c2', { url: 'http://127.0.0.1:9/hook', events: ['message.created'] }, { 'x-workspace-id': u.workspaceId })
  t.equal(hookAgain.statusCode, 409)
  t.notOk(hookAgain.body.includes(signing))

  // another caller with the same Idempotency-Key neither finds nor decrypts the first one's answer
  const other = await signup(app)
  const theirs = await app.inject({ method: 'POST', url: '/api/v2/api-keys',
    headers: { ...other.auth, 'idempotency-key': 'rotate-1' }, payload: { name: 'x', scopes: ['knowledge:read'] } })
  t.equal(theirs.statusCode, 201)
  t.notOk(theirs.headers['idempotency-replayed'])
})

t.test('a 4xx first answer, schema validation included, is kept and replayed', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const headers = { ...u.auth, 'idempotency-key': 'invalid-1' }
  const first = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers, payload: { nom: 'typo' } })
  t.equal(first.statusCode, 400)
  t.equal(first.json().code, 'VALIDATION_ERROR')
  const again = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers, payload: { nom: 'typo' } })
  t.equal(again.statusCode, 400)
  t.equal(again.headers['idempotency-replayed'], 'true')
  t.equal(again.body, first.body)
  const different = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers, payload: { name: 'fixed' } })
  t.equal(different.statusCode, 422, 'the key is taken by the first request')
})

t.test('security headers: nosniff everywhere, no-store on secrets, a content security ' +
  'policy on the docs', async (t) => {
  const app = await build(t)
  const signed = await app.inject({ method: 'POST', url: '/api/v2/auth/signup',
    payload: { email: 'h@example.test', password: 'long enough pw' } })
  t.equal(signed.headers['cache-control'], 'no-store', 'sign-up returns a token')
  const login = await app.inject({ method: 'POST', url: '/api/v2/auth/login',
    payload: { email: 'h@example.test', password: 'long enough pw' } })
  t.equal(login.headers['cache-control'], 'no-store')
  const token = login.json().data.token
  for (const [url, status] of [['/api/v2/workspaces', 200], ['/api/v2/nowhere', 404], ['/api/health', 200],
    ['/api/docs/json', 200]] as const) {
    const res = await app.inject({ url, headers: { authorization: `Bearer ${token}` } })
    t.equal(res.statusCode, status, url)
    t.equal(res.headers['x-content-type-options'], 'nosniff', url)
    t.not(res.headers['cache-control'], 'no-store', `${url}: cacheable as before`)
  }
  t.equal((await app.inject({ url: '/api/v2/workspaces' })).headers['x-content-type-options'], 'nosniff',
    'on a 401 too')
  const page = await app.inject({ url: '/api/docs/' })
  t.equal(page.statusCode, 200)
  const csp = String(page.headers['content-security-policy'])
  t.match(csp, /default-src 'self'/)
  t.match(csp, /script-src 'self'(;|$)/, 'no inline or foreign scripts')
  t.match(csp, /object-src 'none'/)
  // Swagger UI works under it: every script of the page is a same-origin file, none inline, and each is served
  const scripts = [...page.body.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
  t.ok(scripts.length >= 3)
  for (const [, attrs, inline] of scripts) {
    const src = /src="([^"]+)"/.exec(attrs)?.[1]
    t.ok(src && !/^[a-z]+:|^\/\//i.test(src), `same-origin script ${src}`)
    t.equal(inline.trim(), '', 'no inline code')
    const asset = await app.inject({ url: new URL(src!, 'http://x/api/docs/').pathname })
    t.equal(asset.statusCode, 200, String(src))
    t.match(String(asset.headers['content-security-policy']), /script-src 'self'/)
  }
  const init = await app.inject({ url: '/api/docs/static/swagger-initializer.js' })
  t.notMatch(init.body.replace(/\/\/.*$/gm, ''), /https?:\/\//, 'the initializer loads the document from this origin')
})
