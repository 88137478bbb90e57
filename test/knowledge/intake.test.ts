import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { once } from 'node:events'
import { build, signup, multipart, tempDir, type TestUser, type FilePart, FIXTURES } from '../helper.js'
import { streamedDocxBomb } from '../zip-helper.js'
import { manyPagePdf } from '../pdf-helper.js'
import { createExtractor, DEFAULT_WORKER_LIMITS, type ExtractEvent } from '../../src/ingest/run.js'
import { safeFileName } from '../../src/ingest/file-name.js'
import { chunkText } from '../../src/ingest/chunker.js'
import type { App } from '../../src/app.js'

const fixtures = path.join(FIXTURES, 'knowledge')
const docx = fs.readFileSync(path.join(fixtures, 'notes.docx'))
const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

async function upload(app: App, user: TestUser, file: FilePart, fields: Record<string, string> = {}) {
  const body = multipart([file], fields)
  return app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...user.auth, ...body.headers },
    payload: body.payload })
}
const found = async (app: App, user: TestUser, query: string, mode?: string) => (await app.inject({
  method: 'POST', url: '/api/knowledge/search', headers: user.auth, payload: mode ? { query, mode } : { query }
})).json().results.map((r: { document: { id: string } }) => r.document.id) as string[]

t.test('a DOCX whose zip directory lies about sizes: 422, and memory stays bounded', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  // warm the extraction worker (thread, pdf.js and mammoth loaded) so only the archive is measured
  t.equal((await upload(app, u, { filename: 'notes.docx', content: docx })).statusCode, 201)
  const liar = await streamedDocxBomb(512 * 1024 * 1024, 1000)
  t.ok(liar.length < 1024 * 1024, `the archive is small (${liar.length} bytes) and says document.xml has 1000 bytes`)

  const before = process.memoryUsage.rss()
  let peak = before
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()) }, 5)
  const res = await upload(app, u, { filename: 'liar.docx', content: liar })
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage.rss())
  t.equal(res.statusCode, 422)
  t.equal(res.json().code, 'UNREADABLE_FILE')
  t.match(res.json().message, /larger or smaller than its zip directory says/)
  t.ok(peak - before < 100 * 1024 * 1024, `RSS grew by ${((peak - before) / 1048576).toFixed(1)} MB (< 100 MB)`)
  t.equal((await app.inject({ url: '/api/knowledge/documents', headers: u.auth })).json().count, 1,
    'no document for the refused file')
})

t.test('a PDF with more pages than allowed is refused before its pages are read', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const res = await upload(app, u, { filename: 'pages.pdf', content: manyPagePdf(20_000) })
  t.equal(res.statusCode, 422)
  t.match(res.json().message, /20000 pages, more than the 5000 allowed/)
  const ok = await upload(app, u, { filename: 'short.pdf', content: manyPagePdf(3, 'lantern festival') })
  t.equal(ok.statusCode, 201)
  t.same(await found(app, u, 'lantern festival'), [ok.json().document.id])
})

