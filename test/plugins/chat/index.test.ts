import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { build, signup, addUser, multipart, type TestUser } from '../../helper.js'
import { fakeLlm, parseSse } from '../../fake-llm.js'
import type { App } from '../../../src/app.js'

async function knowledge(app: App, u: TestUser, filename: string, content: string) {
  const body = multipart([{ filename, content }])
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...body.headers },
    payload: body.payload })
  if (res.statusCode !== 201) throw new Error(res.body)
  await app.jobs.idle()
}

t.test('chat with an OpenAI-compatible model: streamed deltas, tool call into the knowledge index, ' +
  'conversation kept', async (t) => {
  const llm = await fakeLlm(t, {
    toolQuery: 'albatross',
    answer: (b) => {
      const tool = b.messages.find((m) => m.role === 'tool')
      return tool ? `From your notes: ${JSON.parse(tool.content)[0]?.text ?? 'nothing'}` : 'Plain answer.'
    }
  })
  const app = await build(t, { config: { llm: { baseUrl: llm.baseUrl, apiKey: 'sk-x', model: 'fake-1' } } })
  const u = await signup(app)
  await knowledge(app, u, 'birds.txt', 'The albatross can glide for hours without flapping.')
  const res = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth,
    payload: { message: 'What do we know about albatrosses?' } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().reply, 'From your notes: The albatross can glide for hours without flapping.',
    'the tool result reached the model')
  t.equal(res.json().model, 'fake-1')
  t.match(res.json().citations, [{ fileName: 'birds.txt', chunkIndex: 0,
    excerpt: 'The albatross can glide for hours without flapping.' }], 'the passage found by the tool is cited')
  t.equal(llm.requests.length, 2, 'the call with tools and the answer: no rewrite unless CAIRN_SEARCH_REWRITE=on')
  t.same(llm.requests[0].body.tools?.map((x) => x.function.name), ['search_knowledge'])
  t.ok(llm.requests[0].body.stream)
  const second = llm.requests[1].body.messages
  t.same(second.map((m) => m.role), ['user', 'assistant', 'tool'])
  t.equal(second[2].tool_call_id, 'call_1')

  const conversationId = res.json().conversationId
  await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth,
    payload: { message: 'And more?', conversationId } })
  const third = llm.requests[llm.requests.length - 1].body.messages
  t.same(third.map((m) => m.role).slice(0, 5), ['user', 'assistant', 'tool', 'assistant', 'user'],
    'history continues the conversation')

  const other = await signup(app)
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/chat', headers: other.auth,
    payload: { message: 'hi', conversationId } })).statusCode, 404, 'another user\'s conversation')
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth, payload: {} })).statusCode, 400)
})

