import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js'
import { McpError, type Progress } from '@modelcontextprotocol/sdk/types.js'
import { createParser } from 'eventsource-parser'
import { build, signup, createKey, type TestUser } from '../helper.js'
import { WAIT_MAX_SECONDS } from '../../src/mcp/tools.js'

const ORIGIN = 'https://console.example.org'

t.test('the tool server over HTTP: CORS, the headers of every answer, progress, output schemas', async (t) => {
  const app = await build(t, { config: { corsOrigins: [ORIGIN],
    rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 1000 } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const url = new URL(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/mcp`)
  const u = await signup(app)
  const other = await signup(app)

  /** An SDK client that sends `Origin` as a browser page would, keeping every answer's headers. */
  async function connect(headers: Record<string, string>, origin = ORIGIN) {
    const answers: Headers[] = []
    const fetchAs: typeof fetch = async (input, init) => {
      const h = new Headers(init?.headers)
      h.set('origin', origin)
      const res = await fetch(input, { ...init, headers: h })
      answers.push(res.headers)
      return res
    }
    const client = new Client({ name: 'cairn-browser-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: fetchAs }))
    t.teardown(() => client.close())
    return { client, answers }
  }
  const keyOf = async (owner: TestUser, scopes: string[], extra: Record<string, unknown> = {}) =>
    (await createKey(app, owner, scopes, extra)).key

  await t.test('a browser-style preflight allows the MCP headers', async (t) => {
    const res = await fetch(url, { method: 'OPTIONS', headers: { origin: ORIGIN,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,mcp-protocol-version,mcp-session-id' } })
    t.equal(res.status, 204)
    t.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/)
    for (const name of ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'x-workspace-id']) {
      t.ok(allowed.includes(name), `${name} allowed`)
    }
    t.match(res.headers.get('access-control-allow-methods'), /POST/)
    const foreign = await fetch(url, { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example',
      'access-control-request-method': 'POST', 'access-control-request-headers': 'mcp-protocol-version' } })
    t.notOk(foreign.headers.get('access-control-allow-origin'), 'an origin not configured is not allowed')
  })

  await t.test('MCP answers carry CORS, x-request-id, the security and the rate-limit headers', async (t) => {
    const { client, answers } = await connect({ authorization: `Bearer ${u.token}`, 'x-workspace-id': u.workspaceId })
    await client.listTools()
    await client.callTool({ name: 'list_artifacts', arguments: { limit: 1 } })
    t.ok(answers.length >= 3, 'initialize, initialized, tools/list, tools/call')
    for (const h of answers) {
      t.equal(h.get('access-control-allow-origin'), ORIGIN)
      t.match(h.get('access-control-expose-headers'), /x-request-id/)
      t.match(h.get('x-request-id'), /^[0-9a-f-]{36}$/)
      t.equal(h.get('x-content-type-options'), 'nosniff')
      t.equal(h.get('x-ratelimit-limit'), '1000')
      t.match(h.get('x-ratelimit-remaining'), /^\d+$/)
    }
    const own = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${u.token}`, origin: ORIGIN,
      'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-request-id': 'trace-42' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })
    await own.text()
    t.equal(own.headers.get('x-request-id'), 'trace-42', 'the caller\'s own request id comes back')
    const refused = await fetch(url, { method: 'POST',
      headers: { origin: ORIGIN, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) })
    t.equal(refused.status, 401)
    t.equal(refused.headers.get('access-control-allow-origin'), ORIGIN, 'a refusal too, so the page can read it')
    t.ok(refused.headers.get('x-request-id'))
    await refused.text()
  })

  await t.test('error messages carry the MCP code once', async (t) => {
    const { client } = await connect({ authorization: `Bearer ${u.token}` })
    const err = await client.callTool({ name: 'drop_tables', arguments: {} }).catch((e: unknown) => e)
    t.ok(err instanceof McpError)
    t.equal((err as McpError).message, 'MCP error -32602: Unknown tool: drop_tables')
    const missing = await client.readResource({ uri: 'cairn://nothing/here' }).catch((e: unknown) => e)
    t.notMatch((missing as Error).message, /MCP error.*MCP error/)
    const raw = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${u.token}`,
      'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { arguments: {} } }) })
    const text = await raw.text()
    t.match(text, /"code":-32602/)
    t.notMatch(text, /MCP error/, 'the wire message has no prefix (the code is its own field)')
  })

  await t.test('every tool declares an output schema, and the SDK client checks results against it', async (t) => {
    const key = await keyOf(u, ['knowledge:read', 'knowledge:write', 'artifacts:read', 'artifacts:write', 'write'],
      { workspaceId: u.workspaceId })
    const { client } = await connect({ authorization: `Bearer ${key}` })
    const { tools } = await client.listTools()
    t.equal(tools.length, 13)
    for (const tool of tools) t.match(tool.outputSchema, { type: 'object' }, `${tool.name} has an output schema`)
    const call = async (name: string, args: Record<string, unknown>) => {
      const res = await client.callTool({ name, arguments: args })
      t.notOk(res.isError, `${name}: ${JSON.stringify(res.structuredContent)}`)
      return res.structuredContent as Record<string, unknown>
    }
    // each answer passed the client's check against its tool's output schema on the way in
    const added = await call('add_document', { fileName: 'bound.md', content: '# Bound\n\nno scope given' })
    const docId = (added.document as { id: string }).id
    const doc = await call('get_document', { id: docId })
    t.match(doc.document, { scope: 'workspace', workspaceId: u.workspaceId },
      'add_document without scope, by a workspace-bound key: its workspace')
    await app.jobs.idle()
    await call('search_knowledge', { query: 'no scope given' })
    const plan = await call('create_artifact', { type: 'task_plan', title: 'Checked' })
    const id = plan.id as string
    await call('list_artifacts', {})
    await call('get_artifact', { id })
    await call('get_artifact_chain', { id })
    await call('update_artifact', { id, title: 'Checked v1' })
    await call('comment_on_artifact', { id, content: 'fine' })
    await call('set_artifact_status', { id, status: 'pending_review' })
    t.match(await call('wait_for_review', { id, timeoutSeconds: 1 }), { changed: false, decided_by_person: false })
    await call('supersede_artifact', { id, title: 'Checked v2' })
    await call('log_activity', { action: 'assistant.check' })
    const failed = await client.callTool({ name: 'get_artifact', arguments: { id: crypto.randomUUID() } })
    t.ok(failed.isError, 'a tool error is a result the schema allows too')
    t.match(failed.structuredContent, { statusCode: 404, code: 'NOT_FOUND' })
    const refused = await client.callTool({ name: 'add_document',
      arguments: { fileName: 'org.md', content: 'x', scope: 'organization' } })
    t.match(refused.structuredContent, { statusCode: 403, code: 'WORKSPACE_FORBIDDEN' },
      'a bound key naming the organization: refused')
    const theirs = await client.callTool({ name: 'get_document', arguments: { id: docId } })
    t.notOk(theirs.isError)
    const foreign = await connect({ authorization: `Bearer ${other.token}` })
    const hidden = await foreign.client.callTool({ name: 'get_document', arguments: { id: docId } })
    t.match(hidden.structuredContent, { statusCode: 404 }, 'another tenant: 404')
  })

  await t.test('wait_for_review stays under the SDK\'s default timeout and reports progress', async (t) => {
    t.ok(WAIT_MAX_SECONDS * 1000 <= DEFAULT_REQUEST_TIMEOUT_MSEC - 10_000,
      'its longest wait leaves the client\'s default request timeout at least 10 s')
    const { client } = await connect({ authorization: `Bearer ${u.token}`, 'x-workspace-id': u.workspaceId })
    const tools = (await client.listTools()).tools
    t.match(tools.find((x) => x.name === 'wait_for_review')!.inputSchema.properties,
      { timeoutSeconds: { maximum: WAIT_MAX_SECONDS } })
    const plan = (await client.callTool({ name: 'create_artifact',
      arguments: { type: 'task_plan', title: 'Waiting', review_policy: 'request_review' } })).structuredContent as
      { id: string }

    // the SDK at its default timeout (no option given): it sends a progress token because onprogress is set
    const seen: Progress[] = []
    let twice: () => void = () => {}
    const progressed = new Promise<void>((resolve) => { twice = resolve })
    const waiting = client.callTool({ name: 'wait_for_review', arguments: { id: plan.id, timeoutSeconds: 50 } },
      undefined, { onprogress: (p) => { seen.push(p); if (seen.length === 2) twice() } })
    await progressed
    t.equal(seen[0].total, 50)
    t.ok(seen[1].progress > seen[0].progress, 'progress grows')
    t.match(seen[0].message, /waiting/)
    const approve = await app.inject({ method: 'POST', url: `/api/v2/artifacts/${plan.id}/status`,
      headers: { ...u.auth, 'x-workspace-id': u.workspaceId }, payload: { status: 'approved' } })
    t.equal(approve.statusCode, 200)
    const result = await waiting
    t.match(result.structuredContent, { id: plan.id, status: 'approved', changed: true, decided_by_person: true })
    t.equal(app.reviewWatch.size(), 0)
  })

  await t.test('the client\'s own progress token is the one used; without one, nothing is sent', async (t) => {
    const create = await app.inject({ method: 'POST', url: '/api/v2/artifacts',
      headers: { ...u.auth, 'x-workspace-id': u.workspaceId }, payload: { type: 'task_plan', title: 'Raw' } })
    const id = create.json().data.id as string
    const headers = { authorization: `Bearer ${u.token}`, 'x-workspace-id': u.workspaceId,
      'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18' }
    const waitFor = (callId: number, artifact: string, meta?: Record<string, unknown>) => fetch(url, {
      method: 'POST', headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: callId, method: 'tools/call',
        params: { name: 'wait_for_review', arguments: { id: artifact, timeoutSeconds: 50 },
          ...(meta ? { _meta: meta } : {}) } })
    })

    type Message = { method?: string; id?: number; params?: Record<string, unknown>;
      result?: { structuredContent?: Record<string, unknown> } }
    /** the SSE messages of an answer, one by one, as eventsource-parser reads the stream */
    async function* messages(res: Response) {
      t.match(res.headers.get('content-type'), /^text\/event-stream/)
      const ready: Message[] = []
      const parser = createParser({
        onEvent: (event) => { if (event.data) ready.push(JSON.parse(event.data) as Message) }
      })
      const decoder = new TextDecoder()
      for await (const chunk of res.body!) {
        parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }))
        while (ready.length > 0) yield ready.shift()!
      }
    }
    const approve = (status: string) => app.inject({ method: 'POST', url: `/api/v2/artifacts/${id}/status`,
      headers: { ...u.auth, 'x-workspace-id': u.workspaceId }, payload: { status } })

    const withToken = messages(await waitFor(9, id, { progressToken: 'review-of-raw' }))
    const first = (await withToken.next()).value!
    t.match(first, { method: 'notifications/progress', params: { progressToken: 'review-of-raw', total: 50 } })
    t.equal((await approve('pending_review')).statusCode, 200, 'not a decision: the wait goes on')
    t.equal((await approve('approved')).statusCode, 200)
    const rest = []
    for await (const m of withToken) rest.push(m)
    const answer = rest.find((m) => m.id === 9)
    t.match(answer?.result?.structuredContent, { status: 'approved', changed: true })
    t.ok(rest.filter((m) => m.method).every((m) => m.params?.progressToken === 'review-of-raw'))

    // a new artifact: without a token the stream holds the answer alone
    const next = await app.inject({ method: 'POST', url: '/api/v2/artifacts',
      headers: { ...u.auth, 'x-workspace-id': u.workspaceId }, payload: { type: 'task_plan', title: 'Quiet' } })
    const quietId = next.json().data.id as string
    const listening = new Promise<void>((resolve) => {
      const original = app.reviewWatch.watch
      app.reviewWatch.watch = (watched, listener) => {
        const off = original(watched, listener)
        if (watched === quietId) { app.reviewWatch.watch = original; resolve() }
        return off
      }
    })
    const quiet = waitFor(10, quietId)
    await listening
    t.equal((await app.inject({ method: 'POST', url: `/api/v2/artifacts/${quietId}/status`,
      headers: { ...u.auth, 'x-workspace-id': u.workspaceId }, payload: { status: 'rejected' } })).statusCode, 200)
    const all = []
    for await (const m of messages(await quiet)) all.push(m)
    t.same(all.map((m) => m.method ?? `answer ${m.id}`), ['answer 10'], 'no progress notification without a token')
  })
})
