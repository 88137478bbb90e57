import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Progress } from '@modelcontextprotocol/sdk/types.js'
import { build, signup, TS_CHILD } from '../helper.js'
import { missingPrograms } from '../system-tools.js'
import { ROOT, codeBlockAfter, readPage } from './pages.js'

// docs/mcp.md followed as a reader would: the key made with the page's own request, then the official MCP SDK
// connected as each of the page's configurations says (HTTP with a header, and the stdio bridge's command line and
// JSON), doing the page's typical loop with that key at the SDK's default request timeout.

const PAGE = readPage('docs/mcp.md')
const DOC_ADDRESS = 'http://127.0.0.1:3000'

t.test('docs/mcp.md: the key its request makes works in every configuration it shows', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const person = await signup(app)

  // 1. the key: the page's curl when bash and curl are there, else the same request body sent with fetch
  const keyRequest = codeBlockAfter(PAGE, '1. Make a key for the assistant', 'sh')
  const body = /-d '(.*)'\s*$/m.exec(keyRequest)?.[1].replace(`'"$WS"'`, person.workspaceId)
  t.ok(body, 'the page\'s request has a JSON body')
  const documented = JSON.parse(body!) as { name: string; workspaceId: string; scopes: string[] }
  t.equal(documented.workspaceId, person.workspaceId, 'bound to the workspace')
  let answer: string
  if (missingPrograms(['bash', 'curl']).length === 0) {
    answer = await new Promise<string>((resolve, reject) => {
      const child = spawn('bash', ['-eu', '-o', 'pipefail', '-c', keyRequest.replaceAll('localhost:3000', base)],
        { env: { PATH: process.env.PATH, TOKEN: person.token, WS: person.workspaceId } })
      let out = ''
      child.stdout.on('data', (d) => { out += d })
      child.on('error', reject)
      child.on('close', (code) => code === 0 ? resolve(out) : reject(new Error(`curl exited ${code}`)))
    })
  } else {
    t.comment('bash or curl missing: the page\'s request body sent with fetch instead')
    answer = await (await fetch(`${base}/api/v2/api-keys`, { method: 'POST', body: body!,
      headers: { authorization: `Bearer ${person.token}`, 'content-type': 'application/json' } })).text()
  }
  const made = JSON.parse(answer) as { success: boolean; data: { key: string; scopes: string[] } }
  t.equal(made.success, true, answer)
  t.same(made.data.scopes, documented.scopes)
  const key = made.data.key

  /** the person who reviews, in the console */
  const approve = (id: string) => app.inject({ method: 'POST', url: `/api/v2/artifacts/${id}/status`,
    headers: { ...person.auth, 'x-workspace-id': person.workspaceId }, payload: { status: 'approved' } })

  /** the page's typical loop, as far as the key's scopes take it */
  async function loop(t: Test, client: Client, label: string) {
    const names = (await client.listTools()).tools.map((x) => x.name)
    for (const name of ['search_knowledge', 'add_document', 'create_artifact', 'wait_for_review']) {
      t.ok(names.includes(name), `${label}: ${name} listed`)
    }
    t.notOk(names.includes('log_activity'), `${label}: log_activity needs write, which the page leaves out`)
    const added = await client.callTool({ name: 'add_document',
      arguments: { fileName: `${label}.md`, content: `# Rollout\n\nThe ${label} rollout waits for a review.` } })
    t.notOk(added.isError, JSON.stringify(added.structuredContent))
    const id = (added.structuredContent as { document: { id: string } }).document.id
    t.same(app.sqlite.prepare('SELECT scope, workspace_id AS ws FROM knowledge_documents WHERE id = ?').get(id),
      { scope: 'workspace', ws: person.workspaceId },
      `${label}: add_document without a scope, into the key's workspace`)
    await app.jobs.idle()
    const found = await client.callTool({ name: 'search_knowledge', arguments: { query: `${label} rollout` } })
    t.ok((found.structuredContent as { count: number }).count >= 1, `${label}: search_knowledge finds it`)
    const plan = (await client.callTool({ name: 'create_artifact', arguments: { type: 'task_plan',
      title: `Roll out (${label})`, review_policy: 'request_review' } })).structuredContent as { id: string }
    const self = await client.callTool({ name: 'set_artifact_status', arguments: { id: plan.id, status: 'approved' } })
    t.match(self.structuredContent, { statusCode: 403, code: 'HUMAN_REVIEW_REQUIRED' },
      `${label}: the key cannot approve what awaits a person`)
    const progress: Progress[] = []
    // the page's call: the SDK's default request timeout, progress on, the timeout reset by each notification; the
    // person approves once the first notification says the assistant is waiting
    const decided = await client.callTool({ name: 'wait_for_review', arguments: { id: plan.id, timeoutSeconds: 50 } },
      undefined, { onprogress: (p) => { if (progress.push(p) === 1) void approve(plan.id) },
        resetTimeoutOnProgress: true })
    t.match(decided.structuredContent, { id: plan.id, status: 'approved', changed: true, decided_by_person: true },
      `${label}: wait_for_review returns the person's decision`)
    t.ok(progress.length >= 1 && progress[0].total === 50, `${label}: progress notifications arrive`)
  }

  await t.test('Cursor / VS Code JSON: the URL and Authorization header, with the official SDK', async (t) => {
    const config = JSON.parse(codeBlockAfter(PAGE, 'Cursor, VS Code and other assistants configured by JSON',
      'json')) as { mcpServers: { cairn: { url: string; headers: Record<string, string> } } }
    const { url, headers } = config.mcpServers.cairn
    t.equal(url, `${DOC_ADDRESS}/api/mcp`)
    const client = new Client({ name: 'cursor-like', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url.replace(DOC_ADDRESS, base)),
      { requestInit: { headers: { Authorization: headers.Authorization.replace('cairn_…', key) } } }))
    t.teardown(() => client.close())
    await loop(t, client, 'json')
  })

  await t.test('Claude Code: the same address and header', async (t) => {
    const command = codeBlockAfter(PAGE, 'Claude Code', 'sh')
    const [, url, header] = /--transport http cairn (\S+) --header "([^"]+)"/.exec(command) ?? []
    t.equal(url, `${DOC_ADDRESS}/api/mcp`)
    t.equal(header, 'Authorization: Bearer $CAIRN_KEY')
    const client = new Client({ name: 'claude-code-like', version: '1.0.0' })
    const [name, value] = header.split(/:\s*/)
    await client.connect(new StreamableHTTPClientTransport(new URL(url.replace(DOC_ADDRESS, base)),
      { requestInit: { headers: { [name]: value.replace('$CAIRN_KEY', key) } } }))
    t.teardown(() => client.close())
    t.ok((await client.listTools()).tools.length > 0)
  })

  await t.test('the stdio bridge: the command line and the JSON configuration of the page', async (t) => {
    const section = 'Assistants that only start local (stdio) servers'
    const shell = codeBlockAfter(PAGE, section, 'sh')
    const line = shell.split('\n').find((l) => l.startsWith('node '))!
    t.equal(line, 'node clients/mcp-bridge/dist/cairn-mcp.js --url http://127.0.0.1:3000 --key "$CAIRN_KEY"')
    // dist/cairn-mcp.js is what `npm run clients:build` makes of src/cairn-mcp.ts, and the package's cairn-mcp
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'clients/mcp-bridge/package.json'), 'utf8')) as
      { bin: Record<string, string> }
    t.same(manifest.bin, { 'cairn-mcp': './dist/cairn-mcp.js' })
    const tsconfig = JSON.parse(fs.readFileSync(path.join(ROOT, 'clients/mcp-bridge/tsconfig.json'), 'utf8')) as
      { compilerOptions: { rootDir: string; outDir: string } }
    t.match(tsconfig.compilerOptions, { rootDir: 'src', outDir: 'dist' })
    // the bridge's source run directly (the same module dist holds once built), with the page's arguments
    const bridge = [...TS_CHILD, path.join(ROOT, 'clients/mcp-bridge/src/cairn-mcp.ts')]

    const cli = new Client({ name: 'stdio-cli', version: '1.0.0' })
    await cli.connect(new StdioClientTransport({ command: process.execPath, stderr: 'pipe',
      args: [...bridge, '--url', base, '--key', key] }))
    t.teardown(() => cli.close())
    await loop(t, cli, 'bridge-cli')

    const json = codeBlockAfter(PAGE, section, 'json')
    const server = (JSON.parse(json) as { mcpServers: { cairn: { command: string; args: string[];
      env: Record<string, string> } } }).mcpServers.cairn
    t.equal(server.command, 'cairn-mcp', 'the package\'s bin')
    const configured = new Client({ name: 'stdio-json', version: '1.0.0' })
    await configured.connect(new StdioClientTransport({ command: process.execPath, stderr: 'pipe',
      args: [...bridge, ...server.args.map((a) => a.replace(DOC_ADDRESS, base))],
      env: { PATH: process.env.PATH ?? '', ...Object.fromEntries(Object.entries(server.env)
        .map(([k, v]) => [k, v.replace('cairn_…', key)])) } }))
    t.teardown(() => configured.close())
    await loop(t, configured, 'bridge-json')
  })
})
