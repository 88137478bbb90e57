import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { build, signup, multipart, type TestUser } from '../helper.js'
import { fakeLlm, type LlmRequest } from '../fake-llm.js'
import type { App } from '../../src/app.js'
import { loadConfig, ConfigError } from '../../src/config.js'
import { REWRITE_MAX_TOKENS, REWRITE_PROMPT, fuseHits, termsOf } from '../../src/assistant/rewrite.js'
import type { SearchHit } from '../../src/knowledge/search.js'

async function upload(app: App, u: TestUser, filename: string, content: string) {
  const body = multipart([{ filename, content }])
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...body.headers },
    payload: body.payload })
  if (res.statusCode !== 201) throw new Error(res.body)
  await app.jobs.idle()
}

const isRewrite = (b: LlmRequest['body']) => b.messages[0]?.role === 'system' &&
  b.messages[0].content === REWRITE_PROMPT
/** what the tool answered the model, from the request that carried the tool result */
const toolResult = (requests: LlmRequest[]) => {
  const tool = requests.map((r) => r.body.messages.find((m) => m.role === 'tool')).filter((m) => m).pop()
  return JSON.parse(tool!.content) as Array<{ document: string; title: string; section?: string; text: string }>
}

/** a question none of whose words is in the document; the model's terms are */
const QUESTION = 'bird staying motionless midflight'
const KESTREL = 'The kestrel hovers over meadows while hunting voles.'

/** CAIRN_SEARCH_REWRITE=on (off by default) */
const ON = { enabled: true, timeoutMs: 5000 }

type Misbehave = (b: LlmRequest['body']) => 'hang' | number | undefined

/** a fake model that calls search_knowledge with QUESTION, rewrites it as `terms`, and answers with the tool result */
async function model(t: Parameters<typeof fakeLlm>[0], terms = 'kestrel hovering hover', misbehave?: Misbehave) {
  return fakeLlm(t, { toolQuery: QUESTION, misbehave,
    answer: (b) => isRewrite(b) ? terms : `Tool said: ${b.messages.find((m) => m.role === 'tool')?.content ?? '-'}` })
}

t.test('the assistant\'s search_knowledge asks the model for terms, and finds what only the terms reach',
  async (t) => {
    const llm = await model(t)
    const app = await build(t,
      { config: { llm: { baseUrl: llm.baseUrl, apiKey: 'sk-x', model: 'fake-1' }, searchRewrite: ON } })
    const u = await signup(app)
    await upload(app, u, 'kestrel.txt', KESTREL)
    await upload(app, u, 'midflight.txt', 'A glider pilot stays aloft midflight by riding thermals.')
    const res = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth,
      payload: { message: 'How do some birds keep still in the air?' } })
    t.equal(res.statusCode, 200)

    t.equal(llm.requests.length, 3, 'the call with tools, the rewrite, the answer')
    const rewrite = llm.requests[1].body
    t.ok(isRewrite(rewrite), 'the second request is the rewrite')
    t.same(rewrite.messages, [{ role: 'system', content: REWRITE_PROMPT }, { role: 'user', content: QUESTION }],
      'the instruction and the tool\'s query, nothing else')
    t.equal(rewrite.model, 'fake-1')
    t.equal(rewrite.max_tokens, REWRITE_MAX_TOKENS)
    t.equal(rewrite.temperature, 0)
    t.equal(rewrite.tools, undefined, 'no tools offered to the rewrite')
    t.equal(llm.requests[0].body.max_tokens, undefined, 'the answer itself has no token limit')

    const found = toolResult(llm.requests)
    t.same(found.map((f) => f.document).sort(), ['kestrel.txt', 'midflight.txt'],
      'the question\'s passage and the one only the terms find')
    t.same(found.find((f) => f.document === 'kestrel.txt'), { document: 'kestrel.txt', title: 'kestrel',
      text: KESTREL }, 'a text without headings: its title from the file name, no section')
    t.same(res.json().citations.map((c: { fileName: string }) => c.fileName).sort(), ['kestrel.txt', 'midflight.txt'])
  })

