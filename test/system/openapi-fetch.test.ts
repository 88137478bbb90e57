import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import { ROOT, build, createKey, signup, tempDir } from '../helper.js'
import { codeBlockAfter, readPage } from '../docs/pages.js'

// A client generated as an integrator generates one, with the two blocks of docs/clients.md "Generating a client of
// your own": types from the live OpenAPI document with openapi-typescript (a `format: binary` field typed as a Blob),
// an upload through openapi-fetch. Compiled strictly by the TypeScript compiler, then run against a listening Cairn.

const HEADING = 'Generating a client of your own'

// the page's upload, and what a reader builds on it: a document read back, the documents of a workspace listed
const CLIENT = `import type { paths } from './openapi.js'
import { upload, type Cairn, type UploadForm } from './upload.js'
export { cairn } from './upload.js'

export async function add(client: Cairn, file: File, scope?: UploadForm['scope']) {
  const { data, error, response } = await upload(client, { file, scope })
  return { status: response.status, id: data?.document.id, code: error?.code }
}

type Document =
  paths['/api/knowledge/document/{id}']['get']['responses'][200]['content']['application/json']['document']

function state(status: Document['status']): 'indexing' | 'searchable' {
  switch (status) {
    case 'pending':
    case 'processing': return 'indexing'
    case 'indexed': return 'searchable'
    default: {
      const unknown: never = status
      return unknown
    }
  }
}

export async function read(client: Cairn, id: string) {
  const { data, error, response } = await client.GET('/api/knowledge/document/{id}', { params: { path: { id } } })
  if (!data) return { status: response.status, code: error.code }
  const shared = data.document.scope === 'organization' ? 'everyone in the organization' : 'a workspace or a person'
  return { status: response.status, scope: data.document.scope, shared, workspaceId: data.document.workspaceId,
    state: state(data.document.status) }
}

/** The workspace documents a person sees in one of their workspaces, the workspace given by its header. */
export async function inWorkspace(client: Cairn, workspaceId: string) {
  const { data, response } = await client.GET('/api/knowledge/documents', {
    params: { header: { 'x-workspace-id': workspaceId }, query: { scope: 'workspace' } }
  })
  return { status: response.status, names: (data?.documents ?? []).map((d) => d.fileName) }
}
`

// what the types forbid: a scope outside the set, a workspace header that is not a string
const WRONG = `import type { paths } from './openapi.js'
type Upload = NonNullable<paths['/api/knowledge/upload']['post']['requestBody']>['content']['multipart/form-data']
export const scope: Upload['scope'] = 'everyone'
type Header = NonNullable<paths['/api/knowledge/documents']['get']['parameters']['header']>
export const header: Header = { 'x-workspace-id': 42 }
`

/** TypeScript's complaints about `files` (relative to `dir`), compiled strictly in one program: by file name. */
function diagnostics(dir: string, files: string[]): Record<string, string[]> {
  const program = ts.createProgram(files.map((f) => path.join(dir, f)), {
    strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, types: []
  })
  const found: Record<string, string[]> = {}
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const file = d.file ? path.basename(d.file.fileName) : ''
    found[file] = [...found[file] ?? [], ts.flattenDiagnosticMessageText(d.messageText, '\n')]
  }
  return found
}

interface Client {
  cairn(baseUrl: string, bearer: string): unknown
  add(client: unknown, file: File, scope?: string): Promise<{ status: number; id?: string; code?: string }>
  read(client: unknown, id: string): Promise<{ status: number; code?: string; scope?: string; shared?: string;
    workspaceId?: string | null; state?: string }>
  inWorkspace(client: unknown, workspaceId: string): Promise<{ status: number; names: string[] }>
}

t.test('an openapi-fetch client generated from the OpenAPI document, with a workspace-bound key', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`

  const page = readPage('docs/clients.md')
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  fs.writeFileSync(path.join(dir, 'generate.mjs'), codeBlockAfter(page, HEADING, 'js'))
  fs.writeFileSync(path.join(dir, 'upload.ts'), codeBlockAfter(page, HEADING, 'ts'))
  fs.writeFileSync(path.join(dir, 'client.ts'), CLIENT)
  fs.writeFileSync(path.join(dir, 'wrong.ts'), WRONG)
  await promisify(execFile)(process.execPath, ['generate.mjs'],
    { cwd: dir, env: { PATH: process.env.PATH, CAIRN_URL: baseUrl } })
  const types = fs.readFileSync(path.join(dir, 'openapi.ts'), 'utf8')
  t.match(types, /file: Blob;/, 'the upload\'s file is a Blob')

  const found = diagnostics(dir, ['client.ts', 'wrong.ts'])
  t.same(Object.keys(found), ['wrong.ts'], 'the page\'s upload, the client and the types compile strictly')
  t.notMatch(CLIENT + fs.readFileSync(path.join(dir, 'upload.ts'), 'utf8'), /\bas\b|\bany\b|@ts-/, 'without casts')
  t.match(found['wrong.ts'], [/"everyone".*not assignable/, /number.*not assignable to type 'string'/],
    'a scope outside the set and a numeric workspace header do not compile')
  t.equal(found['wrong.ts'].length, 2, found['wrong.ts'].join('\n'))

  const client = await import(pathToFileURL(path.join(dir, 'client.ts')).href) as Client
  const u = await signup(app)
  const key = await createKey(app, u, ['knowledge:write', 'knowledge:read'], { workspaceId: u.workspaceId })
  const bound = client.cairn(baseUrl, key.key)

  await t.test('an upload without a scope lands in the key\'s workspace', async (t) => {
    const uploaded = await client.add(bound, new File(['# Runbook\n\nRestart the worker.'], 'runbook.md',
      { type: 'text/markdown' }))
    t.match(uploaded, { status: 201, id: /^[0-9a-f-]{36}$/ })
    await app.jobs.idle()
    t.same(await client.read(bound, uploaded.id!), { status: 200, scope: 'workspace', shared: 'a workspace or a person',
      workspaceId: u.workspaceId, state: 'searchable' }, 'read back through the enums: scope and status')
    t.same(await client.inWorkspace(client.cairn(baseUrl, u.token), u.workspaceId), { status: 200,
      names: ['runbook.md'] }, 'its owner finds it in the workspace named by x-workspace-id')
    t.same(await client.add(bound, new File(['# Wide'], 'wide.md'), 'organization'),
      { status: 403, id: undefined, code: 'WORKSPACE_FORBIDDEN' }, 'the organization scope stays out of its reach')
  })

  await t.test('another organization\'s document is not found', async (t) => {
    const other = await signup(app)
    const otherKey = await createKey(app, other, ['knowledge:write', 'knowledge:read'])
    const theirs = await client.add(client.cairn(baseUrl, otherKey.key), new File(['# Theirs'], 'theirs.md'))
    t.equal(theirs.status, 201)
    await app.jobs.idle()
    t.same(await client.read(bound, theirs.id!), { status: 404, code: 'NOT_FOUND' })
    t.same(await client.read(client.cairn(baseUrl, otherKey.key), theirs.id!), { status: 200, scope: 'organization',
      shared: 'everyone in the organization', workspaceId: null, state: 'searchable' }, 'its own organization reads it')
  })
})
