import t from 'tap'
import SwaggerParser from '@apidevtools/swagger-parser'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { build, signup } from '../helper.js'
import { OPERATIONS, TAGS } from '../../src/http/openapi-operations.js'
import { ERROR_CODES } from '../../src/http/errors.js'
import type { App } from '../../src/app.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
const METHODS = ['get', 'post', 'put', 'patch', 'delete']

/**
 * Lint findings accepted on purpose, each with its reason.
 * - no-ambiguous-paths: the paths are fixed by the published API; a static segment (`audio`, `conversation`,
 *   `workflow`) always wins over a parameter in Fastify's router, so each request has one route.
 * - operation-4xx-response on the two health routes: they take no input and need no credentials, so
 *   they have no client error to answer (only 200, or 503 when the database or the process is going down).
 */
const ALLOWED = [
  { rule: 'no-ambiguous-paths',
    pointer: /^#\/paths\/~1api~1v2~1(voice-notes~1\{id\}~1transcri(be|pt)|artifacts~1(conversation|workflow))/ },
  { rule: 'operation-4xx-response', pointer: /^#\/paths\/~1api~1(health|knowledge~1health)\/get\/responses$/ }
]

function operations(doc: Json): Array<{ path: string; method: string; op: Json }> {
  const out = []
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const method of METHODS) if (item[method]) out.push({ path, method, op: item[method] as Json })
  }
  return out
}

async function documentOf(app: App): Promise<Json> {
  const res = await app.inject({ url: '/api/docs/json' })
  return res.json()
}

t.test('every registered route has an entry in the operations table, and every entry a route', async (t) => {
  const app = await build(t)
  const routes = app.routeTable
    .filter((r) => r.method !== 'HEAD' && !r.url.startsWith('/api/docs') && r.url !== '/metrics')
    .map((r) => `${r.method} ${r.url}`)
  for (const key of routes) t.ok(OPERATIONS[key], `${key} is in src/http/openapi-operations.ts`)
  for (const key of Object.keys(OPERATIONS)) t.ok(routes.includes(key), `${key} is a registered route`)
  const ids = Object.values(OPERATIONS).map((o) => o.id)
  t.equal(new Set(ids).size, ids.length, 'operation ids are unique')
  const tags = new Set(TAGS.map((x) => x.name))
  for (const o of Object.values(OPERATIONS)) t.ok(tags.has(o.tag), `tag ${o.tag} of ${o.id} is declared`)
})

