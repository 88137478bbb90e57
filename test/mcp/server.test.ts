import t from 'tap'
import { randomUUID } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { build, signup, createKey, type TestUser } from '../helper.js'

type Structured = Record<string, unknown> & { statusCode?: number; code?: string }

t.test('MCP tool server over Streamable HTTP with the official SDK client', async (t) => {
  // artifacts limited to 25 a minute per caller: one test below runs a key into the limit
  const app = await build(t, { config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 25, default: 0 } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const url = new URL(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/mcp`)
  const u = await signup(app)
  const other = await signup(app)

  async function connect(headers: Record<string, string>) {
    const client = new Client({ name: 'cairn-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }))
    t.teardown(() => client.close())
    return client
  }
  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
    const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 })
    return { isError: res.isError === true, s: res.structuredContent as Structured,
      text: (res.content as Array<{ text: string }>)[0]?.text }
  }
  const keyClient = async (owner: TestUser, scopes: string[], extra: Record<string, unknown> = {}, header = true) => {
    const k = await createKey(app, owner, scopes, extra)
    return { key: k,
      client: await connect({ authorization: `Bearer ${k.key}`,
        ...(header ? { 'x-workspace-id': owner.workspaceId } : {}) }) }
  }

  const full = await keyClient(u, ['knowledge:read', 'knowledge:write', 'artifacts:read', 'artifacts:write', 'write'])
  const person = await connect({ ...u.auth, 'x-workspace-id': u.workspaceId })

  await t.test('tools/list follows the scopes', async (t) => {
    const names = async (c: Client) => (await c.listTools()).tools.map((x) => x.name).sort()
    const all = ['add_document', 'comment_on_artifact', 'create_artifact', 'get_artifact', 'get_artifact_chain',
      'get_document', 'list_artifacts',
      'log_activity', 'search_knowledge', 'set_artifact_status', 'supersede_artifact', 'update_artifact',
      'wait_for_review']
    t.same(await names(full.client), all, 'all scopes: every tool')
    t.same(await names(person), all, 'a person: every tool')
    t.same(await names((await keyClient(u, ['knowledge:read'])).client), ['get_document', 'search_knowledge'])
    t.same(await names((await keyClient(u, ['artifacts:read'])).client),
      ['get_artifact', 'get_artifact_chain', 'list_artifacts', 'wait_for_review'])
    t.same(await names((await keyClient(u, ['artifacts:write'])).client),
      ['comment_on_artifact', 'create_artifact', 'set_artifact_status', 'supersede_artifact', 'update_artifact'])
    t.same(await names((await keyClient(u, ['read', 'execute'])).client), ['get_document', 'search_knowledge'],
      'read is a knowledge reader')

    const tools = (await full.client.listTools()).tools
    const create = tools.find((x) => x.name === 'create_artifact')!
    t.same(create.inputSchema.required, ['type', 'title'], 'input schema from the route schema')
    t.match((create.inputSchema.properties as Record<string, { enum?: string[] }>).type.enum,
      ['task_plan', 'implementation_plan'])
    t.notOk('parent_artifact_id' in (create.inputSchema.properties ?? {}), 'only the fields of docs/mcp.md#tools')
    const search = tools.find((x) => x.name === 'search_knowledge')!
    t.same(search.inputSchema.required, ['query'], 'defaulted fields are optional')
    t.match(tools.find((x) => x.name === 'get_artifact')!.annotations, { readOnlyHint: true },
      'hints from the route method')
    t.match(create.annotations, { readOnlyHint: false })
    const wait = tools.find((x) => x.name === 'wait_for_review')!
    t.match(wait.inputSchema.properties,
      { id: { format: 'uuid' }, timeoutSeconds: { minimum: 1, maximum: 50, default: 30 } })
  })

  let planId = ''
  let docId = ''
  await t.test('every tool', async (t) => {
    const c = full.client
    const added = await call(c, 'add_document',
      { fileName: 'runbook.md', content: '# Runbook\n\nRestart the flux capacitor before deploying.', tags: ['ops'],
        category: 'ops' })
    t.notOk(added.isError, added.text)
    docId = (added.s.document as { id: string }).id
    await app.jobs.idle() // passages are indexed in the background
    t.match(added.s, { document: { fileName: 'runbook.md', chunkCount: 1 } })

    const found = await call(c, 'search_knowledge', { query: 'flux capacitor' })
    t.notOk(found.isError)
    t.equal(found.s.count, 1)
    t.match(found.s.results, [{ document: { id: docId } }])
    t.match(found.text, /1 passage/)

    const doc = await call(c, 'get_document', { id: docId, chunkLimit: 5 })
    t.match(doc.s, { document: { id: docId }, chunks: [{ text: /flux capacitor/ }] })

    const created = await call(c, 'create_artifact',
      { type: 'implementation_plan', title: 'Deploy plan', content: { steps: ['restart', 'deploy'] },
        confidence: { score: 0.8 } })
    t.notOk(created.isError, created.text)
    planId = created.s.id as string
    t.match(created.s,
      { title: 'Deploy plan', status: 'draft', review_policy: 'agent_decides', confidence_score: 0.8,
        created_by: u.userId, workspace_id: u.workspaceId })

    const listed = await call(c, 'list_artifacts', { type: 'implementation_plan' })
    t.match(listed.s, { data: [{ id: planId }], meta: { count: 1 } })
    t.match((await call(c, 'get_artifact', { id: planId })).s, { id: planId, comments: [] })
    t.match((await call(c, 'update_artifact', { id: planId, title: 'Deploy plan v1' })).s, { title: 'Deploy plan v1' })
    t.match((await call(c, 'comment_on_artifact',
      { id: planId, content: 'Check the logs first', position: { step: 1 } })).s,
    { comments: [{ content: 'Check the logs first', position: { step: 1 } }] })
    t.match((await call(c, 'set_artifact_status', { id: planId, status: 'pending_review' })).s,
      { status: 'pending_review', reviewed_by: u.userId })
    const v2 = await call(c, 'supersede_artifact', { id: planId, title: 'Deploy plan v2' })
    t.match(v2.s, { parent_artifact_id: planId, status: 'draft', title: 'Deploy plan v2' })
    t.match((await call(c, 'get_artifact_chain', { id: v2.s.id })).s,
      { data: [{ id: planId, status: 'superseded' }, { id: v2.s.id }] })
    const waited = await call(c, 'wait_for_review', { id: planId, timeoutSeconds: 1 })
    t.match(waited.s, { id: planId, status: 'superseded', changed: true }, 'a decided artifact returns at once')
    const logged = await call(c, 'log_activity', { action: 'assistant.session', metadata: { tool: 'test' } })
    t.match(logged.s, { action: 'assistant.session', category: 'activity', metadata: { tool: 'test' } })

    // the developer log holds each tool's route entry and no entry for the protocol envelope
    app.devLog.flush()
    const logs = (await app.inject({ url: '/api/v2/developer/logs?limit=100',
      headers: u.auth })).json().data as Array<{ action: string; api_key_id: string }>
    const actions = logs.filter((e) => e.api_key_id === full.key.id).map((e) => e.action)
    t.ok(actions.includes('knowledge.search'), 'route entry for search_knowledge')
    t.ok(actions.includes('knowledge.upload'))
    t.ok(actions.includes('assistant.session'), 'log_activity writes the activity entry')
    t.notOk(actions.some((a) => a.includes('mcp')), 'no entry for /api/mcp itself')
  })

  await t.test('resources', async (t) => {
    const { resources } = await full.client.listResources()
    t.ok(resources.some((r) => r.uri === `cairn://artifacts/${planId}`))
    t.ok(resources.some((r) => r.uri === `cairn://documents/${docId}`))
    const art = await full.client.readResource({ uri: `cairn://artifacts/${planId}` })
    t.match(JSON.parse((art.contents[0] as { text: string }).text), { id: planId })
    const doc = await full.client.readResource({ uri: `cairn://documents/${docId}` })
    t.match((doc.contents[0] as { text: string }).text, /flux capacitor/)
    await t.rejects(full.client.readResource({ uri: `cairn://artifacts/${randomUUID()}` }), McpError,
      'missing artifact')
    const templates = (await full.client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate)
    t.same(templates, ['cairn://artifacts/{id}', 'cairn://documents/{id}'])
  })

  await t.test('errors carry the HTTP status and code of the route', async (t) => {
    const bad = await call(full.client, 'create_artifact', { type: 'novel', title: 'x' })
    t.ok(bad.isError)
    t.match(bad.s, { statusCode: 400, code: 'VALIDATION_ERROR' })
    t.match(bad.text, /^HTTP 400 VALIDATION_ERROR/)
    const reader = (await keyClient(u, ['knowledge:read'])).client
    const refused = await call(reader, 'create_artifact', { type: 'task_plan', title: 'x' })
    t.match(refused.s, { statusCode: 403, code: 'INSUFFICIENT_SCOPE' }, 'a tool outside the scopes: the route\'s 403')
    t.match((await call(full.client, 'get_artifact', { id: 'nope' })).s, { statusCode: 400 })
    t.match((await call(full.client, 'wait_for_review', { id: planId, timeoutSeconds: 51 })).s,
      { statusCode: 400, code: 'VALIDATION_ERROR' })
    await t.rejects(full.client.callTool({ name: 'drop_tables', arguments: {} }), McpError, 'unknown tool')
  })

  await t.test('tenants: foreign ids are 404, foreign workspaces 403', async (t) => {
    const theirs = await app.inject({ method: 'POST', url: '/api/v2/artifacts',
      headers: { ...other.auth, 'x-workspace-id': other.workspaceId },
      payload: { type: 'task_plan', title: 'Secret' } })
    const theirId = theirs.json().data.id
    for (const [name, args] of [['get_artifact', {}], ['get_artifact_chain', {}], ['update_artifact', { title: 'x' }],
      ['comment_on_artifact', { content: 'x' }],
      ['set_artifact_status', { status: 'approved' }], ['supersede_artifact', {}],
      ['wait_for_review', { timeoutSeconds: 1 }]] as const) {
      t.match((await call(full.client, name, { id: theirId, ...args })).s, { statusCode: 404, code: 'NOT_FOUND' }, name)
    }
    t.match((await call(full.client, 'get_document', { id: randomUUID() })).s, { statusCode: 404 })
    await t.rejects(full.client.readResource({ uri: `cairn://artifacts/${theirId}` }), McpError)
    await t.rejects(connect({ authorization: `Bearer ${full.key.key}`, 'x-workspace-id': other.workspaceId }),
      { code: 403 }, 'a foreign workspace: 403 at the door')
    t.equal((await app.inject({ url: `/api/v2/artifacts/${theirId}`,
      headers: { ...other.auth, 'x-workspace-id': other.workspaceId } })).json().data.title, 'Secret', 'untouched')
  })

  await t.test('a workspace-bound key needs no header and cannot leave its workspace', async (t) => {
    const bound = await keyClient(u, ['artifacts:read', 'artifacts:write'], { workspaceId: u.workspaceId }, false)
    const made = await call(bound.client, 'create_artifact', { type: 'task_plan', title: 'Bound' })
    t.equal(made.s.workspace_id, u.workspaceId)
    const ws2 = (await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: u.auth,
      payload: { name: 'Two' } })).json().data.id
    await t.rejects(connect({ authorization: `Bearer ${bound.key.key}`, 'x-workspace-id': ws2 }), { code: 403 })
  })

  await t.test('request_review: the key cannot approve, a person can, and wait_for_review wakes on it', async (t) => {
    // a person of their own: rate limits count per person, and the other tests spend u's
    const w = await signup(app)
    const person = await connect({ ...w.auth, 'x-workspace-id': w.workspaceId })
    const c = (await keyClient(w, ['artifacts:read', 'artifacts:write'])).client
    const plan = await call(c, 'create_artifact',
      { type: 'task_plan', title: 'Needs a human', review_policy: 'request_review' })
    const id = plan.s.id as string
    const denied = await call(c, 'set_artifact_status', { id, status: 'approved' })
    t.match(denied.s, { statusCode: 403, code: 'HUMAN_REVIEW_REQUIRED' })
    t.match((await call(c, 'update_artifact', { id, review_policy: 'always_proceed' })).s,
      { statusCode: 403, code: 'HUMAN_REVIEW_REQUIRED' })

    // the wait starts; once it is listening, a person approves over HTTP
    const watch = app.reviewWatch
    const listening = new Promise<void>((resolve) => {
      const original = watch.watch
      watch.watch = (watched, listener) => {
        const off = original(watched, listener)
        if (watched === id) { watch.watch = original; resolve() }
        return off
      }
    })
    const waiting = call(c, 'wait_for_review', { id, timeoutSeconds: 50 })
    await listening
    const approve = await app.inject({ method: 'POST', url: `/api/v2/artifacts/${id}/status`,
      headers: { ...w.auth, 'x-workspace-id': w.workspaceId }, payload: { status: 'approved' } })
    t.equal(approve.statusCode, 200)
    const woke = await waiting
    t.notOk(woke.isError, woke.text)
    t.match(woke.s, { id, status: 'approved', reviewed_by: w.userId, changed: true, decided_by_person: true })
    t.equal(watch.size(), 0, 'the waiter unsubscribed')

    const another = await call(c, 'create_artifact',
      { type: 'task_plan', title: 'Also human', review_policy: 'request_review' })
    const byPerson = await call(person, 'set_artifact_status', { id: another.s.id, status: 'rejected' })
    t.notOk(byPerson.isError, `a JWT caller decides through the tool as well: ${byPerson.text}`)
    t.equal(byPerson.s.status, 'rejected')

    const quiet = await call(c, 'create_artifact', { type: 'task_plan', title: 'Nobody looks' })
    t.match((await call(c, 'wait_for_review', { id: quiet.s.id, timeoutSeconds: 1 })).s,
      { status: 'draft', changed: false }, 'time up')
  })

  await t.test('after a person decides, update_artifact is refused; a machine\'s supersede is no decision',
    async (t) => {
      // a person of their own: rate limits count per person, and the other tests spend u's
      const v = await signup(app)
      const c = (await keyClient(v, ['artifacts:read', 'artifacts:write'])).client
      const human = await connect({ ...v.auth, 'x-workspace-id': v.workspaceId })
      const id = (await call(c, 'create_artifact',
        { type: 'task_plan', title: 'Reviewed', review_policy: 'request_review' })).s.id as string
      t.notOk((await call(human, 'set_artifact_status', { id, status: 'approved' })).isError)
      for (const args of [{ title: 'Swapped after approval' }, { content: { steps: [{ title: 'other' }] } }]) {
        const res = await call(c, 'update_artifact', { id, ...args })
        t.ok(res.isError)
        t.match(res.s, { statusCode: 409, code: 'ARTIFACT_REVIEWED' })
      }
      t.match((await call(c, 'supersede_artifact', { id })).s, { statusCode: 409, code: 'ARTIFACT_REVIEWED' })
      t.match((await call(c, 'set_artifact_status', { id, status: 'superseded' })).s,
        { statusCode: 409, code: 'ARTIFACT_REVIEWED' })
      const decided = await call(c, 'wait_for_review', { id, timeoutSeconds: 1 })
      t.match(decided.s, { title: 'Reviewed', status: 'approved', changed: true, decided_by_person: true })
      t.match(decided.text, /decided by a person/)

      // awaiting a person, the machine supersedes its own proposal: the wait ends, but not as a decision
      const open = (await call(c, 'create_artifact',
        { type: 'task_plan', title: 'Open', review_policy: 'request_review' })).s.id as string
      t.notOk((await call(c, 'supersede_artifact', { id: open, title: 'Open v2' })).isError)
      const superseded = await call(c, 'wait_for_review', { id: open, timeoutSeconds: 1 })
      t.match(superseded.s, { status: 'superseded', changed: true, decided_by_person: false })
      t.match(superseded.text, /not a person's decision/)
    })

  await t.test('the route group rate limit applies to tools', async (t) => {
    const limited = await keyClient(u, ['artifacts:read'])
    let last: Structured = {}
    for (let i = 0; i < 26; i++) last = (await call(limited.client, 'list_artifacts', { limit: 1 })).s
    t.match(last, { statusCode: 429, code: 'RATE_LIMITED' })
    t.type(last.retryAfter, 'number')
  })

  await t.test('credentials', async (t) => {
    await t.rejects(connect({}), 'no credentials: 401')
    await t.rejects(connect({ authorization: 'Bearer cairn_' + 'x'.repeat(43) }), 'unknown key')
    const get = await fetch(url, { headers: { ...u.auth, accept: 'text/event-stream' } })
    t.equal(get.status, 405, 'stateless: no GET stream')
    await get.body?.cancel()
  })
})
