import { deflateRawSync, brotliCompressSync } from 'node:zlib'

/**
 * A one-page PDF whose page content is one stream with the given dictionary entries (filters) and raw data,
 * with a correct cross-reference table; `extra` objects are added after it (numbered from 6).
 */
export function pdfWithStream(dictEntries: string, data: Buffer, extra: string[] = []): Buffer {
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> ' +
      '/Contents 4 0 R >>'),
    Buffer.concat([Buffer.from(`<< /Length ${data.length} ${dictEntries} >>\nstream\n`), data,
      Buffer.from('\nendstream')]),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
    ...extra.map((e) => Buffer.from(e))
  ]
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')]
  let size = parts[0].length
  const offsets: number[] = []
  objects.forEach((o, i) => {
    offsets.push(size)
    const part = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), o, Buffer.from('\nendobj\n')])
    parts.push(part)
    size += part.length
  })
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const off of offsets) tail += `${String(off).padStart(10, '0')} 00000 n \n`
  tail += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${size}\n%%EOF\n`
  return Buffer.concat([...parts, Buffer.from(tail)])
}

/**
 * `bytes` of zeros, deflated, behind a zlib header whose window field is `cinfo` (pdf.js ignores it; zlib
 * refuses more than 7)
 */
export function zlibWithWindow(bytes: number, cinfo = 7): Buffer {
  const cmf = (cinfo << 4) | 8
  let flg = 0
  while (((cmf << 8) | flg) % 31 !== 0) flg++
  return Buffer.concat([Buffer.from([cmf, flg]), deflateRawSync(Buffer.alloc(bytes), { level: 9 }), Buffer.alloc(4)])
}

export const asciiHex = (data: Buffer) => Buffer.from(data.toString('hex') + '>')

export function ascii85(data: Buffer): Buffer {
  let out = ''
  for (let i = 0; i < data.length; i += 4) {
    const chunk = Buffer.alloc(4)
    data.copy(chunk, 0, i, i + 4)
    const n = chunk.readUInt32BE(0)
    const take = Math.min(4, data.length - i)
    if (n === 0 && take === 4) { out += 'z'; continue }
    let v = n
    const digits: string[] = []
    for (let k = 0; k < 5; k++) { digits.unshift(String.fromCharCode(0x21 + (v % 85))); v = Math.floor(v / 85) }
    out += digits.slice(0, take + 1).join('')
  }
  return Buffer.from(out + '~>')
}

/** RunLength data: `runs` runs of 128 equal bytes (two bytes each) */
export const runLength = (runs: number) => Buffer.concat([Buffer.alloc(runs * 2, Buffer.from([129, 0x41])),
  Buffer.from([128])])

export const brotli = (bytes: number) => brotliCompressSync(Buffer.alloc(bytes))

/**
 * LZW codes (9 to 12 bits, EarlyChange 1) that pdf.js decodes to a quadratic amount of output: each code names
 * the next table entry (one byte longer than the last), and once the table is full the longest entry again and
 * again, about 3,800 bytes for every 12 bits. Every byte is `byte` (a space: pdf.js reads the whole page content).
 */
export function lzwBomb(codes: number, byte = 0x20): Buffer {
  const out: number[] = []
  let acc = 0
  let bits = 0
  let codeLength = 9
  let nextCode = 258
  const put = (code: number) => {
    acc = (acc << codeLength) | code
    bits += codeLength
    while (bits >= 8) { out.push((acc >>> (bits - 8)) & 0xff); bits -= 8 }
    acc &= (1 << bits) - 1
  }
  const grow = () => {
    nextCode++
    if (((nextCode + 1) & nextCode) === 0) codeLength = Math.min(Math.log2(nextCode + 1) + 1, 12)
  }
  put(byte)
  for (let i = 0; i < codes; i++) {
    put(Math.min(nextCode, 4095))
    grow()
  }
  put(257)
  if (bits > 0) out.push((acc << (8 - bits)) & 0xff)
  return Buffer.from(out)
}
