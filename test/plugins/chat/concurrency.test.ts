import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { build, signup } from '../../helper.js'
import { MAX_CHATS_PER_USER } from '../../../src/assistant/assistant.js'

t.test('a person has at most a few chat answers under way: the next stream is a 429 CHAT_BUSY before it starts; ' +
  'others are not held up, and a finished answer frees its slot', async (t) => {
  // a model server (OpenAI-compatible, on 127.0.0.1) that starts every answer and holds it until release()
  const held: http.ServerResponse[] = []
  let arrived = 0
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      held.push(res)
      arrived++
      for (const w of waiters.filter((w) => arrived >= w.n)) { waiters.splice(waiters.indexOf(w), 1); w.resolve() }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const received = (n: number) => new Promise<void>((resolve) => {
    if (arrived >= n) resolve(); else waiters.push({ n, resolve })
  })
  const release = () => {
    for (const res of held.splice(0)) {
      res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Done.' } }] })}\n\n`)
      res.end('data: [DONE]\n\n')
    }
  }

  const app = await build(t, { config: { llm: { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    model: 'fake-1' } } })
  const u = await signup(app)
  const other = await signup(app)
  const stream = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/api/v2/chat/stream',
    headers, payload: { message: 'go' } })

  const open = Array.from({ length: MAX_CHATS_PER_USER }, () => stream(u.auth))
  await received(MAX_CHATS_PER_USER)
  const refused = await stream(u.auth)
  t.equal(refused.statusCode, 429)
  t.equal(refused.json().code, 'CHAT_BUSY')
  t.equal(refused.headers['retry-after'], '5')
  const plain = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth, payload: { message: 'go' } })
  t.equal(plain.statusCode, 429, 'a plain answer shares the same slots')
  t.equal(arrived, MAX_CHATS_PER_USER, 'neither reached the model')

  const others = stream(other.auth)
  await received(MAX_CHATS_PER_USER + 1)
  t.pass('another person\'s stream reached the model meanwhile')

  release()
  for (const res of [...await Promise.all(open), await others]) {
    t.equal(res.statusCode, 200)
    t.match(res.body, /event: done/)
  }
  const again = stream(u.auth)
  await received(MAX_CHATS_PER_USER + 2)
  release()
  t.match((await again).body, /event: done/, 'finished answers gave their slots back')
})