t.test('SSE stream over a real socket: text_delta pieces in order, then done; abort cancels upstream', async (t) => {
  const text = 'The quick brown fox jumps over the lazy dog, again and again.'
  const llm = await fakeLlm(t, { answer: () => text })
  const app = await build(t, { config: { llm: { baseUrl: llm.baseUrl, model: 'fake-1' } } })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const u = await signup(app)
  const res = await fetch(`${address}/api/v2/chat/stream`,
    { method: 'POST', headers: { ...u.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'go' }) })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^text\/event-stream/)
  t.equal(res.headers.get('cache-control'), 'no-cache,no-transform')
  const events = parseSse(await res.text())
  const deltas = events.filter((e) => e.event === 'text_delta').map((e) => (e.data as { content: string }).content)
  t.ok(deltas.length > 3, 'several deltas')
  t.equal(deltas.join(''), text)
  const done = events[events.length - 1]
  t.equal(done.event, 'done')
  t.match(done.data, { reply: text, conversationId: /^[0-9a-f-]{36}$/ })

  // a client that goes away cancels the model call
  const slow = await fakeLlm(t, { answer: () => 'x'.repeat(400), delayMs: 50 })
  const app2 = await build(t, { config: { llm: { baseUrl: slow.baseUrl, model: 'slow' } } })
  const address2 = await app2.listen({ port: 0, host: '127.0.0.1' })
  const u2 = await signup(app2)
  await new Promise<void>((resolve) => {
    const req = http.request(`${address2}/api/v2/chat/stream`, { method: 'POST',
      headers: { ...u2.auth, 'content-type': 'application/json' } }, (r) => {
      let seen = 0
      r.on('data', (chunk: Buffer) => {
        seen += (chunk.toString().match(/text_delta/g) ?? []).length
        if (seen >= 2) { req.destroy(); resolve() }
      })
    })
    req.end(JSON.stringify({ message: 'long please' }))
  })
  for (let i = 0; i < 100 && !slow.requests[0]?.aborted; i++) await new Promise((r) => setTimeout(r, 20))
  t.equal(slow.requests[0].aborted, true, 'the upstream request was cancelled')

  // a model server that fails gives an error event
  const broken = await fakeLlm(t, { status: 500 })
  const app3 = await build(t, { config: { llm: { baseUrl: broken.baseUrl, model: 'x' } } })
  const address3 = await app3.listen({ port: 0, host: '127.0.0.1' })
  const u3 = await signup(app3)
  const bad = parseSse(await (await fetch(`${address3}/api/v2/chat/stream`,
    { method: 'POST', headers: { ...u3.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'x' }) })).text())
  t.equal(bad[bad.length - 1].event, 'error')
  t.match(bad[bad.length - 1].data, { message: /failed \(HTTP 500\)/ })
  const json = await app3.inject({ method: 'POST', url: '/api/v2/chat', headers: u3.auth, payload: { message: 'x' } })
  t.equal(json.statusCode, 502)
  t.equal(json.json().code, 'MODEL_UNAVAILABLE')
})

t.test('extractive mode without a model: answers from readable knowledge, says so', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  await knowledge(app, u, 'policy.txt', 'Parental leave lasts sixteen weeks at full pay.')
  const res = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth,
    payload: { message: 'How long is parental leave?' } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().model, 'cairn-extractive')
  t.match(res.json().reply, /extractive mode/)
  t.match(res.json().reply, /sixteen weeks.*\(source: policy\.txt\)/s)
  t.match(res.json().citations, [{ fileName: 'policy.txt', excerpt: /sixteen weeks/ }], 'the passages answered from')
  const stranger = await signup(app)
  const theirs = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: stranger.auth,
    payload: { message: 'How long is parental leave?' } })
  t.notMatch(theirs.json().reply, /sixteen/, 'another organization\'s knowledge is never used')
  t.same(theirs.json().citations, [], 'nor cited')
})