t.test('the pool takes turns between callers; one caller never holds every worker', async (t) => {
  const dir = tempDir(t)
  const file = (name: string) => {
    const source = path.join(dir, name)
    fs.writeFileSync(source, `<p>${name}</p>`)
    return source
  }
  const chunk = { chunkSize: 1000, chunkOverlap: 200 }

  // one worker: files start in turns, A, B, A, B, A, whatever order they were queued in
  const single = createExtractor({ ...DEFAULT_WORKER_LIMITS, concurrency: 1 })
  t.teardown(() => single.close())
  const starts: string[] = []
  single.events.on('start', (e: ExtractEvent) => starts.push(`${e.caller}:${path.basename(e.source, '.html')}`))
  await Promise.all([
    ...['a1', 'a2', 'a3'].map((n) => single.extract(file(`${n}.html`), path.join(dir, `${n}.txt`), 'html', chunk, 'A')),
    ...['b1', 'b2'].map((n) => single.extract(file(`${n}.html`), path.join(dir, `${n}.txt`), 'html', chunk, 'B'))
  ])
  t.same(starts, ['A:a1', 'B:b1', 'A:a2', 'B:b2', 'A:a3'])

  // two workers: A's second file waits for A's first, while B starts at once
  const pool = createExtractor({ ...DEFAULT_WORKER_LIMITS, concurrency: 2 })
  t.teardown(() => pool.close())
  const log: string[] = []
  for (const kind of ['start',
    'end']) pool.events.on(kind,
    (e: ExtractEvent) => log.push(`${kind} ${e.caller}:${path.basename(e.source, '.html')}`))
  await Promise.all([
    pool.extract(file('a4.html'), path.join(dir, 'a4.txt'), 'html', chunk, 'A'),
    pool.extract(file('a5.html'), path.join(dir, 'a5.txt'), 'html', chunk, 'A'),
    pool.extract(file('b3.html'), path.join(dir, 'b3.txt'), 'html', chunk, 'B')
  ])
  t.ok(log.indexOf('start B:b3') < log.indexOf('start A:a5'), 'B did not wait behind A')
  t.ok(log.indexOf('end A:a4') < log.indexOf('start A:a5'), 'A had one worker at a time')
})

t.test('many-page PDFs from one organization do not hold back another organization', async (t) => {
  const extractor = createExtractor({ ...DEFAULT_WORKER_LIMITS, concurrency: 2 })
  const app = await build(t, { config: { rateLimits: NO_LIMITS }, knowledge: { extractor } })
  const heavy = await signup(app)
  const light = await signup(app)
  const log: string[] = []
  const who = (e: ExtractEvent) => (e.caller === heavy.customerId ? 'heavy'
    : e.caller === light.customerId ? 'light' : '?')
  for (const kind of ['queued', 'start',
    'end']) extractor.events.on(kind, (e: ExtractEvent) => log.push(`${kind} ${who(e)}`))

  // a long PDF takes one worker; the organization's next PDF waits behind it (its length does not matter,
  // and the long one is extracted once only: it is most of this test's CPU)
  const firstStarted = once(extractor.events, 'start')
  const heavyUploads = [upload(app, heavy, { filename: 'empty0.pdf', content: manyPagePdf(2000) })]
  await firstStarted
  const secondQueued = once(extractor.events, 'queued')
  heavyUploads.push(upload(app, heavy, { filename: 'empty1.pdf', content: manyPagePdf(40) }))
  await secondQueued
  t.same(log, ['queued heavy', 'start heavy', 'queued heavy'], 'the second heavy PDF waits for the first')
  // the heavy organization holds one worker; the small upload of another organization starts at once
  const small = await upload(app, light, { filename: 'small.docx', content: docx })
  t.equal(small.statusCode, 201)
  const lightStart = log.indexOf('start light')
  t.ok(lightStart > 0, 'the small upload was extracted')
  t.equal(log.slice(0, lightStart).filter((l) => l === 'start heavy').length, 1,
    'only one heavy file had started before it')
  t.equal(log.slice(0, lightStart).filter((l) => l === 'end heavy').length, 0, 'and it had not finished')
  t.same(await found(app, light, 'Edelweiss grows'), [small.json().document.id], 'searchable at once')

  // plain text takes no worker at all
  const queuedBefore = log.filter((l) => l.startsWith('queued')).length
  const text = await upload(app, light, { filename: 'note.txt', content: 'a plain note about otters' })
  t.equal(text.statusCode, 201)
  t.equal(log.filter((l) => l.startsWith('queued')).length, queuedBefore, 'no extraction job for plain text')
  for (const res of await Promise.all(heavyUploads)) t.equal(res.statusCode, 201)
})