t.test('an agent\'s search_knowledge rewrites too', async (t) => {
  const llm = await model(t)
  const app = await build(t, { config: { llm: { baseUrl: llm.baseUrl, model: 'fake-1' }, searchRewrite: ON } })
  const u = await signup(app)
  await upload(app, u, 'kestrel.txt', KESTREL)
  const agent = (await app.inject({ method: 'POST', url: '/api/v2/agents', headers: u.auth,
    payload: { name: 'Birds', systemPrompt: 'Answer from the notes.',
      capabilities: { tools: ['search_knowledge'] } } })).json().agent
  const res = await app.inject({ method: 'POST', url: `/api/v2/agents/${agent.id}/message`, headers: u.auth,
    payload: { message: 'q' } })
  t.equal(res.statusCode, 200)
  t.same(res.json().toolCalls, [{ tool: 'search_knowledge', input: { query: QUESTION } }],
    'the query as the model wrote it')
  t.equal(llm.requests.filter((r) => isRewrite(r.body)).length, 1)
  t.same(toolResult(llm.requests).map((f) => f.document), ['kestrel.txt'], 'found through the terms')
})

t.test('CAIRN_SEARCH_REWRITE=off: no rewrite call, the question alone is searched', async (t) => {
  t.equal(loadConfig({}).searchRewrite.enabled, false, 'off by default')
  t.equal(loadConfig({ CAIRN_SEARCH_REWRITE: 'on' }).searchRewrite.enabled, true)
  t.equal(loadConfig({ CAIRN_SEARCH_REWRITE: 'off' }).searchRewrite.enabled, false)
  const refused = (() => { try { loadConfig({ CAIRN_SEARCH_REWRITE: 'maybe' }) } catch (err) { return err } })()
  t.ok(refused instanceof ConfigError, 'another value stops the start')
  t.match((refused as Error).message, /CAIRN_SEARCH_REWRITE="maybe" is invalid: expected one of on, off/)

  const llm = await model(t)
  const config = loadConfig({ CAIRN_SEARCH_REWRITE: 'off' })
  const app = await build(t, { config: { llm: { baseUrl: llm.baseUrl, model: 'fake-1' },
    searchRewrite: config.searchRewrite } })
  const u = await signup(app)
  await upload(app, u, 'kestrel.txt', KESTREL)
  const res = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth, payload: { message: 'q' } })
  t.equal(res.statusCode, 200)
  t.equal(llm.requests.length, 2, 'the call with tools and the answer')
  t.notOk(llm.requests.some((r) => isRewrite(r.body)))
  t.same(toolResult(llm.requests), [], 'the question alone does not find the kestrel')
})

t.test('a failing, hanging or empty rewrite: the question is searched as asked and the chat answers', async (t) => {
  const cases: Array<[string, Misbehave | undefined, string]> = [
    ['HTTP 503', (b) => isRewrite(b) ? 503 : undefined, 'kestrel'],
    ['no answer within the timeout', (b) => isRewrite(b) ? 'hang' : undefined, 'kestrel'],
    ['nothing but reasoning', undefined, '<think>they mean kestrels</think>\n\n'],
    ['the question again', undefined, QUESTION.toUpperCase()]
  ]
  for (const [name, misbehave, terms] of cases) {
    const llm = await model(t, terms, misbehave)
    const app = await build(t, { config: { llm: { baseUrl: llm.baseUrl, model: 'fake-1' },
      searchRewrite: { enabled: true, timeoutMs: 300 } } })
    const u = await signup(app)
    await upload(app, u, 'kestrel.txt', KESTREL)
    await upload(app, u, 'still.txt', 'Staying motionless is hard for a bird.')
    const res = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth, payload: { message: 'q' } })
    t.equal(res.statusCode, 200, `${name}: the chat answers`)
    t.equal(llm.requests.filter((r) => isRewrite(r.body)).length, 1, `${name}: the rewrite was asked`)
    t.same(toolResult(llm.requests).map((f) => f.document), ['still.txt'], `${name}: the question's passage only`)
    if (name.startsWith('no answer')) {
      t.ok(llm.requests.find((r) => isRewrite(r.body))?.aborted, `${name}: the rewrite call was cancelled`)
    }
  }
})