t.test('channels: membership, messages, message.created to a real receiver, chat replies ' +
  'as the assistant', async (t) => {
  const received: Array<{ event: string; data: Record<string, unknown> }> = []
  const rx = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => { raw += c })
    req.on('end', () => { received.push(JSON.parse(raw)); res.writeHead(204); res.end() })
  })
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r))
  t.teardown(() => rx.close())
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const owner = await signup(app)
  const mate = await addUser(app, owner)
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
    payload: { userId: mate.userId, role: 'member' } })
  const outsider = await addUser(app, owner)
  const h = (u: TestUser) => ({ ...u.auth, 'x-workspace-id': owner.workspaceId })
  await app.inject({ method: 'POST', url: '/api/v2/developer/webhooks', headers: h(owner), payload: { url: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/`, events: ['message.created'] } })

  const pub = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: h(owner),
    payload: { name: 'general', type: 'public' } })).json().data
  const priv = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: h(owner),
    payload: { name: 'secret', type: 'private' } })).json().data
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/channels', headers: h(owner),
    payload: { name: 'dm', type: 'direct', memberIds: [outsider.userId] } })).statusCode, 400,
  'members must belong to the workspace')
  t.same((await app.inject({ url: '/api/v2/channels',
    headers: h(mate) })).json().data.map((c: { name: string }) => c.name), ['general'],
  'private channels only for members')
  t.equal((await app.inject({ url: '/api/v2/channels',
    headers: { ...outsider.auth, 'x-workspace-id': owner.workspaceId } })).statusCode, 403)

  const post = await app.inject({ method: 'POST', url: '/api/v2/messages', headers: mate.auth,
    payload: { channel_id: pub.id, content: 'Hello team' } })
  t.equal(post.statusCode, 201)
  const msg = post.json().data
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/messages', headers: mate.auth,
    payload: { channel_id: priv.id, content: 'let me in' } })).statusCode, 404)
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/messages', headers: owner.auth,
    payload: { channel_id: priv.id, content: 'private note' } })).statusCode, 201)
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/messages', headers: outsider.auth,
    payload: { channel_id: pub.id, content: 'x' } })).statusCode, 404, 'not in the workspace')
  const reply = await app.inject({ method: 'POST', url: '/api/v2/messages', headers: owner.auth,
    payload: { channel_id: pub.id, content: 'Hi!', parent_message_id: msg.id } })
  t.equal(reply.json().data.parent_message_id, msg.id)
  await app.jobs.idle()
  t.equal(received.length, 2, 'private channel messages emit nothing')
  t.same(Object.keys(received[0].data).sort(),
    ['ai_twin_id', 'attachment_count', 'channel_id', 'channel_name', 'content', 'content_type', 'created_at', 'id',
      'parent_message_id', 'sender_id', 'workspace_id'])
  t.match(received[0].data,
    { id: msg.id, workspace_id: owner.workspaceId, channel_id: pub.id, channel_name: 'general', parent_message_id: null,
      sender_id: mate.userId, ai_twin_id: null, content: 'Hello team', content_type: 'text', attachment_count: 0 })
  const list = (await app.inject({ url: `/api/v2/channels/${pub.id}/messages?limit=10`,
    headers: mate.auth })).json().data
  t.same(list.map((m: { content: string }) => m.content), ['Hi!', 'Hello team'])

  const chat = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: owner.auth,
    payload: { message: 'summarise', channelId: pub.id } })
  t.equal(chat.statusCode, 200)
  const after = (await app.inject({ url: `/api/v2/channels/${pub.id}/messages?limit=1`,
    headers: mate.auth })).json().data[0]
  t.equal(after.content, chat.json().reply)
  t.match(after.ai_twin_id, /^[0-9a-f-]{36}$/)
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/chat', headers: mate.auth,
    payload: { message: 'x', channelId: priv.id } })).statusCode, 404)
  const stranger = await signup(app)
  t.equal((await app.inject({ url: `/api/v2/channels/${pub.id}/messages`, headers: stranger.auth })).statusCode, 404,
    'another organization')
})

t.test('agents: tools validated, tool loop, organization-scoped', async (t) => {
  const llm = await fakeLlm(t, {
    toolQuery: 'quince',
    answer: (b) => `${b.messages[0].role === 'system' ? b.messages[0].content : ''} | ` +
      `${b.messages.find((m) => m.role === 'tool')?.content ?? 'no tool'}`
  })
  const app = await build(t, { config: { llm: { baseUrl: llm.baseUrl, model: 'fake-1' } } })
  const u = await signup(app)
  await knowledge(app, u, 'jam.txt', 'Quince jam needs long cooking.')
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/agents', headers: u.auth,
    payload: { name: 'x', systemPrompt: 'y', capabilities: { tools: ['rm_rf'] } } })).statusCode, 400)
  const created = await app.inject({ method: 'POST', url: '/api/v2/agents', headers: u.auth,
    payload: { name: 'Cook', systemPrompt: 'You are a cook.',
      capabilities: { tools: ['search_knowledge', 'web_search'] } } })
  t.equal(created.statusCode, 201)
  const agent = created.json().agent
  t.match(agent,
    { name: 'Cook', systemPrompt: 'You are a cook.', capabilities: { tools: ['search_knowledge', 'web_search'] } })
  const res = await app.inject({ method: 'POST', url: `/api/v2/agents/${agent.id}/message`, headers: u.auth,
    payload: { message: 'How do I make quince jam?' } })
  t.equal(res.statusCode, 200)
  t.match(res.json().response, /^You are a cook\. \| .*Quince jam needs long cooking/)
  t.same(res.json().toolCalls, [{ tool: 'search_knowledge', input: { query: 'quince' } }])
  t.same((await app.inject({ url: '/api/v2/agents', headers: u.auth })).json().agents.map((a: { id: string }) => a.id),
    [agent.id])
  const mate = await addUser(app, u)
  t.equal((await app.inject({ url: `/api/v2/agents/${agent.id}`, headers: mate.auth })).statusCode, 200,
    'the organization shares its agents')
  const stranger = await signup(app)
  for (const [method, url] of [['GET', `/api/v2/agents/${agent.id}`], ['POST', `/api/v2/agents/${agent.id}/message`],
    ['DELETE', `/api/v2/agents/${agent.id}`]] as const) {
    t.equal((await app.inject({ method, url, headers: stranger.auth,
      payload: method === 'POST' ? { message: 'hi' } : undefined })).statusCode, 404, `${method} ${url}`)
  }
  t.same((await app.inject({ url: '/api/v2/agents', headers: stranger.auth })).json().agents, [])
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/agents/${agent.id}`, headers: u.auth })).statusCode, 200)
})

