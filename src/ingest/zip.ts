import { UnreadableFileError } from './text.js'

/**
 * The sum of the uncompressed sizes a zip archive declares in its central directory, read without
 * decompressing anything: a first line of defence against zip bombs (the extraction worker's memory
 * limit is the second, for archives that lie about their sizes).
 */
export function declaredZipSize(buf: Uint8Array): { entries: number; uncompressed: number } {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  // the end-of-central-directory record is in the last 22 + 65535 bytes
  let eocd = -1
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (view.getUint32(i, true) === 0x06054b50) { eocd = i; break }
  }
  if (eocd < 0) throw new UnreadableFileError('Not a valid DOCX file (no zip directory found)')
  const entries = view.getUint16(eocd + 10, true)
  let offset = view.getUint32(eocd + 16, true)
  let uncompressed = 0
  for (let i = 0; i < entries; i++) {
    if (offset + 46 > buf.length || view.getUint32(offset, true) !== 0x02014b50) {
      throw new UnreadableFileError('Not a valid DOCX file (damaged zip directory)')
    }
    const size = view.getUint32(offset + 24, true)
    // 0xffffffff: the real size is in a zip64 extra field; count it as too large
    uncompressed += size === 0xffffffff ? Number.MAX_SAFE_INTEGER / 2 : size
    offset += 46 + view.getUint16(offset + 28, true) + view.getUint16(offset + 30, true) + view.getUint16(offset + 32, true)
  }
  return { entries, uncompressed }
}