t.test('search routes and MCP never ask the model; unified search titles knowledge hits by document title',
  async (t) => {
    const llm = await model(t)
    const app = await build(t, { config: { llm: { baseUrl: llm.baseUrl, model: 'fake-1' }, searchRewrite: ON } })
    const u = await signup(app)
    await upload(app, u, 'server.md', '# Server Configuration\n\n## Memory\n\nThe kestrel cache holds 64 MB.\n')
    const search = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: u.auth,
      payload: { query: QUESTION } })
    t.equal(search.statusCode, 200)
    const unified = await app.inject({ method: 'POST', url: '/api/v2/search', headers: u.auth,
      payload: { query: 'kestrel cache' } })
    t.equal(unified.statusCode, 200)
    t.match(unified.json().results, [{ kind: 'knowledge', title: 'Server Configuration' }],
      'the document\'s title, not its file name')

    await app.listen({ port: 0, host: '127.0.0.1' })
    const address = app.server.address()
    const url = new URL(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/mcp`)
    const client = new Client({ name: 'cairn-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(url,
      { requestInit: { headers: { ...u.auth, 'x-workspace-id': u.workspaceId } } }))
    t.teardown(() => client.close())
    const mcp = await client.callTool({ name: 'search_knowledge', arguments: { query: 'kestrel' } })
    t.notOk(mcp.isError, 'the MCP tool answers')
    t.equal(llm.requests.length, 0, 'the fake model saw no request from the routes or the MCP tool')

    // the assistant's tool result says where the passage is
    const res = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth, payload: { message: 'q' } })
    t.equal(res.statusCode, 200)
    const [passage, ...more] = toolResult(llm.requests)
    t.same(more, [])
    t.same(Object.keys(passage), ['document', 'title', 'section', 'text'])
    t.match(passage, { document: 'server.md', title: 'Server Configuration',
      section: 'Server Configuration › Memory', text: /The kestrel cache holds 64 MB\./ },
    'the file name, the document\'s title and the headings above the passage')
  })

t.test('the rewritten terms search only what the caller reads: another organization\'s passages stay out',
  async (t) => {
    const llm = await model(t)
    const app = await build(t, { config: { llm: { baseUrl: llm.baseUrl, model: 'fake-1' }, searchRewrite: ON } })
    const owner = await signup(app)
    const other = await signup(app)
    await upload(app, other, 'kestrel.txt', KESTREL)
    await upload(app, owner, 'still.txt', 'Staying motionless is hard for a bird.')
    const res = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: owner.auth,
      payload: { message: 'q' } })
    t.equal(res.statusCode, 200)
    t.ok(llm.requests.some((r) => isRewrite(r.body)), 'the rewrite ran')
    t.same(toolResult(llm.requests).map((f) => f.document), ['still.txt'], 'only the caller\'s own passage')
    t.same(res.json().citations.map((c: { fileName: string }) => c.fileName), ['still.txt'])

    // the other organization's person finds it through the same terms
    const theirs = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: other.auth,
      payload: { message: 'q' } })
    t.same(toolResult(llm.requests).map((f) => f.document), ['kestrel.txt'], 'its own organization finds it')
    t.same(theirs.json().citations.map((c: { fileName: string }) => c.fileName), ['kestrel.txt'])
  })

t.test('termsOf: the terms in a model\'s answer', async (t) => {
  t.equal(termsOf('kestrel hover hovering'), 'kestrel hover hovering')
  t.equal(termsOf('<think>\nthe user wants birds\n</think>\nkestrel hover'), 'kestrel hover')
  t.equal(termsOf('<think>still thinking when the tokens ran out'), '', 'an unfinished reasoning block: nothing')
  t.equal(termsOf('Search terms: "kestrel", hover\nThese terms cover synonyms.'), 'kestrel , hover',
    'the label, quotes and explanation lines go')
  t.equal(termsOf('\n- kestrel hover'), 'kestrel hover', 'a list mark goes')
  t.equal(termsOf('   \n\n'), '')
  t.equal(termsOf('x'.repeat(500)).length, 300, 'at most 300 characters')
})

t.test('fuseHits: reciprocal rank fusion of the question\'s and the terms\' passages', async (t) => {
  const hit = (id: string) => ({ chunk: { id } }) as unknown as SearchHit
  const ids = (hits: SearchHit[]) => hits.map((h) => h.chunk.id)
  t.same(ids(fuseHits([[hit('a'), hit('b'), hit('c')], [hit('x'), hit('c')]], 10)), ['c', 'a', 'x', 'b'],
    'found by both first; then ranks interleaved, the question\'s first on a tie')
  t.same(ids(fuseHits([[hit('a'), hit('b')], [hit('x'), hit('y')]], 3)), ['a', 'x', 'b'], 'at most limit')
  t.same(ids(fuseHits([[], [hit('x')]], 5)), ['x'])
})
