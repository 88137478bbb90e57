import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

export interface LlmRequest {
  body: { model: string;
    messages: Array<{ role: string; content: string; tool_calls?: unknown[]; tool_call_id?: string }>;
    tools?: Array<{ function: { name: string } }>; stream?: boolean; max_tokens?: number; temperature?: number }
  aborted: boolean
}

/**
 * An OpenAI-compatible /v1/chat/completions server on 127.0.0.1 that streams SSE deltas. When the request
 * offers search_knowledge and has no tool result yet, it calls the tool with `toolQuery`; otherwise it
 * answers with `answer(request)` in several deltas. `delayMs` spaces the deltas (for abort tests).
 */
export async function fakeLlm(t: Test, opts: {
  toolQuery?: string; answer?: (r: LlmRequest['body']) => string; delayMs?: number; status?: number
  /**
   * How the answer goes wrong, as model servers do: an `{"error"}` chunk or a dropped connection after two
   * deltas, one JSON error object (status 200) instead of a stream, or a whole non-stream completion.
   */
  fail?: 'error-chunk' | 'cut' | 'json-error' | 'json-completion'
  /** the ids GET /v1/models lists (default `fake-model`) */
  models?: string[]
  /**
   * One request's own failure, the others answered as usual: `hang` sends the stream's headers and then nothing
   * until the client gives up; a number answers that HTTP status with an error body.
   */
  misbehave?: (r: LlmRequest['body']) => 'hang' | number | undefined
} = {}) {
  const requests: LlmRequest[] = []
  const server = http.createServer((req, res) => {
    // the model list, as OpenAI-compatible servers give it (what a start asks to see the server answers)
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ object: 'list', data: (opts.models ?? ['fake-model']).map((id) => ({ id,
        object: 'model', owned_by: 'fake' })) }))
      return
    }
    let raw = ''
    req.on('data', (c) => { raw += c })
    req.on('end', async () => {
      const entry: LlmRequest = { body: JSON.parse(raw), aborted: false }
      requests.push(entry)
      res.on('close', () => { if (!res.writableFinished) entry.aborted = true })
      const own = opts.misbehave?.(entry.body)
      if (own === 'hang') { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.flushHeaders(); return }
      if (typeof own === 'number') {
        res.writeHead(own, { 'content-type': 'application/json' })
        res.end('{"error":{"message":"overloaded"}}')
        return
      }
      if (opts.status) {
        res.writeHead(opts.status,
          { 'content-type': 'application/json' }); res.end('{"error":{"message":"model not loaded"}}'); return
      }
      if (opts.fail === 'json-error') {
        res.writeHead(200,
          { 'content-type': 'application/json' }); res.end('{"error":"model \'secret-model\' not found, try ' +
          'pulling it first"}'); return
      }
      if (opts.fail === 'json-completion') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ id: 'c1', object: 'chat.completion',
          choices: [{ index: 0,
            message: { role: 'assistant', content: (opts.answer ?? (() => 'One whole answer.'))(entry.body) },
            finish_reason: 'stop' }] }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      const send = (delta: object) => res.write(`data: ${JSON.stringify({
        id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta }]
      })}\n\n`)
      const body = entry.body
      const hasToolResult = body.messages.some((m) => m.role === 'tool')
      if (opts.toolQuery && body.tools?.some((x) => x.function.name === 'search_knowledge') && !hasToolResult) {
        send({ role: 'assistant',
          tool_calls: [{ index: 0, id: 'call_1', type: 'function',
            function: { name: 'search_knowledge', arguments: '' } }] })
        send({ tool_calls: [{ index: 0,
          function: { arguments: JSON.stringify({ query: opts.toolQuery }).slice(0, 10) } }] })
        send({ tool_calls: [{ index: 0,
          function: { arguments: JSON.stringify({ query: opts.toolQuery }).slice(10) } }] })
        res.end('data: [DONE]\n\n')
        return
      }
      const text = (opts.answer ?? (() => 'Hello from the fake model. It streams in pieces.'))(body)
      const pieces = text.match(/.{1,7}/gs) ?? []
      for (const [i, piece] of pieces.entries()) {
        if (res.destroyed) return
        if (i === 2 && opts.fail === 'error-chunk') {
          res.end(`data: ${JSON.stringify({
            error: { message: 'CUDA out of memory at 10.0.0.7', type: 'server_error' }
          })}\n\n`)
          return
        }
        if (i === 2 && opts.fail === 'cut') { res.destroy(); return }
        send({ content: piece })
        if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs))
      }
      res.end('data: [DONE]\n\n')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests }
}

/** Parses an SSE body into events with JSON data. */
export function parseSse(text: string): Array<{ event: string; data: unknown }> {
  const out: Array<{ event: string; data: unknown }> = []
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event = 'message'
    const data: string[] = []
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim()
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart())
    }
    if (data.length) out.push({ event, data: JSON.parse(data.join('\n')) })
  }
  return out
}
