import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import SwaggerParser from '@apidevtools/swagger-parser'
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript'
import { build, createKey, multipart, signup, tempDir } from '../helper.js'
import { ARTIFACT_STATUSES, ARTIFACT_TYPES, REVIEW_POLICIES } from '../../schema/api/artifacts.js'
import { SEARCH_KINDS } from '../../schema/api/search.js'
import { UNIFIED_KINDS } from '../../src/search/kinds.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
const METHODS = ['get', 'post', 'put', 'patch', 'delete']

/** What generated clients read: the OpenAPI document of a fresh app. */
async function document(t: Test): Promise<Json> {
  const app = await build(t)
  const res = await app.inject({ url: '/api/docs/json' })
  t.equal(res.statusCode, 200)
  return res.json() as Json
}

t.test('no header parameter is declared `format: uuid` (generators make it a UUID object, not a string)',
  async (t) => {
    const doc = await document(t)
    const resolved = await SwaggerParser.dereference(structuredClone(doc) as never) as unknown as Json
    const headers: Array<{ where: string; schema: Json }> = []
    for (const [name, p] of Object.entries((doc.components?.parameters ?? {}) as Record<string, Json>)) {
      if (p.in === 'header') headers.push({ where: `components.parameters.${name}`, schema: p.schema as Json })
    }
    for (const [route, item] of Object.entries(resolved.paths as Json)) {
      for (const method of METHODS) {
        for (const p of ((item[method]?.parameters ?? []) as Json[])) {
          if (p.in === 'header') headers.push({ where: `${method.toUpperCase()} ${route} ${p.name}`, schema: p.schema })
        }
      }
    }
    t.ok(headers.some((h) => h.where.endsWith('x-workspace-id')), 'x-workspace-id is among them')
    t.same(headers.filter((h) => h.schema?.format === 'uuid').map((h) => h.where), [],
      'header parameters are plain strings')
    const workspace = (doc.components.parameters as Json).WorkspaceId
    t.match(workspace.schema, { type: 'string', pattern: /^\^/ }, 'x-workspace-id: a string with a pattern')
    t.ok(new RegExp(workspace.schema.pattern as string).test('6f1c2a8e-1d4b-4c8e-9a51-0b7f0e6d2c11'))
  })

t.test('closed sets in answers are enums', async (t) => {
  const doc = await SwaggerParser.dereference(structuredClone(await document(t)) as never) as unknown as Json
  const answer = (route: string, method: string, status = 200) =>
    doc.paths[route][method].responses[status].content['application/json'].schema as Json
  const artifact = answer('/api/v2/artifacts/{id}', 'get').properties.data.properties
  t.same(artifact.status.enum, [...ARTIFACT_STATUSES])
  t.same(artifact.type.enum, [...ARTIFACT_TYPES])
  t.same(artifact.review_policy.enum, [...REVIEW_POLICIES])
  const listed = answer('/api/v2/artifacts', 'get').properties.data.items.properties
  t.same(listed.status.enum, [...ARTIFACT_STATUSES], 'in listings too')
  t.same(answer('/api/v2/artifacts/{id}/chain', 'get').properties.data.items.properties.status.enum,
    [...ARTIFACT_STATUSES])
  t.same(answer('/api/v2/artifacts/{id}/status', 'post').properties.data.properties.status.enum,
    [...ARTIFACT_STATUSES])
  const document_ = answer('/api/knowledge/documents', 'get').properties.documents.items.properties
  t.same(document_.scope.enum, ['organization', 'workspace', 'personal'])
  t.same(document_.status.enum, ['pending', 'processing', 'indexed'])
  t.same(answer('/api/knowledge/search', 'post').properties.results.items.properties.document.properties.scope.enum,
    ['organization', 'workspace', 'personal'])
  t.same(answer('/api/v2/voice-notes', 'get').properties.voiceNotes.items.properties.status.enum,
    ['created', 'processing', 'completed', 'failed'])
  t.same(answer('/api/v2/search', 'post').properties.results.items.properties.kind.enum, [...SEARCH_KINDS])
  t.same([...SEARCH_KINDS], [...UNIFIED_KINDS], 'the unified search\'s kinds, as declared')
})

/** TypeScript's complaints about `files` (relative to `dir`), compiled strictly. */
function diagnostics(dir: string, files: string[]): string[] {
  const program = ts.createProgram(files.map((f) => path.join(dir, f)), {
    strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, types: []
  })
  return ts.getPreEmitDiagnostics(program).map((d) =>
    `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
}

t.test('a client typed by openapi-typescript narrows an artifact\'s status without casts', async (t) => {
  const dir = tempDir(t)
  const types = astToString(await openapiTS(await document(t) as OpenAPI3))
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  fs.writeFileSync(path.join(dir, 'openapi.ts'), types)
  fs.writeFileSync(path.join(dir, 'narrowing.ts'), `import type { paths } from './openapi.js'
type Artifact = paths['/api/v2/artifacts/{id}']['get']['responses'][200]['content']['application/json']['data']

export function label(a: Artifact): string {
  switch (a.status) {
    case 'draft': return 'draft'
    case 'pending_review': return 'waiting for a person'
    case 'approved':
    case 'rejected':
    case 'superseded': return 'decided'
    default: {
      const unknown: never = a.status
      return unknown
    }
  }
}
export const asksPerson = (a: Artifact): boolean => a.review_policy === 'request_review'
export const planned: Artifact['type'][] = ['task_plan', 'implementation_plan']
`)
  fs.writeFileSync(path.join(dir, 'wrong.ts'), `import type { paths } from './openapi.js'
type Artifact = paths['/api/v2/artifacts/{id}']['get']['responses'][200]['content']['application/json']['data']
export const status: Artifact['status'] = 'finished'
`)
  t.same(diagnostics(dir, ['narrowing.ts']), [], 'an exhaustive switch over the status compiles')
  t.match(diagnostics(dir, ['wrong.ts']), [/not assignable/], 'a status outside the set does not')
})

t.test('a generated client that sends every declared default still uploads with a workspace-bound key', async (t) => {
  // openapi-python-client and others send a field's `default` explicitly: a `scope` default of `organization` made
  // every upload of a workspace-bound key a 403
  const app = await build(t)
  const res = await app.inject({ url: '/api/docs/json' })
  const doc = res.json() as Json
  const u = await signup(app)
  const key = await createKey(app, u, ['knowledge:write', 'knowledge:read'], { workspaceId: u.workspaceId })
  for (const [route, field] of [['/api/knowledge/upload', 'file'], ['/api/knowledge/upload/batch', 'files']]) {
    const schema = doc.paths[route].post.requestBody.content['multipart/form-data'].schema as Json
    t.notOk('default' in schema.properties.scope, `${route}: scope has no default`)
    const defaults = Object.fromEntries(Object.entries(schema.properties as Record<string, Json>)
      .filter(([, p]) => 'default' in p).map(([name, p]) => [name, String(p.default)]))
    t.ok(Object.keys(defaults).length > 0, `${route}: ${JSON.stringify(defaults)}`)
    const body = multipart([{ name: field, filename: 'defaults.md', content: '# Defaults\n\nsent as declared' }],
      defaults)
    const upload = await app.inject({ method: 'POST', url: route, payload: body.payload,
      headers: { authorization: `Bearer ${key.key}`, ...body.headers } })
    t.equal(upload.statusCode, 201, upload.body)
  }
  t.same(app.sqlite.prepare('SELECT DISTINCT scope, workspace_id AS ws FROM knowledge_documents').all(),
    [{ scope: 'workspace', ws: u.workspaceId }], 'both into the key\'s workspace')
})
