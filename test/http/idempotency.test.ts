import t from 'tap'
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
  const sameKeyOtherCaller = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: { ...other.auth, 'idempotency-key': 'create-ws-1' }, payload: { name: 'Once' } })
  t.equal(sameKeyOtherCaller.statusCode, 201, 'keys are per caller')
  t.notOk(sameKeyOtherCaller.headers['idempotency-replayed'])

  // the first still running: 409
  const slowHeaders = { ...u.auth, 'idempotency-key': 'slow-1' }
  const pending = app.inject({ method: 'POST', url: '/api/v2/test/slow', headers: slowHeaders, payload: { a: 1 } })
  while (slowCalls === 0) await new Promise((r) => setTimeout(r, 5))
  const inFlight = await app.inject({ method: 'POST', url: '/api/v2/test/slow', headers: slowHeaders, payload: { a: 1 } })
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
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/test/boom', headers: boomHeaders, payload: {} })).statusCode, 500)
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/test/boom', headers: boomHeaders, payload: {} })).statusCode, 500)
  t.equal(boomCalls, 2)

  // 4xx responses are kept
  const badHeaders = { ...u.auth, 'idempotency-key': 'bad-1' }
  const bad = await app.inject({ method: 'POST', url: '/api/v2/users', headers: badHeaders, payload: { email: 'taken@example.test', password: 'long enough' } })
  t.equal(bad.statusCode, 201)
  const badAgain = await app.inject({ method: 'POST', url: '/api/v2/users', headers: badHeaders, payload: { email: 'taken@example.test', password: 'long enough' } })
  t.equal(badAgain.statusCode, 201, 'replayed, not 409 email taken')
  t.equal(badAgain.headers['idempotency-replayed'], 'true')

  const tooLong = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: { ...u.auth, 'idempotency-key': 'x'.repeat(256) }, payload: { name: 'X' } })
  t.equal(tooLong.statusCode, 400)

  // expiry after 24 h
  app.sqlite.prepare(`UPDATE idempotency_keys SET created_at = ?`).run(new Date(Date.now() - 25 * 3600_000).toISOString())
  const expired = await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers, payload: { name: 'Twice' } })
  t.equal(expired.statusCode, 201, 'an expired key is free again')
  t.notOk(expired.headers['idempotency-replayed'])
})

t.test('Idempotency-Key on an upload: a retry with a new multipart boundary is replayed; other content is refused', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const headers = { ...u.auth, 'idempotency-key': 'upload-1' }
  const file = { filename: 'notes.md', content: '# Notes\n\nThe retry must not make a second document.\n', contentType: 'text/markdown' }
  const send = (body: ReturnType<typeof multipart>) =>
    app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...headers, ...body.headers }, payload: body.payload })

  const first = await send(multipart([file], {}, true, '----cairn-aaaaaaaaaaaaaaaa'))
  t.equal(first.statusCode, 201, first.body)
  const retry = await send(multipart([file], {}, true, '----cairn-bbbbbbbbbbbbbbbb'))
  t.equal(retry.statusCode, 201)
  t.equal(retry.headers['idempotency-replayed'], 'true', 'a new boundary of the same length is the same upload')
  t.equal(retry.body, first.body)
  const quoted = multipart([file], {}, true, '----cairn-cccccccccccccccc')
  quoted.headers['content-type'] = 'multipart/form-data; boundary="----cairn-cccccccccccccccc"'
  t.equal((await send({ ...quoted, payload: quoted.payload })).headers['idempotency-replayed'], 'true', 'quoted boundary too')
  const docs = await app.inject({ url: '/api/knowledge/documents', headers: u.auth })
  t.equal(docs.json().count, 1, 'one document')

  const other = await send(multipart([{ ...file, content: file.content + 'and more\n' }], {}, true, '----cairn-dddddddddddddddd'))
  t.equal(other.statusCode, 422, 'other content (another length) reuses the key: refused')
  t.equal(other.json().code, 'IDEMPOTENCY_KEY_REUSED')
})
