import t from 'tap'
import net from 'node:net'
import { build, signup, createKey } from '../helper.js'
import { jsonShapeProblem, MAX_JSON_KEYS, MAX_JSON_VALUES } from '../../src/http/json-guard.js'
import { CREDENTIAL_BODY_LIMIT } from '../../src/http/body-budget.js'
import { MCP_BODY_LIMIT } from '../../src/mcp/plugin.js'
import type { App } from '../../src/app.js'

/** `{"email":…,"password":…,"0":0,"1":0,…,"zz":0,…}` with `keys` distinct keys besides those of `head` */
function manyKeys(keys: number, head: Record<string, unknown> = {}): string {
  const parts = Object.entries(head).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
  for (let i = 0; i < keys; i++) parts.push(`"${i.toString(36)}":0`)
  return `{${parts.join(',')}}`
}

/**
 * Sends the request's headers and only the first KB of its body over a real socket, and reads the answer the
 * server gives before the rest was ever sent: what it answers, it answered without reading (or parsing) the body.
 */
async function answerBeforeBody(app: App, url: string, body: string, headers: Record<string, string> = {}) {
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const socket = net.connect(port, '127.0.0.1')
  const head = [`POST ${url} HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
  socket.write(`${head.join('\r\n')}\r\n\r\n${body.slice(0, 1024)}`)
  let text = ''
  socket.setEncoding('utf8')
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: string) => {
      text += chunk
      const [top, rest] = text.split('\r\n\r\n')
      const length = /content-length: (\d+)/i.exec(top)
      if (rest !== undefined && length && Buffer.byteLength(rest) >= Number(length[1])) resolve()
    })
    socket.on('error', reject)
    socket.on('close', () => resolve())
  })
  socket.destroy()
  const [top, rest] = text.split('\r\n\r\n')
  return { status: Number(top.split(' ')[1]), body: JSON.parse(rest) as Record<string, unknown> }
}

t.test('sign-up and login bodies are small: 90,000 keys are refused before the body is read', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const u = await signup(app)
  const attack = manyKeys(90_000, { email: u.email, password: 'wrong' })
  t.ok(attack.length > 700_000 && attack.length < 1_048_576, 'under the default 1 MB limit')
  for (const url of ['/api/v2/auth/login', '/api/v2/auth/signup']) {
    const res = await answerBeforeBody(app, url, attack)
    t.equal(res.status, 413, `${url}: answered with only the headers and 1 KB sent`)
    t.match(res.body, { success: false, statusCode: 413, code: 'PAYLOAD_TOO_LARGE' })
  }
  // a body that does not say its length is cut as it passes the limit
  const chunked = await app.inject({ method: 'POST', url: '/api/v2/auth/login',
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, payload: attack })
  t.equal(chunked.statusCode, 413)

  const ok = await app.inject({ method: 'POST', url: '/api/v2/auth/login',
    payload: { email: u.email, password: u.password } })
  t.equal(ok.statusCode, 200, 'an ordinary login fits')
  const justUnder = JSON.stringify({ email: u.email, password: u.password,
    pad: 'x'.repeat(CREDENTIAL_BODY_LIMIT - 200) })
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/auth/login',
    headers: { 'content-type': 'application/json' }, payload: justUnder })).statusCode, 200)
  // a route that sets a password behind a credential (an owner adding a user) has the same small budget
  const added = await app.inject({ method: 'POST', url: '/api/v2/users', headers: u.auth,
    payload: { email: 'big@example.test', password: 'x'.repeat(CREDENTIAL_BODY_LIMIT) } })
  t.equal(added.statusCode, 413)
})

t.test('every JSON body is counted before it is parsed: keys, values and depth', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const headers = { ...u.auth, 'x-workspace-id': u.workspaceId, 'content-type': 'application/json' }
  const artifact = (content: string) => `{"type":"task_plan","title":"x","content":${content}}`

  // a broken end: had the body been parsed, the answer would be INVALID_JSON, not the count
  const keys = await app.inject({ method: 'POST', url: '/api/v2/artifacts', headers,
    payload: artifact(manyKeys(90_000)).slice(0, -1) + ',"broken' })
  t.equal(keys.statusCode, 413)
  t.match(keys.json(), { code: 'PAYLOAD_TOO_LARGE',
    message: `JSON body too large: more than ${MAX_JSON_KEYS} keys` })

  const zeros = `[${new Array(MAX_JSON_VALUES + 1).fill('0').join(',')}`
  const values = await app.inject({ method: 'POST', url: '/api/v2/artifacts', headers,
    payload: artifact(`{"list":${zeros}`) })
  t.equal(values.statusCode, 413)
  t.match(values.json().message, `more than ${MAX_JSON_VALUES} values`)

  const deep = await app.inject({ method: 'POST', url: '/api/v2/artifacts', headers,
    payload: artifact('{"a":'.repeat(40) + '0' + '}'.repeat(40)) })
  t.equal(deep.statusCode, 400)
  t.match(deep.json(), { code: 'INVALID_JSON', message: /deeper than 32/ })

  // what a real document holds fits
  const fits = await app.inject({ method: 'POST', url: '/api/v2/artifacts', headers,
    payload: artifact(JSON.stringify({ steps: Array.from({ length: 2000 }, (_, i) => ({ n: i, text: 'step', done: false,
      tags: ['a', 'b'] })) })) })
  t.equal(fits.statusCode, 201, fits.body.slice(0, 200))
})

t.test('the counter reads strings, escapes included, as strings', async (t) => {
  t.equal(jsonShapeProblem('{"a":"x:,{[","b":["\\"",":"]}'), undefined)
  t.equal(jsonShapeProblem(`[${'"\\\\",'.repeat(10)}0]`), undefined, 'an escaped backslash ends no string early')
  const colons = `{"k":"${':'.repeat(MAX_JSON_KEYS * 2)}"}`
  t.equal(jsonShapeProblem(colons), undefined, 'colons and commas inside a string are not counted')
  t.equal(jsonShapeProblem(`["\\"${','.repeat(MAX_JSON_VALUES + 5)}"]`), undefined, 'nor after an escaped quote')
  t.match(jsonShapeProblem(manyKeys(MAX_JSON_KEYS + 1)), { status: 413, message: `more than ${MAX_JSON_KEYS} keys` })
  t.equal(jsonShapeProblem(manyKeys(MAX_JSON_KEYS)), undefined, 'the limit itself is allowed')
  t.match(jsonShapeProblem('['.repeat(33)), { status: 400 })
  t.equal(jsonShapeProblem('['.repeat(32)), undefined)
  t.equal(jsonShapeProblem('{"a":"unterminated'), undefined, 'malformed text is left to the parser')
})

t.test('the tool server takes a few MB, not the upload route\'s 50', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const u = await signup(app)
  const key = await createKey(app, u, ['knowledge:write'])
  const headers = { authorization: `Bearer ${key.key}`, 'x-workspace-id': u.workspaceId,
    accept: 'application/json, text/event-stream' }
  const call = (args: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_document",` +
    `"arguments":${args}}}`

  const big = call(JSON.stringify({ fileName: 'a.md', content: 'x'.repeat(MCP_BODY_LIMIT) }))
  const res = await answerBeforeBody(app, '/api/mcp', big, headers)
  t.equal(res.status, 413, 'a body over the limit: refused on its Content-Length')
  t.match(res.body, { code: 'PAYLOAD_TOO_LARGE' })

  // under the byte limit, an object of 900,000 keys is refused by its count, before any parse
  const million = call(manyKeys(900_000)).slice(0, -2)
  t.ok(million.length < MCP_BODY_LIMIT, 'under the byte limit')
  const keys = await app.inject({ method: 'POST', url: '/api/mcp', headers: { ...headers,
    'content-type': 'application/json' }, payload: million })
  t.equal(keys.statusCode, 413)
  t.match(keys.json(), { message: /more than 20000 keys/ })

  // a text document past the 1 MB of other JSON bodies still goes through
  const content = 'A line of notes.\n'.repeat(100_000)
  t.ok(content.length > 1024 * 1024)
  const doc = await app.inject({ method: 'POST', url: '/api/mcp', headers: { ...headers,
    'content-type': 'application/json' },
  payload: call(JSON.stringify({ fileName: 'notes.md', content })) })
  t.equal(doc.statusCode, 200)
  t.match(doc.body, /Uploaded notes\.md/)
  t.notMatch(doc.body, /"isError":true/)
  // (indexed in the background: done before the app closes, which would otherwise stop it mid-way)
  await app.jobs.idle()
})
