import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { createExtractor, DEFAULT_WORKER_LIMITS, type Extractor, type WorkerLimits } from '../../src/ingest/run.js'
import { decodeText } from '../../src/ingest/text.js'
import { fileTypeOf, extractorFor, SUPPORTED_FORMATS } from '../../src/ingest/formats.js'
import { processTable, tempDir, FIXTURES } from '../helper.js'
import { docxBomb } from '../zip-helper.js'

const fixtures = path.join(FIXTURES, 'knowledge')
const chunk = { chunkSize: 1000, chunkOverlap: 200 }
const UNREADABLE = { name: 'UnreadableFileError' }

/**
 * One pool per set of limits, as the service keeps one for every upload: a new pool starts a new worker thread,
 * which loads pdf.js and mammoth (about a second of CPU each). A worker that failed is never reused by its pool.
 */
const pools = new Map<WorkerLimits, Extractor>()
function pool(limits: WorkerLimits): Extractor {
  let extractor = pools.get(limits)
  if (!extractor) {
    const made = extractor = createExtractor(limits)
    pools.set(limits, made)
    t.teardown(() => made.close())
  }
  return extractor
}

async function extractBytes(t: Parameters<typeof tempDir>[0], name: string, bytes: Buffer,
  limits = DEFAULT_WORKER_LIMITS) {
  const dir = tempDir(t)
  const source = path.join(dir, name)
  fs.writeFileSync(source, bytes)
  const target = path.join(dir, 'out.txt')
  const kind = extractorFor(fileTypeOf(name))!
  const result = await pool(limits).extract(source, target, kind, chunk)
  return { ...result, text: fs.readFileSync(target, 'utf8') }
}

t.test('PDF made by LibreOffice', async (t) => {
  const r = await extractBytes(t, 'report.pdf', fs.readFileSync(path.join(fixtures, 'report.pdf')))
  t.match(r.text, /lighthouse keeper recorded seventeen storms/)
  t.match(r.text, /Fresnel lens/)
  t.match(r.text, /élèves de l'école/)
  t.equal(r.textLength, r.text.length)
  t.equal(r.chunkCount, 1)
})

t.test('DOCX made by LibreOffice', async (t) => {
  const r = await extractBytes(t, 'notes.docx', fs.readFileSync(path.join(fixtures, 'notes.docx')))
  t.match(r.text, /Edelweiss grows on limestone ledges/)
  t.match(r.text, /Gentian flowers open only in bright sunshine/)
})

t.test('HTML: readable text, scripts and styles dropped', async (t) => {
  const html = '<html><head><style>body{color:red}</style><script>var secret = "tracking code"</script></head><body><h1>Title</h1><p>Readable <b>bold</b> text with a <a href="https://x.example">link</a>.</p><noscript>enable js</noscript></body></html>'
  const r = await extractBytes(t, 'page.html', Buffer.from(html))
  t.match(r.text, /Readable bold text with a link\./)
  t.notMatch(r.text, /tracking code|color:red|enable js|x\.example/)
})

t.test('text encodings', async (t) => {
  const s = 'Grüße, école, 日本語 😀'
  t.equal(decodeText(Buffer.from(s)), s, 'UTF-8')
  t.equal(decodeText(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(s)])), s, 'UTF-8 with BOM')
  t.equal(decodeText(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, 'utf16le')])), s, 'UTF-16LE with BOM')
  const be = Buffer.from(s, 'utf16le').swap16()
  t.equal(decodeText(Buffer.concat([Buffer.from([0xfe, 0xff]), be])), s, 'UTF-16BE with BOM')
  const plain = 'plain ascii text in utf-16 without any byte order mark'
  t.equal(decodeText(Buffer.from(plain, 'utf16le')), plain, 'UTF-16LE without BOM')
  t.equal(decodeText(Buffer.from(plain, 'utf16le').swap16()), plain, 'UTF-16BE without BOM')
  t.throws(() => decodeText(Buffer.from([0xc3, 0x28, 0x41, 0x42])), UNREADABLE, 'invalid UTF-8')
  t.throws(() => decodeText(Buffer.from('abc\u0000def')), UNREADABLE, 'NUL bytes')
  t.equal(decodeText(Buffer.alloc(0)), '')
})

