import t, { type Test } from 'tap'
import { build, signup } from '../../helper.js'
import { fakeLlm, parseSse } from '../../fake-llm.js'
import { loggerOptions } from '../../../src/app.js'

/** The raw SSE text of one chat stream over a real socket, and the service's log lines. */
async function stream(t: Test, fail?: 'error-chunk' | 'cut' | 'json-error' | 'json-completion', status?: number) {
  const llm = await fakeLlm(t, { fail, status, answer: () => 'The quick brown fox jumps over the lazy dog.' })
  const lines: string[] = []
  const app = await build(t,
    { config: { llm: { baseUrl: llm.baseUrl, model: 'fake-1' } },
      logger: loggerOptions('warn', { write: (l: string) => { lines.push(l) } }) })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const u = await signup(app)
  const res = await fetch(`${address}/api/v2/chat/stream`,
    { method: 'POST', headers: { ...u.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'go' }) })
  const text = await res.text()
  return { res, text, events: parseSse(text), lines, llm, app, u }
}

t.test('every event has an id, in order; proxies are told not to buffer; the stream ends with done', async (t) => {
  const { res, text, events } = await stream(t)
  t.equal(res.headers.get('x-accel-buffering'), 'no')
  t.match(res.headers.get('x-request-id'), /^[0-9a-f-]{36}$/)
  const ids = text.split('\n\n').filter(Boolean).map((block) => /^id: (\d+)$/m.exec(block)?.[1])
  t.same(ids, ids.map((_, i) => String(i + 1)), 'ids 1, 2, 3, … on every event')
  t.equal(events[0].event, 'ready')
  t.equal(events[events.length - 1].event, 'done')
  t.equal(events.filter((e) => e.event === 'done' || e.event === 'error').length, 1, 'exactly one ending')
  t.match(events[events.length - 1].data, { citations: [] }, 'done lists the passages cited (none here)')
})

for (const [fail, status, what] of [
  ['error-chunk', undefined, 'an error chunk in the middle of the stream'],
  ['cut', undefined, 'a connection dropped in the middle of the stream'],
  ['json-error', undefined, 'a JSON error object instead of a stream'],
  [undefined, 503, 'a 5xx answer']
] as const) {
  t.test(`${what} ends the stream with error, never done; upstream body and URL only in the log`, async (t) => {
    const { events, text, lines, llm } = await stream(t, fail, status)
    const last = events[events.length - 1]
    t.equal(last.event, 'error')
    t.notOk(events.some((e) => e.event === 'done'), 'never reported as done')
    t.match(last.data, { message: /^The language model/ })
    const port = new URL(llm.baseUrl).port
    t.notMatch(text, port, 'the upstream URL is not shown')
    t.notMatch(text, /127\.0\.0\.1|CUDA|10\.0\.0\.7|secret-model|not loaded/, 'the upstream body is not shown')
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'chat stream failed')
    t.ok(logged, 'the failure is logged')
    t.match(logged.upstream.url, `${llm.baseUrl}/chat/completions`, 'with the upstream URL')
    if (fail === 'error-chunk') t.match(logged.upstream.body, /CUDA out of memory/, 'and what the model server said')
    if (fail === 'json-error') t.match(logged.upstream.body, /secret-model/)
    if (status) t.equal(logged.upstream.status, status)
  })
}

t.test('a server that ignores stream:true and sends one JSON completion still answers', async (t) => {
  const { events } = await stream(t, 'json-completion')
  t.equal(events[events.length - 1].event, 'done')
  t.match(events[events.length - 1].data, { reply: 'The quick brown fox jumps over the lazy dog.' })
})

t.test('the JSON chat answers 502 with a safe message; the detail is logged', async (t) => {
  const { app, u, lines, llm } = await stream(t, 'error-chunk')
  const res = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth, payload: { message: 'x' } })
  t.equal(res.statusCode, 502)
  t.equal(res.json().code, 'MODEL_UNAVAILABLE')
  t.notMatch(res.body, /CUDA|127\.0\.0\.1/)
  const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request failed')
  t.match(logged?.upstream, { url: `${llm.baseUrl}/chat/completions`, body: /CUDA/ })
})
