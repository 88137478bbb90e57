/** A file that cannot be turned into text: its message is shown to the uploader. */
export class UnreadableFileError extends Error {
  override name = 'UnreadableFileError'
}

const utf8 = new TextDecoder('utf-8', { fatal: true })
const utf16le = new TextDecoder('utf-16le', { fatal: true })

function swapBytes(buf: Uint8Array): Uint8Array {
  const out = new Uint8Array(buf.length - (buf.length % 2))
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

/**
 * Text of a plain-text file: UTF-8 (with or without BOM) or UTF-16 (BOM, or recognisable without one).
 * Anything else, or text with NUL characters, is refused as not a text file.
 */
export function decodeText(buf: Uint8Array): string {
  let text: string
  try {
    if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) text = utf8.decode(buf.subarray(3))
    else if (buf[0] === 0xff && buf[1] === 0xfe) text = utf16le.decode(buf.subarray(2))
    else if (buf[0] === 0xfe && buf[1] === 0xff) text = utf16le.decode(swapBytes(buf.subarray(2)))
    else {
      const guess = guessUtf16(buf)
      if (guess === 'le') text = utf16le.decode(buf)
      else if (guess === 'be') text = utf16le.decode(swapBytes(buf))
      else text = utf8.decode(buf)
    }
  } catch {
    throw new UnreadableFileError('The file is not valid UTF-8 or UTF-16 text')
  }
  if (text.includes('\u0000')) throw new UnreadableFileError('The file contains binary data, not text')
  return text
}
