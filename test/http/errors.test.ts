import t from 'tap'
import { build, signup, createKey } from '../helper.js'

const SHAPE = ['success', 'statusCode', 'error', 'code', 'message']

t.test('one error shape for 400, 401, 403, 404 and 500', async (t) => {
  const app = await build(t, {
    before: (app) => {
      app.get('/api/v2/test/boom', { config: { auth: 'public' } }, async () => {
        throw new Error('secret internal detail: /var/lib/cairn password=hunter2')
      })
      app.get('/api/v2/test/crash-typeerror', { config: { auth: 'public' } }, async () => {
        const o: { a?: { b: string } } = {}
        return o.a!.b
      })
    }
  })
  const u = await signup(app)
  const k = await createKey(app, u, ['read'])

  const cases = [
    { name: '400 validation',
      res: await app.inject({ method: 'POST', url: '/api/v2/auth/login', payload: { email: 5 } }), status: 400,
      code: 'VALIDATION_ERROR' },
    { name: '400 bad JSON',
      res: await app.inject({ method: 'POST', url: '/api/v2/auth/login',
        headers: { 'content-type': 'application/json' }, payload: '{"email":' }), status: 400, code: 'INVALID_JSON' },
    { name: '401', res: await app.inject({ url: '/api/v2/auth/me' }), status: 401, code: 'UNAUTHORIZED' },
    { name: '403', res: await app.inject({ url: '/api/v2/auth/me', headers: { 'x-api-key': k.key } }), status: 403,
      code: 'API_KEY_NOT_ALLOWED' },
    { name: '404 route', res: await app.inject({ url: '/api/v2/nothing-here' }), status: 404, code: 'NOT_FOUND' },
    { name: '404 resource',
      res: await app.inject({ url: '/api/v2/api-keys/00000000-0000-4000-8000-000000000000', headers: u.auth }),
      status: 404, code: 'NOT_FOUND' },
    { name: '415',
      res: await app.inject({ method: 'POST', url: '/api/v2/auth/login',
        headers: { 'content-type': 'application/x-nothing' }, payload: 'x' }), status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE' },
    { name: '500', res: await app.inject({ url: '/api/v2/test/boom' }), status: 500, code: 'INTERNAL_ERROR' },
    { name: '500 TypeError', res: await app.inject({ url: '/api/v2/test/crash-typeerror' }), status: 500,
      code: 'INTERNAL_ERROR' }
  ]
  for (const c of cases) {
    t.equal(c.res.statusCode, c.status, c.name)
    t.match(c.res.headers['content-type'], /application\/json/, `${c.name} is JSON`)
    const body = c.res.json()
    for (const field of SHAPE) t.ok(field in body, `${c.name} has ${field}`)
    t.equal(body.success, false)
    t.equal(body.statusCode, c.status)
    t.equal(body.code, c.code, `${c.name} code`)
    t.type(body.error, 'string')
    t.type(body.message, 'string')
    t.equal(body.requestId, c.res.headers['x-request-id'], `${c.name} names its request`)
  }
  const boom = cases.find((c) => c.name === '500')!.res
  t.same(boom.json(),
    { success: false, statusCode: 500, error: 'Internal Server Error', code: 'INTERNAL_ERROR',
      message: 'Internal server error', requestId: boom.headers['x-request-id'] })
  t.notOk(/hunter2|var\/lib|stack|at /.test(boom.body), 'no internal message or stack trace')
  const typeError = cases.find((c) => c.name === '500 TypeError')!.res
  t.notOk(/Cannot read|undefined/.test(typeError.body))
  t.equal(cases[0].res.json().error, 'Bad Request')
})

t.test('limits above a list maximum are 400', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const k = await createKey(app, u, ['read'])
  const res = await app.inject({ url: `/api/v2/developer/api-keys/${k.id}/usage?days=91`, headers: u.auth })
  t.equal(res.statusCode, 400)
  t.equal(res.json().code, 'VALIDATION_ERROR')
})
