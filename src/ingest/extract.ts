import type { ExtractorKind } from './formats.js'
import { decodeText, UnreadableFileError } from './text.js'
import { declaredZipSize } from './zip.js'

export interface ExtractLimits {
  /** the most a DOCX may declare uncompressed, in bytes */
  maxUncompressedBytes: number
}

async function pdfText(data: Uint8Array): Promise<string> {
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
  const pages: string[] = []
  try {
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n)
      const content = await page.getTextContent()
      let text = ''
      for (const item of content.items) {
        if (!('str' in item)) continue
        text += item.str
        if (item.hasEOL) text += '\n'
      }
      pages.push(text.trim())
      page.cleanup()
    }
  } catch (err) {
    throw new UnreadableFileError(`Damaged PDF: ${(err as Error).message}`)
  } finally {
    await doc.destroy()
  }
  return pages.join('\n\n')
}

async function docxText(data: Uint8Array, limits: ExtractLimits): Promise<string> {
  const { uncompressed } = declaredZipSize(data)
  if (uncompressed > limits.maxUncompressedBytes) {
    throw new UnreadableFileError(`DOCX expands to more than ${Math.round(limits.maxUncompressedBytes / 1048576)} MB: refused`)
  }
  const mammoth = (await import('mammoth')).default
  try {
    const result = await mammoth.extractRawText({ buffer: Buffer.from(data.buffer, data.byteOffset, data.byteLength) })
    return result.value.replace(/\n{3,}/g, '\n\n').trim()
  } catch (err) {
    throw new UnreadableFileError(`Not a readable DOCX: ${(err as Error).message}`)
  }
}

async function htmlText(data: Uint8Array): Promise<string> {
  const { convert } = await import('html-to-text')
  return convert(decodeText(data), {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'noscript', format: 'skip' },
      { selector: 'template', format: 'skip' }
    ]
  }).trim()
}

/** The text of one file. Runs inside the extraction worker; throws UnreadableFileError for bad files. */
export async function extractText(kind: ExtractorKind, data: Uint8Array, limits: ExtractLimits): Promise<string> {
  switch (kind) {
    case 'pdf': return pdfText(data)
    case 'docx': return docxText(data, limits)
    case 'html': return htmlText(data)
    case 'text': return decodeText(data)
  }
}
