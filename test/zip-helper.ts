import { deflateRawSync, crc32, constants as zlibConstants } from 'node:zlib'

interface Entry { name: string; data: Buffer; declaredSize?: number; packed?: { bytes: Buffer; crc: number } }

/** A minimal zip writer (deflate), able to lie about sizes: for hostile-archive tests. */
export function makeZip(entries: Entry[]): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const e of entries) {
    const name = Buffer.from(e.name)
    const packed = e.packed?.bytes ?? deflateRawSync(e.data, { level: 9 })
    const size = e.declaredSize ?? e.data.length
    const crc = e.packed?.crc ?? crc32(e.data)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(0, 6); local.writeUInt16LE(8, 8)
    local.writeUInt32LE(crc, 14); local.writeUInt32LE(packed.length, 18); local.writeUInt32LE(size, 22)
    local.writeUInt16LE(name.length, 26); local.writeUInt16LE(0, 28)
    locals.push(local, name, packed)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20,
      6); central.writeUInt16LE(8, 10)
    central.writeUInt32LE(crc, 16); central.writeUInt32LE(packed.length, 20); central.writeUInt32LE(size, 24)
    central.writeUInt16LE(name.length, 28); central.writeUInt32LE(offset, 42)
    centrals.push(central, name)
    offset += 30 + name.length + packed.length
  }
  const dir = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(entries.length, 8); end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(dir.length, 12); end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, dir, end])
}

const CONTENT_TYPES = '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
const RELS = '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'

const BOMB_HEAD = Buffer.from('<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>')
const BOMB_TAIL = Buffer.from('</w:t></w:r></w:p></w:body></w:document>')
const BLOCK = Buffer.alloc(1 << 20, 'A')
let packedBlock: Buffer | undefined

/**
 * `head`, then `size - head - tail` bytes of 'A', then `tail`, as one raw deflate stream, built without deflating
 * (or holding) the whole: each part is deflated by itself and ends at a full flush (byte-aligned, no back
 * references across it), so the one deflated MiB of 'A' can stand for every whole MiB of the middle. Deflating a
 * 512 MB bomb at level 9 took seconds of CPU in each test that made one.
 */
function packedBomb(size: number): { bytes: Buffer; crc: number } {
  const middle = size - BOMB_HEAD.length - BOMB_TAIL.length
  if (middle < 0) throw new Error(`a bomb of ${size} bytes cannot hold its head and tail`)
  const first = Buffer.concat([BOMB_HEAD, BLOCK.subarray(0, middle % BLOCK.length)])
  const flushed = { level: 9, finishFlush: zlibConstants.Z_FULL_FLUSH }
  packedBlock ??= deflateRawSync(BLOCK, flushed)
  const parts: Buffer[] = [deflateRawSync(first, flushed)]
  let crc = crc32(first)
  for (let i = Math.floor(middle / BLOCK.length); i > 0; i--) {
    parts.push(packedBlock)
    crc = crc32(BLOCK, crc)
  }
  parts.push(deflateRawSync(BOMB_TAIL, { level: 9 }))
  return { bytes: Buffer.concat(parts), crc: crc32(BOMB_TAIL, crc) }
}

function bombZip(size: number, declaredSize?: number): Buffer {
  return makeZip([
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(RELS) },
    { name: 'word/document.xml', data: Buffer.alloc(0), declaredSize: declaredSize ?? size, packed: packedBomb(size) }
  ])
}

/** A DOCX whose document.xml is `size` bytes of padding around a paragraph: compresses about 1000:1. */
export function docxBomb(size: number, declaredSize?: number): Buffer {
  return bombZip(size, declaredSize)
}

/**
 * Like docxBomb: the test process never holds the `size` bytes it inflates to (a lying `declaredSize` makes it
 * an archive that lies about its sizes).
 */
export async function streamedDocxBomb(size: number, declaredSize: number): Promise<Buffer> {
  return bombZip(size, declaredSize)
}