t.test('read your writes: up to 1 MB of text is searchable when the upload answers', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const stranger = await signup(app)
  const d = await upload(app, u, { filename: 'notes.docx', content: docx })
  t.equal(d.statusCode, 201)
  const id = d.json().document.id
  for (const mode of [undefined, 'substring', 'words', 'hybrid']) {
    const res = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: u.auth,
      payload: { query: 'Gentian flowers', ...(mode ? { mode } : {}) } })
    if (res.statusCode === 400 && mode) continue // a mode this build does not have yet
    t.same(res.json().results.map((r: { document: { id: string } }) => r.document.id), [id],
      `found at once (${mode ?? 'default'})`)
  }
  const status = (await app.inject({ url: `/api/knowledge/documents/${id}/status`, headers: u.auth })).json()
  t.match(status, { status: 'indexed', processingProgress: 100 })
  t.same(await found(app, stranger, 'Gentian flowers'), [], 'another organization still sees nothing')
  t.equal((app.sqlite.prepare(`SELECT COUNT(*) AS n FROM jobs
    WHERE type = 'knowledge.index'`).get() as { n: number }).n, 0, 'its claimed job is gone')

  // just under 1 MB, many passages: indexed before the answer
  const line = 'The quick brown fox jumps over the lazy dog near the riverbank.\n'
  const almost = line.repeat(Math.floor((1024 * 1024 - 100) / line.length)) + 'closing sentence about a violet heron'
  const big = await upload(app, u, { filename: 'almost.txt', content: almost })
  t.equal(big.statusCode, 201)
  t.ok(big.json().document.chunkCount > 1000)
  t.same(await found(app, u, 'violet heron'), [big.json().document.id])

  // over 1 MB: indexed in the background, with status and progress
  const over = await upload(app, u,
    { filename: 'over.txt', content: almost + '\n' + line.repeat(2000) + 'a final amber kestrel' })
  t.equal(over.statusCode, 201)
  const pending = (await app.inject({ url: `/api/knowledge/documents/${over.json().document.id}/status`,
    headers: u.auth })).json()
  t.not(pending.status, 'indexed', `over 1 MB: ${pending.status} at 201`)
  await app.jobs.idle()
  t.same(await found(app, u, 'amber kestrel'), [over.json().document.id])
})

t.test('file names: controls and bidirectional overrides stripped, 255 bytes at most, extension kept', async (t) => {
  t.equal(safeFileName('invoice\u202Efdp.exe'), 'invoicefdp.exe')
  t.equal(safeFileName('a\u0000b\u0007c\u009f\u200e\u2066.txt'), 'abc.txt')
  t.equal(safeFileName('..\\..\\windows\\x.md'), 'x.md')
  t.equal(safeFileName('\u0000\u202e'), 'upload')
  t.equal(safeFileName('bad \ud800 half.txt'), 'bad \ufffd half.txt')
  const long = 'é'.repeat(300) + '.pdf'
  const cut = safeFileName(long)
  t.ok(Buffer.byteLength(cut) <= 255, `${Buffer.byteLength(cut)} bytes`)
  t.ok(cut.endsWith('.pdf'))
  t.equal(cut, 'é'.repeat(125) + '.pdf', 'whole characters only')
  const emoji = safeFileName('😀'.repeat(100) + '.txt')
  t.equal(emoji, '😀'.repeat(62) + '.txt', 'no surrogate pair is split')

  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const res = await upload(app, u, { filename: `rep\u0001ort\u202e${'x'.repeat(300)}.md`, content: '# notes' })
  t.equal(res.statusCode, 201)
  const name = res.json().document.fileName as string
  t.ok(Buffer.byteLength(name) === 255 && name.startsWith('report') && name.endsWith('.md'), name)
  t.equal(res.json().document.fileType, 'md')
  const rtl = await upload(app, u, { filename: 'photo\u202Egnp.exe', content: 'MZ' })
  t.equal(rtl.statusCode, 415, 'the real extension is the one checked')
})

