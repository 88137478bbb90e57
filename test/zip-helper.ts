import { deflateRawSync, createDeflateRaw, crc32 } from 'node:zlib'

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

/** A DOCX whose document.xml is `size` bytes of padding around a paragraph: compresses about 1000:1. */
export function docxBomb(size: number, declaredSize?: number): Buffer {
  const head = '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>'
  const tail = '</w:t></w:r></w:p></w:body></w:document>'
  const body = Buffer.alloc(size, 'A')
  body.write(head, 0)
  body.write(tail, size - tail.length)
  return makeZip([
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(RELS) },
    { name: 'word/document.xml', data: body, declaredSize }
  ])
}

/**
 * Like docxBomb, but its document.xml is deflated as a stream: the test process never holds the
 * `size` bytes it inflates to (a lying `declaredSize` makes it the archive of issue 13 item 2).
 */
export async function streamedDocxBomb(size: number, declaredSize: number): Promise<Buffer> {
  const head = Buffer.from('<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>')
  const tail = Buffer.from('</w:t></w:r></w:p></w:body></w:document>')
  const block = Buffer.alloc(1 << 20, 'A')
  const deflate = createDeflateRaw({ level: 9 })
  const out: Buffer[] = []
  deflate.on('data', (c: Buffer) => out.push(c))
  const done = new Promise((resolve) => deflate.on('end', resolve))
  let crc = 0
  const write = async (b: Buffer) => {
    crc = crc32(b, crc)
    if (!deflate.write(b)) await new Promise((r) => deflate.once('drain', r))
  }
  await write(head)
  for (let left = size - head.length - tail.length; left > 0; left -= block.length) await write(left >= block.length
    ? block : block.subarray(0, left))
  await write(tail)
  deflate.end()
  await done
  return makeZip([
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(RELS) },
    { name: 'word/document.xml', data: Buffer.alloc(0), declaredSize, packed: { bytes: Buffer.concat(out), crc } }
  ])
}