t.test('the document validates and lints clean with Redocly\'s recommended rules', async (t) => {
  const app = await build(t)
  const doc = await documentOf(app)
  await t.resolves(SwaggerParser.validate(structuredClone(doc) as never), 'swagger-parser validates it')
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config })
  const unexpected = problems.filter((p) => !ALLOWED.some((a) => a.rule === p.ruleId &&
    a.pointer.test(p.location[0]?.pointer ?? '')))
  t.same(unexpected.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`), [],
    'no errors or warnings beyond the allow-list')
  t.ok(problems.length <= 6, 'the allow-list stays short')
})

t.test('operations carry ids, declared tags, descriptions, security and the shared answers', async (t) => {
  const app = await build(t)
  const doc = await documentOf(app)
  t.notOk(JSON.stringify(doc).includes('Default Response'), 'every response says what it is')
  const declared = new Set((doc.tags as Json[]).map((x) => x.name))
  t.same(doc.components.schemas.Error.properties.code.enum, [...ERROR_CODES].sort(),
    'the Error schema lists every code')
  const publicOps = ['POST /api/v2/auth/signup', 'POST /api/v2/auth/login', 'GET /api/health',
    'GET /api/knowledge/health', 'GET /api/v2/artifacts/meta/types', 'POST /api/v2/invitations/accept',
    'POST /api/v2/auth/password-reset']
  for (const { path, method, op } of operations(doc)) {
    const name = `${method.toUpperCase()} ${path}`
    t.match(op.operationId, /^[a-z][A-Za-z0-9]+$/, `${name} has an operationId`)
    t.ok(op.tags?.length === 1 && declared.has(op.tags[0]), `${name} has a declared tag`)
    t.ok(op.description?.length > 10, `${name} has a description`)
    const statuses = Object.keys(op.responses)
    t.ok(statuses.some((s) => /^2/.test(s)), `${name} declares its success`)
    for (const [status, res] of Object.entries(op.responses as Json)) {
      t.ok(res.headers?.['x-request-id'], `${name} ${status} documents x-request-id`)
      if (Number(status) >= 400 && !(path.endsWith('/health') && status === '503')) {
        t.same(res.content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' },
          `${name} ${status} uses the Error schema`)
      }
    }
    const params = (op.parameters ?? []).map((p: Json) => p.$ref ?? p.name)
    t.ok(params.includes('#/components/parameters/RequestId'), `${name} documents x-request-id`)
    if (publicOps.includes(name)) {
      t.same(op.security, [], `${name} is public`)
      if (name !== 'POST /api/v2/auth/login') t.notOk(op.responses['401'], `${name} does not answer 401`)
    } else {
      t.equal(op.security, undefined, `${name} uses the global security`)
      t.ok(op.responses['401']?.headers?.['www-authenticate'], `${name} declares 401 with WWW-Authenticate`)
      t.ok(op.responses['403'], `${name} declares 403`)
      t.ok(params.includes('#/components/parameters/WorkspaceId'), `${name} documents x-workspace-id`)
    }
    if (!path.endsWith('/health')) {
      t.ok(op.responses['429']?.headers?.['retry-after'] && op.responses['429'].headers['x-ratelimit-limit'],
        `${name} declares 429 with its headers`)
    }
    if (method === 'post' && path !== '/api/v2/chat/stream') {
      t.ok(params.includes('#/components/parameters/IdempotencyKey'), `${name} documents Idempotency-Key`)
      t.ok(op.responses['422'] && op.responses['409'], `${name} declares the Idempotency-Key answers`)
      const ok = Object.entries(op.responses as Json).find(([s]) => /^2/.test(s))![1]
      t.ok(ok.headers['idempotency-replayed'], `${name} documents Idempotency-Replayed`)
    }
    if (op.requestBody) t.ok(op.responses['413'] && op.responses['415'], `${name} declares 413 and 415`)
    for (const p of op.parameters ?? []) {
      if (p.schema?.default !== undefined) {
        t.equal(p.required, false, `${name} ${p.name} has a default, so it is optional`)
      }
    }
    const body = op.requestBody?.content?.['application/json']?.schema
    for (const [prop, s] of Object.entries((body?.properties ?? {}) as Json)) {
      if (s.default !== undefined) {
        t.notOk(body.required?.includes(prop), `${name} body ${prop} has a default, so it is optional`)
      }
    }
  }
  const ids = operations(doc).map((o) => o.op.operationId)
  t.equal(new Set(ids).size, ids.length, 'operation ids are unique')
  t.equal(doc.paths['/api/knowledge/search'].post.operationId, 'knowledgeSearch')
  t.equal(doc.paths['/api/v2/artifacts'].post.operationId, 'artifactsCreate')
})

t.test('uploads, downloads, audio and the chat stream declare their real media types', async (t) => {
  const app = await build(t)
  const doc = await documentOf(app)
  for (const [path, field] of [['/api/knowledge/upload', 'file'], ['/api/knowledge/upload/batch', 'files'],
    ['/api/v2/voice-notes/audio', 'file']]) {
    const content = doc.paths[path].post.requestBody.content
    t.same(Object.keys(content), ['multipart/form-data'], `${path} takes multipart/form-data`)
    const schema = content['multipart/form-data'].schema
    t.ok(schema.required.includes(field))
    const fileSchema = schema.properties[field].items ?? schema.properties[field]
    t.equal(fileSchema.format, 'binary', `${path} ${field} is a file`)
  }
  t.ok(doc.paths['/api/knowledge/document/{id}/download'].get.responses['200'].content['application/octet-stream'])
  t.ok(doc.paths['/api/v2/voice-notes/audio/{id}'].get.responses['200'].content['audio/*'])
  t.same(Object.keys(doc.paths['/api/v2/chat/stream'].post.responses['200'].content), ['text/event-stream'])
})

t.test('what routes answer is what the document declares (credentials missing, wrong media type)', async (t) => {
  const app = await build(t)
  const doc = await documentOf(app)
  const u = await signup(app)
  const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000')
  for (const { path, method, op } of operations(doc)) {
    const url = concrete(path)
    const anonymous = await app.inject({ method: method.toUpperCase() as 'GET', url })
    t.ok(op.responses[String(anonymous.statusCode)],
      `${method.toUpperCase()} ${path} without credentials: ${anonymous.statusCode} is declared`)
    if (anonymous.statusCode >= 400) {
      t.equal(anonymous.json().code && typeof anonymous.json().requestId, 'string', 'error bodies carry the request id')
    }
    if (op.requestBody) {
      const wrong = await app.inject({ method: method.toUpperCase() as 'POST', url,
        headers: { ...u.auth, 'content-type': 'application/xml' }, payload: '<x/>' })
      t.ok(op.responses[String(wrong.statusCode)],
        `${method.toUpperCase()} ${path} with an XML body: ${wrong.statusCode} is declared`)
    }
  }
})
