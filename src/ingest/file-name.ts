/** the most bytes (UTF-8) a stored file name may have, as most file systems allow */
export const MAX_FILE_NAME_BYTES = 255

// C0 and C1 controls (NUL included), and the marks and overrides that reorder text (U+061C, U+200E,
// U+200F, U+202A–U+202E, U+2066–U+2069): "invoice\u202Efdp.exe" must not read as "invoiceexe.pdf"
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/** The longest prefix of `s` that fits in `bytes` of UTF-8 without splitting a character. */
function utf8Prefix(s: string, bytes: number): string {
  let used = 0
  let end = 0
  for (const ch of s) {
    const cp = ch.codePointAt(0)!
    const size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4
    if (used + size > bytes) break
    used += size
    end += ch.length
  }
  return s.slice(0, end)
}

/**
 * The name an uploaded file is stored and shown under: its base name (no directories, either slash),
 * without control characters or bidirectional overrides, trimmed, and at most 255 bytes of UTF-8 with
 * the extension kept (the stem is shortened, never the extension that was checked). Lone surrogates
 * become U+FFFD so that the name is valid UTF-8.
 */
export function safeFileName(raw: string, fallback = 'upload'): string {
  const base = (raw.split(/[\\/]/).pop() ?? '').toWellFormed().replace(UNSAFE, '').trim()
  const name = base === '' || base === '.' || base === '..' ? fallback : base
  if (Buffer.byteLength(name) <= MAX_FILE_NAME_BYTES) return name
  const dot = name.lastIndexOf('.')
  const ext = dot > 0 ? name.slice(dot) : ''
  if (Buffer.byteLength(ext) >= MAX_FILE_NAME_BYTES / 2) return utf8Prefix(name, MAX_FILE_NAME_BYTES)
  return utf8Prefix(name.slice(0, name.length - ext.length), MAX_FILE_NAME_BYTES - Buffer.byteLength(ext)) + ext
}
