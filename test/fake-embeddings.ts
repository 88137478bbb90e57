import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

/** words that mean the same to this fake model: each maps to one concept */
const CONCEPTS: Record<string, string> = { car: 'vehicle', automobile: 'vehicle', vehicle: 'vehicle', cars: 'vehicle',
  automobiles: 'vehicle', puppy: 'dog', dog: 'dog', hound: 'dog' }

/** A deterministic embedding: words (folded to concepts) hashed into `dims` buckets, L2-normalised. */
export function fakeVector(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0)
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const key = CONCEPTS[word] ?? word
    let h = 2166136261
    for (const c of key) h = Math.imul(h ^ c.charCodeAt(0), 16777619)
    v[(h >>> 0) % dims] += 1
  }
  const norm = Math.hypot(...v) || 1
  return v.map((x) => x / norm)
}

export interface FakeEmbeddings { url: string;
  requests: Array<{ model: string; input: string[]; authorization?: string }>; failNext: number;
  close(): Promise<void> }

/**
 * An OpenAI-compatible POST /v1/embeddings server on 127.0.0.1. Vector size per model (`dims`, default 1024);
 * `failNext` requests answer 500 first (retry tests). GET /v1/models lists the models of `dims`.
 */
export async function fakeEmbeddings(t: Test, dims: Record<string, number> = {}): Promise<FakeEmbeddings> {
  const fake: FakeEmbeddings = { url: '', requests: [], failNext: 0, close: async () => {} }
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => { raw += c })
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ object: 'list', data: Object.keys(dims).map((id) => ({ id, object: 'model' })) }))
        return
      }
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') { res.writeHead(404); res.end(); return }
      const body = JSON.parse(raw) as { model: string; input: string | string[] }
      const input = Array.isArray(body.input) ? body.input : [body.input]
      fake.requests.push({ model: body.model, input, authorization: req.headers.authorization })
      if (fake.failNext > 0) {
        fake.failNext--
        res.writeHead(500, { 'content-type': 'application/json' })
        res.end('{"error":{"message":"model is loading"}}')
        return
      }
      const size = dims[body.model] ?? 1024
      // answered out of order, as the protocol allows: clients must sort by index
      const data = input.map((text, index) => ({ object: 'embedding', index,
        embedding: fakeVector(text, size) })).reverse()
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 0, total_tokens: 0 } }))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  fake.close = () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()) })
  t.teardown(() => fake.close())
  return fake
}
