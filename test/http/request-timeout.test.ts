import t from 'tap'
import net from 'node:net'
import { once } from 'node:events'
import { build, signup } from '../helper.js'
import { loadConfig, ConfigError } from '../../src/config.js'
import type { App } from '../../src/app.js'

t.test('CAIRN_REQUEST_TIMEOUT: seconds, 120 by default', async (t) => {
  t.equal(loadConfig({}).requestTimeoutMs, 120_000)
  t.equal(loadConfig({ CAIRN_REQUEST_TIMEOUT: '2.5' }).requestTimeoutMs, 2500)
  t.throws(() => loadConfig({ CAIRN_REQUEST_TIMEOUT: '0' }), ConfigError)
})

function portOf(app: App): number {
  const address = app.server.address()
  return typeof address === 'object' && address ? address.port : 0
}

/** Writes `text` and then nothing; resolves with what the server sent once it closes the connection. */
async function sendAndWait(app: App, text: string): Promise<string> {
  const socket = net.connect(portOf(app), '127.0.0.1')
  socket.setEncoding('utf8')
  let received = ''
  socket.on('data', (chunk: string) => { received += chunk })
  socket.write(text)
  await once(socket, 'close')
  return received
}

t.test('a request whose body comes slowly or never is answered 408 and its connection closed', async (t) => {
  const app = await build(t, { config: { requestTimeoutMs: 300 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const head = (length: number) => 'POST /api/v2/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`

  for (const [what, text] of [['an empty body', head(100)], ['part of a body', head(100) + '{"email":"a@b.c",']]) {
    const answer = await sendAndWait(app, text)
    t.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/, what)
    const body = JSON.parse(answer.split('\r\n\r\n')[1]) as Record<string, unknown>
    t.same(body, { success: false, statusCode: 408, error: 'Request Timeout', code: 'ERROR',
      message: 'The request did not arrive in full within the time allowed' }, `${what}: the error shape`)
  }
  const partialHeaders = await sendAndWait(app, 'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n')
  t.match(partialHeaders, /^HTTP\/1\.1 408 /, 'headers that never end: closed too')

  // a request that arrives in time is served on the same server
  const health = await fetch(`http://127.0.0.1:${portOf(app)}/api/health`)
  t.equal(health.status, 200)
})

t.test('the limit is on receiving the request: an answer may take longer', async (t) => {
  // 1.5 s to receive a request sent at once, even on a machine too busy to run this process for a while
  const app = await build(t, { config: { requestTimeoutMs: 1500 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const u = await signup(app)
  const headers = { ...u.auth, 'x-workspace-id': u.workspaceId }
  const created = await app.inject({ method: 'POST', url: '/api/v2/artifacts', headers,
    payload: { type: 'task_plan', title: 'plan', review_policy: 'request_review' } })
  const id = created.json().data.id as string
  // wait_for_review holds its answer for 3 s, twice the request's limit
  const res = await fetch(`http://127.0.0.1:${portOf(app)}/api/mcp`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name: 'wait_for_review', arguments: { id, timeoutSeconds: 3 } } })
  })
  t.equal(res.status, 200)
  const text = await res.text()
  t.match(text, /"changed":false/, 'the wait ran to its end')
  t.notMatch(text, /"isError":true/)
})