t.test('hostile and damaged files fail cleanly', async (t) => {
  const pdf = fs.readFileSync(path.join(fixtures, 'report.pdf'))
  await t.rejects(extractBytes(t, 'cut.pdf', pdf.subarray(0, Math.floor(pdf.length / 2))), UNREADABLE, 'truncated PDF')
  await t.rejects(extractBytes(t, 'junk.pdf', Buffer.from('this is not a pdf at all')), UNREADABLE)
  await t.rejects(extractBytes(t, 'junk.docx', Buffer.from('PK but not really a zip')), UNREADABLE)
  await t.rejects(extractBytes(t, 'bin.txt', Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0])), UNREADABLE)

  // a zip bomb that declares its size: refused before anything is decompressed
  const bomb = docxBomb(300 * 1024 * 1024)
  t.ok(bomb.length < 1024 * 1024, `bomb is small on disk (${bomb.length} bytes)`)
  await t.rejects(extractBytes(t, 'bomb.docx', bomb), { message: /expands to more than 256 MB/ })

  // one that lies about its size: the worker's memory limit stops it, the process lives on
  const liar = docxBomb(160 * 1024 * 1024, 1000)
  await t.rejects(extractBytes(t, 'liar.docx', liar, { ...DEFAULT_WORKER_LIMITS, maxHeapMb: 64 }), UNREADABLE)
  t.pass('still running')
})

t.test('the zlib streams of a PDF are bounded by the bytes they inflate to', async (t) => {
  const { deflateSync } = await import('node:zlib')
  const packed = deflateSync(Buffer.alloc(4 * 1024 * 1024))
  const pdf =
    Buffer.concat([Buffer.from(`%PDF-1.4\n1 0 obj\n<< /Length ${packed.length} /Filter /FlateDecode >>\nstream\n`),
      packed, Buffer.from('\nendstream\nendobj\n')])
  await t.rejects(extractBytes(t, 'flate.pdf', pdf, { ...DEFAULT_WORKER_LIMITS, maxUncompressedBytes: 1024 * 1024 }),
    { message: /PDF streams expand to more than 1 MB/ })
  await t.rejects(extractBytes(t, 'pages.pdf', fs.readFileSync(path.join(fixtures, 'report.pdf')),
    { ...DEFAULT_WORKER_LIMITS, pdfPageTimeoutMs: 0 }),
  { message: /A PDF page took longer than 0 ms/ }, 'the time per page is bounded')
})

t.test('time limit', async (t) => {
  // a big text with a tiny time budget
  await t.rejects(extractBytes(t, 'big.txt', Buffer.alloc(20 * 1024 * 1024, 'lorem ipsum '),
    { ...DEFAULT_WORKER_LIMITS, timeoutMs: 1 }),
  { message: /took longer than/ })
})

t.test('formats', async (t) => {
  t.equal(fileTypeOf('Report.PDF'), 'pdf')
  t.equal(fileTypeOf('archive.tar.gz'), 'gz')
  t.equal(fileTypeOf('noext'), '')
  t.equal(fileTypeOf('.bashrc'), '')
  t.equal(fileTypeOf('../../etc/passwd.txt'), 'txt')
  for (const ext of ['.pdf', '.docx', '.txt', '.md', '.markdown', '.json', '.yaml', '.yml', '.xml', '.html', '.htm',
    '.csv',
    '.js', '.mjs', '.cjs', '.ts', '.tsx', '.jsx', '.py', '.rb', '.go', '.rs', '.java', '.kt', '.c', '.h', '.cpp',
    '.hpp', '.cs',
    '.php', '.swift', '.sh', '.sql', '.css']) t.ok(SUPPORTED_FORMATS.includes(ext), ext)
  t.equal(extractorFor('exe'), undefined)
  t.equal(extractorFor('constructor'), undefined)
})

t.test('the extraction processes are started by a launcher, not by the service; a launcher that died is started again',
  { skip: process.platform !== 'linux' && 'Linux only' }, async (t) => {
    const extractor = createExtractor(DEFAULT_WORKER_LIMITS)
    t.teardown(() => extractor.close())
    const dir = tempDir(t)
    const page = path.join(dir, 'page.html')
    fs.writeFileSync(page, '<h1>Harbour</h1><p>The brass lantern.</p>')
    const launchers = () => processTable().filter((p) => p.parent === process.pid && p.cmdline.includes('launcher'))
    const before = launchers().map((p) => p.pid)
    await extractor.extract(page, path.join(dir, 'one.txt'), 'html', chunk)
    const [launcher] = launchers().filter((p) => !before.includes(p.pid))
    t.ok(launcher, 'this extractor started one launcher')
    const extracting = processTable().filter((p) => p.cmdline.includes('--disable-wasm-trap-handler'))
    t.ok(extracting.some((p) => p.parent === launcher.pid), 'its extraction process is the launcher\'s child')
    t.notOk(extracting.some((p) => p.parent === process.pid), 'none is the service\'s own')

    process.kill(launcher.pid, 'SIGKILL')
    // reaped (then its exit has been seen): its processes count as gone, and the next file starts a new launcher
    while (fs.existsSync(`/proc/${launcher.pid}`)) await new Promise((r) => setTimeout(r, 10))
    await extractor.extract(page, path.join(dir, 'two.txt'), 'html', chunk)
    t.match(fs.readFileSync(path.join(dir, 'two.txt'), 'utf8'), /brass lantern/)
  })