t.test('web_search goes to the configured SearXNG instance, or says it is not configured', async (t) => {
  const queries: string[] = []
  const searx = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x')
    queries.push(`${url.pathname}?q=${url.searchParams.get('q')}&format=${url.searchParams.get('format')}`)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ results: [{ title: 'Tide tables', url: 'https://tides.example/', content: 'High tide at noon.' }] }))
  })
  await new Promise<void>((r) => searx.listen(0, '127.0.0.1', r))
  t.teardown(() => searx.close())
  // a model that calls web_search once, then answers with what the tool returned
  const webLlm = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => { raw += c })
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string }> }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const tool = body.messages.find((m) => m.role === 'tool')
      const delta = tool ? { content: tool.content }
        : { tool_calls: [{ index: 0, id: 'w1', type: 'function',
            function: { name: 'web_search', arguments: '{"query":"tides"}' } }] }
      res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\ndata: [DONE]\n\n`)
    })
  })
  await new Promise<void>((r) => webLlm.listen(0, '127.0.0.1', r))
  t.teardown(() => webLlm.close())
  const base = `http://127.0.0.1:${(webLlm.address() as AddressInfo).port}/v1`
  for (const [webSearchUrl, expected] of [[`http://127.0.0.1:${(searx.address() as AddressInfo).port}`, /High tide at noon/], [undefined, /not configured/]] as const) {
    const app = await build(t, { config: { llm: { baseUrl: base, model: 'w' }, webSearchUrl } })
    const u = await signup(app)
    const agent = (await app.inject({ method: 'POST', url: '/api/v2/agents', headers: u.auth,
      payload: { name: 'Web', systemPrompt: 's', capabilities: { tools: ['web_search'] } } })).json().agent
    const res = (await app.inject({ method: 'POST', url: `/api/v2/agents/${agent.id}/message`, headers: u.auth,
      payload: { message: 'tides?' } })).json()
    t.match(res.response, expected)
    t.same(res.toolCalls, [{ tool: 'web_search', input: { query: 'tides' } }])
  }
  t.same(queries, ['/search?q=tides&format=json'])
})

t.test('the stream ignores Idempotency-Key: each request streams anew', async (t) => {
  const llm = await fakeLlm(t, { answer: () => 'streamed' })
  const app = await build(t, { config: { llm: { baseUrl: llm.baseUrl, model: 'f' } } })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const u = await signup(app)
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${address}/api/v2/chat/stream`,
      { method: 'POST', headers: { ...u.auth, 'content-type': 'application/json', 'idempotency-key': 'same' },
        body: JSON.stringify({ message: 'x' }) })
    t.equal(res.status, 200)
    t.equal(parseSse(await res.text()).pop()?.event, 'done')
  }
  t.equal(llm.requests.length, 2)
})
