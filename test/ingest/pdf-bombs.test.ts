import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import { checkPdfStreams } from '../../src/ingest/pdf-streams.js'
import { createExtractor, DEFAULT_WORKER_LIMITS, type WorkerLimits } from '../../src/ingest/run.js'
import { tempDir, FIXTURES } from '../helper.js'
import { ascii85, asciiHex, brotli, lzwBomb, pdfWithStream, runLength, zlibWithWindow } from './hostile-pdf.js'

const MB = 1024 * 1024
const report = fs.readFileSync(path.join(FIXTURES, 'knowledge', 'report.pdf'))
const REFUSED = { name: 'UnreadableFileError', message: /PDF streams expand to more than 1 MB: refused/ }

t.test('every filter chain pdf.js decodes is measured with the budget', async (t) => {
  t.equal(await checkPdfStreams(report, 256 * MB), 18931, 'a real PDF: its streams, exactly')

  const flate = zlibWithWindow(2 * MB, 15)
  t.equal(flate.length < 8192, true, `a zlib header with window field 15 (${flate.length} bytes)`)
  await t.rejects(checkPdfStreams(pdfWithStream('/Filter /FlateDecode', flate), MB), REFUSED,
    'FlateDecode whatever the window field says')
  await t.rejects(checkPdfStreams(pdfWithStream('/Filter [/ASCIIHexDecode /FlateDecode]', asciiHex(flate)), MB),
    REFUSED, 'a chain: hex, then flate')
  await t.rejects(checkPdfStreams(pdfWithStream('/Filter [/A85 /Fl]', ascii85(zlibWithWindow(2 * MB))), MB),
    REFUSED, 'a chain of abbreviations: ASCII85, then flate')
  await t.rejects(checkPdfStreams(pdfWithStream('/Filter [/FlateDecode /FlateDecode]',
    deflateSync(zlibWithWindow(2 * MB))), MB), REFUSED, 'flate twice')
  await t.rejects(checkPdfStreams(pdfWithStream('/F /LZWDecode /Filter /Crypt', lzwBomb(2000)), MB), REFUSED,
    'LZW, named by the abbreviated key pdf.js reads first')
  await t.rejects(checkPdfStreams(pdfWithStream('/Filter /RunLengthDecode', runLength(10_000)), MB), REFUSED,
    'RunLength')
  await t.rejects(checkPdfStreams(pdfWithStream('/Filter /BrotliDecode', brotli(2 * MB)), MB), REFUSED, 'Brotli')
  await t.rejects(checkPdfStreams(pdfWithStream('/Filter 6 0 R /DecodeParms [null]', flate, ['[/Fl#61teDecode]']),
    MB), REFUSED, 'filters named by reference, with an escaped name')
  await t.rejects(checkPdfStreams(pdfWithStream('/Filter /LZWDecode /DecodeParms << /EarlyChange 7 0 R >>',
    lzwBomb(10)), MB), { message: /cannot be measured/ }, 'a parameter that is nowhere in the file')
  t.equal(await checkPdfStreams(pdfWithStream('/Filter /FlateDecode', zlibWithWindow(MB / 2, 9)), MB), MB / 2,
    'within the budget: measured, not refused')
  t.equal(await checkPdfStreams(pdfWithStream('/Filter [/FlateDecode /DCTDecode]', zlibWithWindow(MB / 2)), MB),
    MB / 2, 'an image filter is measured up to the image')
})

t.test('a stream whose dictionary cannot be read is refused', async (t) => {
  const pdf = pdfWithStream('/Filter /LZWDecode', lzwBomb(10))
  // the dictionary's end kept, its object header made unreadable
  const broken = Buffer.from(pdf.toString('latin1').replace('4 0 obj\n<<', '4 0 obj\n<< (').replace(
    '/Filter /LZWDecode >>', '/Filter /LZWDecode >>'), 'latin1')
  await t.rejects(checkPdfStreams(broken, MB), { message: /its dictionary cannot be read/ })
})

/** the pool's process for a file: RSS of this process (the service) watched while it runs */
async function extractWatched(limits: WorkerLimits, pdf: Buffer, t: Parameters<typeof tempDir>[0]) {
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'in.pdf'), pdf)
  const pool = createExtractor(limits)
  t.teardown(() => pool.close())
  const before = process.memoryUsage.rss()
  let peak = before
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()) }, 5)
  const result = await pool.extract(path.join(dir, 'in.pdf'), path.join(dir, 'out.txt'), 'pdf',
    { chunkSize: 1000, chunkOverlap: 100 }).then(() => undefined, (err: Error) => err)
  clearInterval(sampler)
  return { result, grew: peak - before, pool, dir }
}

t.test('an LZW bomb past the measurement is stopped by the process\'s memory limit; the service lives on',
  async (t) => {
    // about 1.2 GB of page content from 520 KB: the measurement is switched off to reach the backstop
    const bomb = pdfWithStream('/Filter /LZWDecode', lzwBomb(350_000))
    t.ok(bomb.length < 600 * 1024, `${bomb.length} bytes`)
    const { result, grew, pool, dir } = await extractWatched({ ...DEFAULT_WORKER_LIMITS,
      maxUncompressedBytes: Number.MAX_SAFE_INTEGER, maxMemoryMb: 256 }, bomb, t)
    t.match(result, { name: 'UnreadableFileError',
      message: 'Text extraction needed more than the 256 MB of memory allowed: refused' })
    t.ok(grew < 100 * MB, `the service's RSS grew by ${(grew / MB).toFixed(1)} MB`)
    // a new process takes the next file
    fs.writeFileSync(path.join(dir, 'report.pdf'), report)
    const ok = await pool.extract(path.join(dir, 'report.pdf'), path.join(dir, 'report.txt'), 'pdf',
      { chunkSize: 1000, chunkOverlap: 100 })
    t.ok(ok.textLength > 0, 'the next file is read')
  })

t.test('the service ties extracted text to the upload limit', async (t) => {
  const { MAX_FILE_BYTES } = await import('../../plugins/knowledge/receive.js')
  t.equal(DEFAULT_WORKER_LIMITS.maxTextBytes, MAX_FILE_BYTES)
})
