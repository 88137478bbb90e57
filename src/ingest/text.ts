/** A file that cannot be turned into text: its message is shown to the uploader. */
export class UnreadableFileError extends Error {
  override name = 'UnreadableFileError'
}

const utf8 = new TextDecoder('utf-8', { fatal: true })
const utf16le = new TextDecoder('utf-16le', { fatal: true })

function swapBytes(buf: Uint8Array): Uint8Array {
  // an odd byte at the end is kept (the streaming decoder waits for its pair; at the end it is refused)
  const out = new Uint8Array(buf.length)
  if (buf.length % 2) out[buf.length - 1] = buf[buf.length - 1]
  for (let i = 0; i + 1 < buf.length; i += 2) { out[i] = buf[i + 1]; out[i + 1] = buf[i] }
  return out
}

/** UTF-16 without a BOM shows as NUL bytes in every other position (for mostly-Latin text). */
function guessUtf16(buf: Uint8Array): 'le' | 'be' | undefined {
  const sample = Math.min(buf.length, 4096) & ~1
  if (sample < 4) return undefined
  let evenNul = 0
  let oddNul = 0
  for (let i = 0; i < sample; i += 2) {
    if (buf[i] === 0) evenNul++
    if (buf[i + 1] === 0) oddNul++
  }
  const pairs = sample / 2
  if (oddNul > pairs * 0.3 && evenNul < pairs * 0.05) return 'le'
  if (evenNul > pairs * 0.3 && oddNul < pairs * 0.05) return 'be'
  return undefined
}

/** How a plain-text file is encoded: the decoder, whether bytes come swapped (UTF-16BE), and the BOM to skip. */
export function textEncodingOf(buf: Uint8Array): { encoding: 'utf-8' | 'utf-16le'; swap: boolean; skip: number } {
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) return { encoding: 'utf-8', swap: false, skip: 3 }
  if (buf[0] === 0xff && buf[1] === 0xfe) return { encoding: 'utf-16le', swap: false, skip: 2 }
  if (buf[0] === 0xfe && buf[1] === 0xff) return { encoding: 'utf-16le', swap: true, skip: 2 }
  const guess = guessUtf16(buf)
  if (guess) return { encoding: 'utf-16le', swap: guess === 'be', skip: 0 }
  return { encoding: 'utf-8', swap: false, skip: 0 }
}

const NOT_TEXT = 'The file is not valid UTF-8 or UTF-16 text'
const BINARY = 'The file contains binary data, not text'

/**
 * Text of a plain-text file: UTF-8 (with or without BOM) or UTF-16 (BOM, or recognisable without one).
 * Anything else, or text with NUL characters, is refused as not a text file.
 */
export function decodeText(buf: Uint8Array): string {
  const { encoding, swap, skip } = textEncodingOf(buf)
  let text: string
  try {
    const body = buf.subarray(skip)
    text = (encoding === 'utf-8' ? utf8 : utf16le).decode(swap ? swapBytes(body) : body)
  } catch {
    throw new UnreadableFileError(NOT_TEXT)
  }
  if (text.includes('\u0000')) throw new UnreadableFileError(BINARY)
  return text
}

/** bytes decoded between two turns of the event loop */
const SLICE_BYTES = 1 << 20

/** decodeText on the main thread for files of any size: decodes a slice at a time, yielding between. */
export async function decodeTextSliced(buf: Uint8Array, yieldToLoop: () => Promise<unknown>): Promise<string> {
  return decodeSliced(buf, textEncodingOf(buf), yieldToLoop)
}

/** UTF-8 known to be valid (the text files the knowledge base writes), decoded a slice at a time. */
export function decodeUtf8Sliced(buf: Uint8Array, yieldToLoop: () => Promise<unknown>): Promise<string> {
  return decodeSliced(buf, { encoding: 'utf-8', swap: false, skip: 0 }, yieldToLoop)
}

async function decodeSliced(buf: Uint8Array, { encoding, swap, skip }: ReturnType<typeof textEncodingOf>,
  yieldToLoop: () => Promise<unknown>): Promise<string> {
  const decoder = new TextDecoder(encoding, { fatal: true, ignoreBOM: true })
  const parts: string[] = []
  try {
    for (let at = skip; at < buf.length; at += SLICE_BYTES) {
      const slice = buf.subarray(at, Math.min(at + SLICE_BYTES, buf.length))
      const part = decoder.decode(swap ? swapBytes(slice) : slice, { stream: at + SLICE_BYTES < buf.length })
      if (part.includes('\u0000')) throw new UnreadableFileError(BINARY)
      parts.push(part)
      if (at + SLICE_BYTES < buf.length) await yieldToLoop()
    }
    parts.push(decoder.decode())
  } catch (err) {
    throw err instanceof UnreadableFileError ? err : new UnreadableFileError(NOT_TEXT)
  }
  return parts.join('')
}

/** Writes `text` as UTF-8, encoding a slice at a time (never splitting a surrogate pair) and yielding between. */
export async function writeUtf8Sliced(file: string, text: string, yieldToLoop: () => Promise<unknown>): Promise<void> {
  const { open } = await import('node:fs/promises')
  const handle = await open(file, 'w')
  try {
    for (let at = 0; at < text.length;) {
      let end = Math.min(at + SLICE_BYTES, text.length)
      const c = text.charCodeAt(end - 1)
      if (end < text.length && c >= 0xd800 && c <= 0xdbff) end--
      await handle.write(Buffer.from(text.slice(at, end), 'utf8'))
      at = end
      await yieldToLoop()
    }
  } finally {
    await handle.close()
  }
}

/**
 * The text of a file as decoded pieces, read `chunkBytes` (even) at a time, so that no caller holds a
 * whole large text. `upload`: encoded and checked as decodeText does (UTF-8 or UTF-16, no NUL);
 * `utf8`: a text file the knowledge base wrote itself.
 */
export async function* textFilePieces(file: string, chunkBytes: number,
  mode: 'upload' | 'utf8'): AsyncGenerator<string> {
  const { open } = await import('node:fs/promises')
  const handle = await open(file)
  try {
    const buf = Buffer.alloc(chunkBytes)
    let decoder: InstanceType<typeof TextDecoder> | undefined
    let swap = false
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, chunkBytes, null)
      let bytes: Uint8Array = buf.subarray(0, bytesRead)
      if (!decoder) {
        const found = mode === 'utf8' ? { encoding: 'utf-8' as const, swap: false, skip: 0 } : textEncodingOf(bytes)
        decoder = new TextDecoder(found.encoding, { fatal: mode === 'upload', ignoreBOM: true })
        swap = found.swap
        bytes = bytes.subarray(found.skip)
      }
      let piece: string
      try {
        piece = bytesRead === 0 ? decoder.decode() : decoder.decode(swap ? swapBytes(bytes) : bytes, { stream: true })
      } catch {
        throw new UnreadableFileError(NOT_TEXT)
      }
      if (mode === 'upload' && piece.includes('\u0000')) throw new UnreadableFileError(BINARY)
      if (piece.length > 0) yield piece
      if (bytesRead === 0) return
    }
  } finally {
    await handle.close()
  }
}
