import t from 'tap'
import { createExtractor, DEFAULT_WORKER_LIMITS } from '../../src/ingest/run.js'
import { build, signup, multipart, type TestUser } from '../helper.js'
import type { App } from '../../src/app.js'
import { asciiHex, lzwBomb, pdfWithStream, zlibWithWindow } from './hostile-pdf.js'

const MB = 1024 * 1024
const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

async function upload(app: App, user: TestUser, filename: string, content: Buffer | string) {
  const body = multipart([{ filename, content }])
  return app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...user.auth, ...body.headers },
    payload: body.payload })
}

t.test('uploads of bombs, deep HTML and text past the upload limit answer 422 and store nothing', async (t) => {
  // a measurement budget of 16 MB: each bomb is refused after 16 MB of decoding, not 256, so that a busy machine never
  // reaches the time limit first; what the limits are by default is tested in pdf-bombs.test.ts
  const extractor = createExtractor({ ...DEFAULT_WORKER_LIMITS, maxTextBytes: MB, maxUncompressedBytes: 16 * MB,
    timeoutMs: 600_000 })
  const app = await build(t, { config: { rateLimits: NO_LIMITS }, knowledge: { extractor } })
  t.teardown(() => extractor.close())
  const u = await signup(app)

  const lzw = await upload(app, u, 'lzw.pdf', pdfWithStream('/Filter /LZWDecode', lzwBomb(350_000)))
  t.equal(lzw.statusCode, 422)
  t.match(lzw.json(), { code: 'UNREADABLE_FILE', message: /PDF streams expand to more than 16 MB: refused/ })
  const chain = await upload(app, u, 'chain.pdf',
    pdfWithStream('/Filter [/ASCIIHexDecode /FlateDecode]', asciiHex(zlibWithWindow(20 * MB, 15))))
  t.equal(chain.statusCode, 422)
  t.match(chain.json().message, /PDF streams expand to more than 16 MB/)

  const deep = await upload(app, u, 'deep.html', '<div>'.repeat(100_000) + 'x' + '</div>'.repeat(100_000))
  t.equal(deep.statusCode, 422, 'deeply nested HTML')
  t.match(deep.json(), { code: 'UNREADABLE_FILE', message: /nested more than 1000 levels deep/ })
  const lists = await upload(app, u, 'list.html', '<ul>' + '<li>item'.repeat(5000) + '</ul>')
  t.equal(lists.statusCode, 201, 'unclosed list items are not depth')

  const words = '<p>' + 'lorem ipsum dolor sit amet '.repeat(50_000) + '</p>'
  t.ok(words.length > MB)
  const big = await upload(app, u, 'big.html', words)
  t.equal(big.statusCode, 422, 'more text than the upload limit')
  t.match(big.json().message, /text is larger than the 1 MB an upload may have: refused/)

  const docs = await app.inject({ url: '/api/knowledge/documents', headers: u.auth })
  t.equal(docs.json().count, 1, 'only the list')
})

t.test('an upload\'s Idempotency-Key stands for its content: another file of the same size is refused, not ' +
  'replayed', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const send = (content: string, key: string, fields: Record<string, string> = {}) => {
    const body = multipart([{ filename: 'notes.md', content, contentType: 'text/markdown' }], fields)
    return app.inject({ method: 'POST', url: '/api/knowledge/upload',
      headers: { ...u.auth, ...body.headers, 'idempotency-key': key }, payload: body.payload })
  }
  const first = await send('# Alpine notes: edelweiss\n', 'same-size')
  t.equal(first.statusCode, 201, first.body)
  const retry = await send('# Alpine notes: edelweiss\n', 'same-size')
  t.equal(retry.statusCode, 201)
  t.equal(retry.headers['idempotency-replayed'], 'true', 'the same file again: replayed')
  t.equal(retry.body, first.body)

  const other = await send('# Alpine notes: gentians\n', 'same-size')
  t.equal(other.statusCode, 422, 'another file of the same length: refused')
  t.equal(other.json().code, 'IDEMPOTENCY_KEY_REUSED')
  const field = await send('# Alpine notes: edelweiss\n', 'fields', { category: 'aaaa' })
  t.equal(field.statusCode, 201)
  const otherField = await send('# Alpine notes: edelweiss\n', 'fields', { category: 'bbbb' })
  t.equal(otherField.statusCode, 422, 'another field value of the same length: refused')

  const docs = (await app.inject({ url: '/api/knowledge/documents', headers: u.auth })).json()
  t.equal(docs.count, 2, 'one document per key')
})
