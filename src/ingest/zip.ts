import yauzl from 'yauzl'
import { crc32 } from 'node:zlib'
import { UnreadableFileError } from './text.js'

/**
 * The sum of the uncompressed sizes a zip archive declares in its central directory, read without
 * decompressing anything: refuses an honest bomb at once. A lying archive is stopped by readZipBounded,
 * which counts the bytes actually inflated.
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
    offset += 46 + view.getUint16(offset + 28, true) + view.getUint16(offset + 30, true) + view.getUint16(offset + 32,
      true)
  }
  return { entries, uncompressed }
}

export interface ZipEntry {
  name: string
  data: Buffer
}

const MB = (n: number) => `${Math.round(n / 1048576)} MB`

/**
 * The entries `keep` selects, inflated by streaming with the bytes actually produced counted: an entry
 * that inflates past its declared size, or an archive past `maxBytes` in all, stops the inflater at
 * once and is refused. Entries not kept are never inflated.
 */
export async function readZipBounded(buf: Buffer, maxBytes: number,
  keep: (name: string) => boolean): Promise<ZipEntry[]> {
  const { uncompressed } = declaredZipSize(buf)
  if (uncompressed > maxBytes) throw new UnreadableFileError(`DOCX expands to more than ${MB(maxBytes)}: refused`)
  let zip: yauzl.ZipFile
  try {
    zip = await yauzl.fromBufferPromise(buf, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false })
  } catch (err) {
    throw new UnreadableFileError(`Not a valid DOCX file (${(err as Error).message})`)
  }
  const entries: ZipEntry[] = []
  let total = 0
  let failure: Error | undefined
  zip.on('error', (err: Error) => { failure = err })
  const nextEntry = () => new Promise<yauzl.Entry | undefined>((resolve, reject) => {
    const settle = (entry?: yauzl.Entry, err?: Error) => {
      zip.off('entry', onEntry).off('end', onEnd).off('error', onError)
      if (err) reject(err)
      else resolve(entry)
    }
    const onEntry = (entry: yauzl.Entry) => settle(entry)
    const onEnd = () => settle()
    const onError = (err: Error) => settle(undefined, err)
    zip.on('entry', onEntry).on('end', onEnd).on('error', onError)
    if (failure) settle(undefined, failure)
    else zip.readEntry()
  })
  try {
    for (;;) {
      const entry = await nextEntry()
      if (!entry) break
      if (entry.fileName.endsWith('/') || !keep(entry.fileName)) continue
      const stream = await zip.openReadStreamPromise(entry)
      const chunks: Buffer[] = []
      let size = 0
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          size += chunk.length
          total += chunk.length
          if (size > entry.uncompressedSize || total > maxBytes) {
            throw new UnreadableFileError(total > maxBytes
              ? `DOCX expands to more than ${MB(maxBytes)}: refused`
              : `DOCX part ${entry.fileName} is larger than its zip directory says: refused`)
          }
          chunks.push(chunk)
        }
      } finally {
        stream.destroy()
      }
      entries.push({ name: entry.fileName, data: Buffer.concat(chunks, size) })
    }
  } catch (err) {
    if (err instanceof UnreadableFileError) throw err
    if (/too (many|few) bytes in the stream/.test((err as Error).message)) {
      throw new UnreadableFileError('A DOCX part is larger or smaller than its zip directory says: refused')
    }
    throw new UnreadableFileError(`Not a valid DOCX file (${(err as Error).message})`)
  } finally {
    zip.close()
  }
  return entries
}

/** A zip of the given entries, stored without compression: reading it back inflates nothing. */
export function storedZip(entries: ZipEntry[]): Buffer {
  const parts: Buffer[] = []
  const central: Buffer[] = []
  let offset = 0
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8')
    const crc = crc32(e.data)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(0x800, 6)
    local.writeUInt32LE(crc, 14); local.writeUInt32LE(e.data.length, 18); local.writeUInt32LE(e.data.length, 22)
    local.writeUInt16LE(name.length, 26)
    parts.push(local, name, e.data)
    const dir = Buffer.alloc(46)
    dir.writeUInt32LE(0x02014b50, 0); dir.writeUInt16LE(20, 4); dir.writeUInt16LE(20, 6); dir.writeUInt16LE(0x800, 8)
    dir.writeUInt32LE(crc, 16); dir.writeUInt32LE(e.data.length, 20); dir.writeUInt32LE(e.data.length, 24)
    dir.writeUInt16LE(name.length, 28); dir.writeUInt32LE(offset, 42)
    central.push(dir, name)
    offset += 30 + name.length + e.data.length
  }
  const dir = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(entries.length, 8); end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(dir.length, 12); end.writeUInt32LE(offset, 16)
  return Buffer.concat([...parts, dir, end])
}