t.test('a large text is indexed a window at a time into exactly the chunker\'s passages, also ' +
  'after a resume', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const words = ['river', 'école', '日本語', 'naïve', '😀 emoji', 'the', 'lighthouse', 'keeper', 'x'.repeat(700)]
  let text = ''
  for (let i = 0; text.length < 5_500_000; i++) text += words[(i * 7919) % words.length] + ((i % 13) === 0 ? '\n' : ' ')
  const res = await upload(app, u, { filename: 'large.txt', content: text }, { chunkSize: '700', chunkOverlap: '150' })
  t.equal(res.statusCode, 201)
  const id = res.json().document.id
  await app.jobs.idle()
  const expected = chunkText(text, { chunkSize: 700, chunkOverlap: 150 })
  const stored = () => (app.sqlite.prepare('SELECT text FROM knowledge_passages WHERE document_id = ? ORDER ' +
    'BY chunk_index').all(id) as Array<{ text: string }>).map((r) => r.text)
  t.equal(res.json().document.chunkCount, expected.length)
  let got = stored()
  t.equal(got.length, expected.length, `${expected.length} passages`)
  t.ok(got.every((p, i) => p === expected[i]), 'each one the chunker\'s')

  // as if the process had died after 3,000 passages
  app.sqlite.prepare('DELETE FROM knowledge_passages WHERE document_id = ? AND chunk_index >= 3000').run(id)
  app.sqlite.prepare(`UPDATE knowledge_documents SET indexed_count = 3000, status = 'processing' WHERE id = ?`).run(id)
  app.jobs.enqueue('knowledge.index', { documentId: id })
  await app.jobs.idle()
  got = stored()
  t.equal(got.length, expected.length)
  t.ok(got.every((p, i) => p === expected[i]), 'resumed without a gap or a duplicate')
  t.equal((app.sqlite.prepare('SELECT status FROM ' +
    'knowledge_documents WHERE id = ?').get(id) as { status: string }).status, 'indexed')

  // the same text in UTF-16 (decoded, checked and counted a piece at a time, never whole)
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])
  const again = await upload(app, u, { filename: 'large16.txt', content: utf16 },
    { chunkSize: '700', chunkOverlap: '150' })
  t.equal(again.statusCode, 201)
  t.equal(again.json().document.textLength, text.length)
  t.equal(again.json().document.chunkCount, expected.length)
  await app.jobs.idle()
  const stored16 = (app.sqlite.prepare('SELECT text FROM knowledge_passages WHERE document_id = ? ORDER ' +
    'BY chunk_index').all(again.json().document.id) as Array<{ text: string }>).map((r) => r.text)
  t.ok(stored16.length === expected.length && stored16.every((p, i) => p === expected[i]),
    'UTF-16 gives the same passages')
  const storedText = (docId: string) => fs.readFileSync(path.join(app.config.dataDir, app.sqlite.prepare(
    'SELECT text_path FROM knowledge_documents WHERE id = ?').pluck().get(docId) as string), 'utf8')
  t.equal(storedText(id), text, 'UTF-8 is stored as uploaded')
  t.equal(storedText(again.json().document.id), text, 'UTF-16 is stored as UTF-8')
  // UTF-8 with a byte-order mark: the text is stored without it (a part of the text, still over the inline size)
  const part = text.slice(0, 1_500_000)
  const bom = await upload(app, u, { filename: 'large-bom.txt', content: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from(part)]) }, { chunkSize: '700', chunkOverlap: '150' })
  t.equal(bom.statusCode, 201)
  t.equal(bom.json().document.chunkCount, chunkText(part, { chunkSize: 700, chunkOverlap: 150 }).length)
  t.equal(storedText(bom.json().document.id), part, 'without the mark')
  await app.jobs.idle()
  const binary = await upload(app, u,
    { filename: 'binary.txt', content: text.slice(0, 2_000_000) + '\u0000' + text.slice(2_000_000, 3_000_000) })
  t.equal(binary.statusCode, 422, 'a NUL deep inside a large text file')
})
