import type { ExtractorKind } from './formats.js'
import { decodeText, UnreadableFileError } from './text.js'
import { checkPdfStreams } from './pdf-streams.js'
import { readZipBounded, storedZip } from './zip.js'
import { checkHtmlDepth } from './html-depth.js'
import { htmlToStructuredText } from './html.js'
import { documentText, pageLines, type PageLine, type TextRun } from './pdf-layout.js'

export interface ExtractLimits {
  /** the most an archive (DOCX) or the compressed streams of a PDF may inflate to, in bytes, counted as inflated */
  maxUncompressedBytes: number
  /** the most text one file may give, in bytes of UTF-8: as much as a plain-text upload may have */
  maxTextBytes: number
  /** pages a PDF may have */
  maxPdfPages: number
  /** the longest one PDF page may take */
  pdfPageTimeoutMs: number
}

async function pdfText(data: Buffer, limits: ExtractLimits): Promise<string> {
  await checkPdfStreams(data, limits.maxUncompressedBytes)
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs')
  let doc
  try {
    doc = await pdfjs.getDocument({
      // pdf.js refuses Node Buffers: hand it a plain view of the same bytes
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      stopAtErrors: true,
      verbosity: 0
    }).promise
  } catch (err) {
    throw new UnreadableFileError(`Not a readable PDF: ${(err as Error).message}`)
  }
  if (doc.numPages > limits.maxPdfPages) {
    await doc.destroy()
    throw new UnreadableFileError(`PDF has ${doc.numPages} pages, more than the ${limits.maxPdfPages} allowed: refused`)
  }
  const pages: PageLine[][] = []
  let textBytes = 0
  const slow = () => new UnreadableFileError(`A PDF page took longer than ${limits.pdfPageTimeoutMs} ms: refused`)
  try {
    for (let n = 1; n <= doc.numPages; n++) {
      const started = performance.now()
      let timer: NodeJS.Timeout | undefined
      const { page, content } = await Promise.race([
        doc.getPage(n).then(async (page) => ({ page, content: await page.getTextContent() })),
        new Promise<never>((_, reject) => { timer = setTimeout(() => reject(slow()), limits.pdfPageTimeoutMs) })
      ]).finally(() => clearTimeout(timer))
      // a page that blocked the thread past its budget (the timer could not fire meanwhile)
      if (performance.now() - started > limits.pdfPageTimeoutMs) throw slow()
      const lines = pageLines(textRuns(content.items))
      pages.push(lines)
      page.cleanup()
      // counted as it grows: a PDF of repeated text could otherwise fill the memory first
      for (const line of lines) textBytes += Buffer.byteLength(line.text) + 2
      if (textBytes > limits.maxTextBytes) throw tooMuchText(limits)
    }
  } catch (err) {
    if (err instanceof UnreadableFileError) throw err
    throw new UnreadableFileError(`Damaged PDF: ${(err as Error).message}`)
  } finally {
    await doc.destroy()
  }
  return documentText(pages)
}

/** pdf.js's text items as runs placed on the page: the transform's translation and its vertical scale. */
function* textRuns(items: readonly object[]): Generator<TextRun> {
  for (const item of items) {
    if (!('str' in item)) continue
    const { str, transform, width } = item as { str: string; transform: number[]; width: number }
    yield { text: str, x: transform[4], y: transform[5], width, size: Math.hypot(transform[2], transform[3]) }
  }
}

const tooMuchText = (limits: ExtractLimits) => new UnreadableFileError(
  `The file's text is larger than the ${MB(limits.maxTextBytes)} an upload may have: refused`)
const MB = (n: number) => `${Math.round(n / 1048576)} MB`

/** the parts that carry a document's text; images, fonts and embedded files are never inflated */
const textPart = (name: string) => /\.(xml|rels)$/i.test(name)

/** Word styles with no HTML counterpart in mammoth's own map: titles, and code set in a preformatted style. */
const DOCX_STYLES = [
  "p[style-name='Title'] => h1:fresh",
  "p[style-name='title'] => h1:fresh",
  "p[style-name='Subtitle'] => p:fresh",
  ...['Preformatted Text', 'HTML Preformatted', 'Source Code', 'Code', 'Macro Text']
    .map((name) => `p[style-name='${name}'] => pre:separator('\\n')`)
]

async function docxText(data: Buffer, limits: ExtractLimits): Promise<string> {
  // mammoth (JSZip) would trust the archive's sizes: it is handed a rebuilt archive of parts already
  // inflated within the limit, stored uncompressed
  const rebuilt = storedZip(await readZipBounded(data, limits.maxUncompressedBytes, textPart))
  const mammoth = (await import('mammoth')).default
  let html: string
  try {
    // as HTML, so that headings, lists and tables keep their shape in the text; images are never read
    const result = await mammoth.convertToHtml({ buffer: rebuilt }, {
      styleMap: DOCX_STYLES,
      convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' }))
    })
    html = result.value
  } catch (err) {
    throw new UnreadableFileError(`Not a readable DOCX: ${(err as Error).message}`)
  }
  return markupText(html)
}

function htmlText(data: Uint8Array): Promise<string> {
  return markupText(decodeText(data))
}

async function markupText(html: string): Promise<string> {
  checkHtmlDepth(html)
  try {
    return await htmlToStructuredText(html)
  } catch (err) {
    // the depth check is the bound; a stack still exhausted is the same refusal
    if (err instanceof RangeError) throw new UnreadableFileError(`HTML nested too deeply: refused (${err.message})`)
    throw err
  }
}

/** The text of one file. Runs inside the extraction worker; throws UnreadableFileError for bad files. */
export async function extractText(kind: ExtractorKind, data: Buffer, limits: ExtractLimits): Promise<string> {
  const text = await textOf(kind, data, limits)
  // text is what is stored and indexed: however small the file, no more of it than an upload may be
  if (text.length > limits.maxTextBytes || Buffer.byteLength(text) > limits.maxTextBytes) throw tooMuchText(limits)
  return text
}

function textOf(kind: ExtractorKind, data: Buffer, limits: ExtractLimits): Promise<string> {
  switch (kind) {
    case 'pdf': return pdfText(data, limits)
    case 'docx': return docxText(data, limits)
    case 'html': return htmlText(data)
    case 'text': return Promise.resolve(decodeText(data))
  }
}
