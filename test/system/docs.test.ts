import t from 'tap'
import { build } from '../helper.js'

t.test('OpenAPI document and Swagger UI are public', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/api/docs/json' })
  t.equal(res.statusCode, 200)
  const doc = res.json()
  t.match(doc.openapi, /^3\./)
  t.equal(doc.info.title, 'Cairn API')
  for (const path of ['/api/v2/auth/signup', '/api/v2/auth/login', '/api/v2/api-keys', '/api/v2/api-keys/{id}/rotate',
    '/api/health']) {
    t.ok(doc.paths[path], `documents ${path}`)
  }
  t.ok(doc.paths['/api/v2/api-keys'].post.responses['201'], 'response schemas are documented')
  t.notOk(JSON.stringify(doc).includes('key_hash'), 'no stored-secret fields in the schemas')
  const ui = await app.inject({ url: '/api/docs' })
  t.equal(ui.statusCode, 200)
  t.match(ui.headers['content-type'], /html/)
  t.match(ui.body, /swagger/i)
})

t.test('health needs no credentials', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/api/health' })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json()).sort(), ['database', 'status', 'timestamp', 'uptime', 'version'])
})
