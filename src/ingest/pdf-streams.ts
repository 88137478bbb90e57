import { createBrotliDecompress, createInflateRaw, type BrotliDecompress, type InflateRaw } from 'node:zlib'
import { UnreadableFileError } from './text.js'

/**
 * What a PDF's streams decode to, measured before pdf.js sees the file: every stream's filter chain (as
 * pdf.js would apply it: FlateDecode whatever its zlib window field says, LZWDecode, ASCIIHexDecode,
 * ASCII85Decode, RunLengthDecode, BrotliDecode, in any order and nesting) is decoded with the bytes left
 * in the document's budget, and the decoder stops once the budget is spent. pdf.js holds decoded streams in
 * buffers outside any JavaScript heap limit: this is the first bound, the extraction process's address
 * space limit the second.
 *
 * A stream whose dictionary or filters cannot be read is refused rather than guessed at. Image filters
 * (DCT, JPX, CCITT, JBIG2) are not decoded when text is extracted: the chain is measured up to them.
 */

const MB = (n: number) => `${Math.round(n / 1048576)} MB`

class OverBudget extends Error {}

// ---- a small reader of PDF objects (enough for stream dictionaries) ----

type Value =
  | { t: 'num'; v: number; int: boolean }
  | { t: 'name'; v: string }
  | { t: 'str' }
  | { t: 'arr'; v: Value[] }
  | { t: 'dict'; v: Map<string, Value> }
  | { t: 'ref'; num: number; gen: number }
  | { t: 'kw'; v: string }

const isWhite = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00
const isDelim = (c: number) => c === 0x28 || c === 0x29 || c === 0x3c || c === 0x3e || c === 0x5b || c === 0x5d ||
  c === 0x7b || c === 0x7d || c === 0x2f || c === 0x25
const isRegular = (c: number) => c !== undefined && !isWhite(c) && !isDelim(c)

class Unparsable extends Error {}
const MAX_DEPTH = 64

function skipSpace(buf: Buffer, at: number): number {
  for (;;) {
    while (at < buf.length && isWhite(buf[at])) at++
    if (buf[at] !== 0x25) return at
    while (at < buf.length && buf[at] !== 0x0a && buf[at] !== 0x0d) at++
  }
}

/** one value at `at` (after white space), as pdf.js's parser reads it; throws Unparsable */
function readValue(buf: Buffer, start: number, depth = 0): { value: Value; end: number } {
  if (depth > MAX_DEPTH) throw new Unparsable()
  let at = skipSpace(buf, start)
  const c = buf[at]
  if (c === undefined) throw new Unparsable()
  if (c === 0x2f) { // name, with #xx escapes
    let name = ''
    at++
    while (at < buf.length && isRegular(buf[at])) {
      const h = buf[at] === 0x23 ? buf.toString('latin1', at + 1, at + 3) : ''
      if (/^[0-9a-fA-F]{2}$/.test(h)) { name += String.fromCharCode(parseInt(h, 16)); at += 3 } else {
        name += String.fromCharCode(buf[at]); at++
      }
    }
    return { value: { t: 'name', v: name }, end: at }
  }
  if (c === 0x28) { // literal string: balanced parentheses, backslash escapes
    let level = 1
    at++
    while (at < buf.length && level > 0) {
      if (buf[at] === 0x5c) at += 2
      else { if (buf[at] === 0x28) level++; else if (buf[at] === 0x29) level--; at++ }
    }
    if (level > 0) throw new Unparsable()
    return { value: { t: 'str' }, end: at }
  }
  if (c === 0x3c && buf[at + 1] === 0x3c) { // dictionary
    at += 2
    const map = new Map<string, Value>()
    for (;;) {
      at = skipSpace(buf, at)
      if (buf[at] === 0x3e && buf[at + 1] === 0x3e) return { value: { t: 'dict', v: map }, end: at + 2 }
      const key = readValue(buf, at, depth + 1)
      if (key.value.t !== 'name') throw new Unparsable()
      const val = readOperand(buf, key.end, depth + 1)
      // the last of a repeated key counts, as in pdf.js
      map.set(key.value.v, val.value)
      at = val.end
    }
  }
  if (c === 0x3c) { // hex string
    const close = buf.indexOf(0x3e, at)
    if (close < 0) throw new Unparsable()
    return { value: { t: 'str' }, end: close + 1 }
  }
  if (c === 0x5b) { // array
    at++
    const items: Value[] = []
    for (;;) {
      at = skipSpace(buf, at)
      if (buf[at] === 0x5d) return { value: { t: 'arr', v: items }, end: at + 1 }
      const item = readOperand(buf, at, depth + 1)
      items.push(item.value)
      at = item.end
    }
  }
  if (!isRegular(c)) throw new Unparsable()
  let end = at
  while (end < buf.length && isRegular(buf[end])) end++
  const word = buf.toString('latin1', at, end)
  if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) {
    return { value: { t: 'num', v: Number(word), int: /^[+-]?\d+$/.test(word) }, end }
  }
  // a keyword other than a constant ends the object (obj, endobj, stream, R out of place): not a value
  if (word === 'true' || word === 'false' || word === 'null') return { value: { t: 'kw', v: word }, end }
  throw new Unparsable()
}

/** a value, where `n g R` stands for a reference */
function readOperand(buf: Buffer, at: number, depth: number): { value: Value; end: number } {
  const first = readValue(buf, at, depth)
  if (first.value.t !== 'num' || !first.value.int) return first
  const m = /^\s+(\d+)\s+R(?![^\s<>[\]{}()/%])/.exec(buf.toString('latin1', first.end, first.end + 24))
  if (!m) return first
  return { value: { t: 'ref', num: first.value.v, gen: Number(m[1]) }, end: first.end + m[0].length }
}

// ---- decoders, each as pdf.js decodes: the output counted, kept only when another filter follows ----

interface Sink { total: number; limit: number; keep: Buffer[] | undefined }

function emit(sink: Sink, chunk: Buffer) {
  sink.total += chunk.length
  if (sink.total > sink.limit) throw new OverBudget()
  sink.keep?.push(chunk)
}

function emitFill(sink: Sink, byte: number, n: number) {
  if (sink.keep) emit(sink, Buffer.alloc(n, byte))
  else { sink.total += n; if (sink.total > sink.limit) throw new OverBudget() }
}

async function zlibInto(stream: InflateRaw | BrotliDecompress, input: Buffer, sink: Sink): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let failed: Error | undefined
    stream.on('data', (chunk: Buffer) => {
      if (failed) return
      try { emit(sink, chunk) } catch (err) { failed = err as Error; stream.destroy(); reject(err) }
    })
    // a damaged stream: pdf.js gets what came before the damage, as counted
    stream.on('error', () => resolve())
    stream.on('end', () => resolve())
    stream.on('close', () => resolve())
    stream.end(input)
  })
}

async function flate(input: Buffer, sink: Sink) {
  // pdf.js checks the method, the header checksum and FDICT, but not the window size (CINFO): neither do we
  if (input.length < 2 || (input[0] & 0x0f) !== 8 || ((input[0] << 8) | input[1]) % 31 !== 0 || input[1] & 0x20) return
  await zlibInto(createInflateRaw(), input.subarray(2), sink)
}

async function brotli(input: Buffer, sink: Sink) {
  await zlibInto(createBrotliDecompress(), input, sink)
}

/** LZW exactly as pdf.js's LZWStream decodes it, sequences that run past the table included */
function lzw(input: Buffer, sink: Sink, earlyChange: number) {
  const SIZE = 4096
  const values = new Uint8Array(SIZE)
  const lengths = new Uint16Array(SIZE)
  const prevCodes = new Uint16Array(SIZE)
  const current = new Uint8Array(SIZE)
  /** each entry's first byte */
  const firsts = new Uint8Array(SIZE)
  for (let i = 0; i < 256; i++) { values[i] = i; lengths[i] = 1; firsts[i] = i }
  let nextCode = 258
  let codeLength = 9
  let prevCode = 0
  let currentLength = 0
  let cached = 0
  let bits = 0
  let at = 0
  const out = sink.keep ? Buffer.alloc(64 * 1024) : undefined
  let outAt = 0
  const flush = () => { if (out && outAt > 0) { sink.keep!.push(Buffer.from(out.subarray(0, outAt))); outAt = 0 } }
  for (;;) {
    while (bits < codeLength) {
      if (at >= input.length) { flush(); return }
      cached = ((cached << 8) | input[at++]) & 0xffffff
      bits += 8
    }
    bits -= codeLength
    const code = (cached >>> bits) & ((1 << codeLength) - 1)
    const hasPrev = currentLength > 0
    if (code < 256) {
      current[0] = code
      currentLength = 1
    } else if (code >= 258) {
      if (code < nextCode) {
        currentLength = lengths[code]
        // counted only, the sequence is not spelled out: its first byte is enough to go on
        if (out) for (let j = currentLength - 1, q = code; j >= 0; j--) { current[j] = values[q]; q = prevCodes[q] }
        else current[0] = firsts[code]
      } else {
        current[currentLength++] = current[0]
      }
    } else if (code === 256) {
      codeLength = 9
      nextCode = 258
      currentLength = 0
      continue
    } else {
      flush()
      return
    }
    if (hasPrev) {
      prevCodes[nextCode] = prevCode
      lengths[nextCode] = lengths[prevCode] + 1
      values[nextCode] = current[0]
      firsts[nextCode] = firsts[prevCode]
      nextCode++
      codeLength = ((nextCode + earlyChange) & (nextCode + earlyChange - 1)) ? codeLength
        : Math.min(Math.log(nextCode + earlyChange) / 0.6931471805599453 + 1, 12) | 0
    }
    prevCode = code
    sink.total += currentLength
    if (sink.total > sink.limit) throw new OverBudget()
    if (out) {
      for (let j = 0; j < currentLength; j++) {
        // past the table pdf.js writes what its typed array holds there: nothing, read as 0
        out[outAt++] = j < SIZE ? current[j] : 0
        if (outAt === out.length) flush()
      }
    }
  }
}

function asciiHex(input: Buffer, sink: Sink) {
  const out: number[] = []
  let first = -1
  for (const ch of input) {
    let digit: number
    if (ch >= 0x30 && ch <= 0x39) digit = ch & 0x0f
    else if ((ch >= 0x41 && ch <= 0x46) || (ch >= 0x61 && ch <= 0x66)) digit = (ch & 0x0f) + 9
    else if (ch === 0x3e) break
    else continue
    if (first < 0) first = digit
    else { out.push((first << 4) | digit); first = -1 }
    if (out.length >= 65536) { emit(sink, Buffer.from(out)); out.length = 0 }
  }
  if (first >= 0) out.push(first << 4)
  emit(sink, Buffer.from(out))
}

function ascii85(input: Buffer, sink: Sink) {
  const out: number[] = []
  let at = 0
  const next = () => {
    while (at < input.length && isWhite(input[at])) at++
    return at < input.length ? input[at++] : -1
  }
  for (;;) {
    const c = next()
    if (c === -1 || c === 0x7e) break
    if (c === 0x7a) { out.push(0, 0, 0, 0) } else {
      const group = [c]
      let i = 1
      for (; i < 5; i++) {
        const d = next()
        if (d === -1 || d === 0x7e) break
        group.push(d)
      }
      while (group.length < 5) group.push(0x21 + 84)
      let t = 0
      for (const g of group) t = t * 85 + (g - 0x21)
      const bytes = [(t >>> 24) & 0xff, (t >>> 16) & 0xff, (t >>> 8) & 0xff, t & 0xff]
      out.push(...bytes.slice(0, i - 1))
      if (i < 5) break
    }
    if (out.length >= 65536) { emit(sink, Buffer.from(out)); out.length = 0 }
  }
  emit(sink, Buffer.from(out))
}

function runLength(input: Buffer, sink: Sink) {
  for (let at = 0; at + 1 < input.length && input[at] !== 128;) {
    const n = input[at]
    if (n < 128) {
      emit(sink, input.subarray(at + 1, Math.min(at + 2 + n, input.length)))
      at += n + 2
    } else {
      emitFill(sink, input[at + 1], 257 - n)
      at += 2
    }
  }
}

const IMAGE_FILTERS = new Set(['DCT', 'DCTDecode', 'JPX', 'JPXDecode', 'CCF', 'CCITTFaxDecode', 'JBIG2Decode'])

interface Filter { name: string; earlyChange: number }

/** Decodes `input` through `chain`; returns the bytes the last filter produced. */
async function decodeChain(input: Buffer, chain: Filter[], limit: number): Promise<number> {
  let data = input
  let produced = input.length
  for (let i = 0; i < chain.length; i++) {
    const { name, earlyChange } = chain[i]
    // text extraction does not decode images: what reaches the image filter is what counts
    if (IMAGE_FILTERS.has(name)) return produced
    const last = i === chain.length - 1
    const sink: Sink = { total: 0, limit, keep: last ? undefined : [] }
    switch (name) {
      case 'Fl': case 'FlateDecode': await flate(data, sink); break
      case 'LZW': case 'LZWDecode': lzw(data, sink, earlyChange); break
      case 'AHx': case 'ASCIIHexDecode': asciiHex(data, sink); break
      case 'A85': case 'ASCII85Decode': ascii85(data, sink); break
      case 'RL': case 'RunLengthDecode': runLength(data, sink); break
      case 'BrotliDecode': await brotli(data, sink); break
      // pdf.js hands the bytes on unchanged for a filter it does not know
      default: continue
    }
    produced = sink.total
    if (!last) data = Buffer.concat(sink.keep!, sink.total)
  }
  return produced
}

// ---- finding streams and their dictionaries ----

const STREAM = Buffer.from('stream')
const ENDSTREAM = Buffer.from('endstream')
/** how far before `stream` an object's header may be, and how many headers there are tried */
const DICT_REACH = 64 * 1024
const DICT_TRIES = 256

interface PdfIndex {
  buf: Buffer
  /** ends of `n g obj` headers, in file order */
  headers: number[]
  /** the last header of each object (incremental updates append) */
  objects: Map<string, number>
}

function indexPdf(buf: Buffer): PdfIndex {
  const text = buf.toString('latin1')
  const headers: number[] = []
  const objects = new Map<string, number>()
  const re = /(\d+)[\0\t\n\f\r ]+(\d+)[\0\t\n\f\r ]+obj(?![^\0\t\n\f\r <>[\]{}()/%])/g
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const end = m.index + m[0].length
    headers.push(end)
    objects.set(`${Number(m[1])} ${Number(m[2])}`, end)
  }
  return { buf, headers, objects }
}

const unmeasurable = (why: string) => new UnreadableFileError(`A PDF stream cannot be measured (${why}): refused`)

/** a direct value, or what a reference points to (found by its header in the file) */
function resolve(index: PdfIndex, value: Value | undefined, depth = 0): Value | undefined {
  if (value?.t !== 'ref') return value
  const at = index.objects.get(`${value.num} ${value.gen}`)
  if (at === undefined || depth > 8) throw unmeasurable('an indirect value that is not in the file as plain text')
  try {
    return resolve(index, readOperand(index.buf, at, 0).value, depth + 1)
  } catch (err) {
    if (err instanceof Unparsable) throw unmeasurable('an indirect value that cannot be read')
    throw err
  }
}

function filtersOf(index: PdfIndex, dict: Map<string, Value>): Filter[] {
  // pdf.js reads the abbreviations first
  const filter = resolve(index, dict.get('F') ?? dict.get('Filter'))
  const params = resolve(index, dict.get('DP') ?? dict.get('DecodeParms'))
  const earlyChangeOf = (p: Value | undefined): number => {
    const d = resolve(index, p)
    if (d?.t !== 'dict' || !d.v.has('EarlyChange')) return 1
    const e = resolve(index, d.v.get('EarlyChange'))
    if (e?.t !== 'num' || !e.int) throw unmeasurable('an LZW EarlyChange that is not a whole number')
    return e.v
  }
  if (filter === undefined || filter.t === 'kw') return []
  if (filter.t === 'name') return [{ name: filter.v, earlyChange: earlyChangeOf(params) }]
  if (filter.t !== 'arr') throw unmeasurable('a filter that is not a name or a list of names')
  return filter.v.map((f, i) => {
    const name = resolve(index, f)
    if (name?.t !== 'name') throw unmeasurable('a filter that is not a name')
    return { name: name.v, earlyChange: earlyChangeOf(params?.t === 'arr' ? params.v[i] : undefined) }
  })
}

/** the dictionaries that end just before the `stream` keyword at `at`, read from every header within reach */
function dictionariesBefore(index: PdfIndex, at: number): Array<Map<string, Value>> {
  const found: Array<Map<string, Value>> = []
  const { headers, buf } = index
  // the last header before `at`, by binary search
  let lo = 0
  let hi = headers.length
  while (lo < hi) { const mid = (lo + hi) >> 1; if (headers[mid] < at) lo = mid + 1; else hi = mid }
  for (let i = lo - 1; i >= 0 && i >= lo - DICT_TRIES && headers[i] >= at - DICT_REACH; i--) {
    try {
      const { value, end } = readValue(buf, headers[i])
      if (value.t === 'dict' && skipSpace(buf, end) === at) found.push(value.v)
    } catch (err) {
      if (!(err instanceof Unparsable)) throw err
    }
  }
  return found
}

/** where pdf.js takes a stream's data to end: at /Length when `endstream` follows, else not known */
function dataEnd(index: PdfIndex, dict: Map<string, Value>, start: number): number {
  const { buf } = index
  let length: Value | undefined
  try { length = resolve(index, dict.get('Length')) } catch { length = undefined }
  if (length?.t === 'num' && length.int && length.v >= 0 && start + length.v <= buf.length) {
    const after = skipSpace(buf, start + length.v)
    if (buf.subarray(after, after + ENDSTREAM.length).equals(ENDSTREAM)) return start + length.v
  }
  // a wrong or unknown length: every decoder stops at its own end of data, the rest of the file at most
  return buf.length
}

/**
 * The bytes a PDF's streams decode to in all, at most `maxBytes`: throws UnreadableFileError once more would
 * be needed, or for a stream that cannot be measured.
 */
export async function checkPdfStreams(buf: Buffer, maxBytes: number): Promise<number> {
  const index = indexPdf(buf)
  let total = 0
  for (let at = buf.indexOf(STREAM); at >= 0; at = buf.indexOf(STREAM, at + STREAM.length)) {
    // the keyword itself (not `endstream`), after a dictionary's `>>`
    if (at > 0 && isRegular(buf[at - 1])) continue
    if (isRegular(buf[at + STREAM.length])) continue
    let before = at - 1
    while (before >= 0 && isWhite(buf[before])) before--
    if (buf[before] !== 0x3e || buf[before - 1] !== 0x3e) continue
    const dicts = dictionariesBefore(index, at)
    if (dicts.length === 0) throw unmeasurable('its dictionary cannot be read')
    // pdf.js starts the data after the end of the keyword's line
    let start = at + STREAM.length
    while (start < buf.length && buf[start] !== 0x0a && buf[start] !== 0x0d) start++
    if (buf[start] === 0x0d) start++
    if (buf[start] === 0x0a) start++
    // where the file can be read more than one way, the largest reading counts
    let most = 0
    for (const dict of dicts) {
      const chain = filtersOf(index, dict)
      if (chain.length === 0) continue
      const data = buf.subarray(start, dataEnd(index, dict, start))
      try {
        most = Math.max(most, await decodeChain(data, chain, maxBytes - total))
      } catch (err) {
        if (err instanceof OverBudget) {
          throw new UnreadableFileError(`PDF streams expand to more than ${MB(maxBytes)}: refused`)
        }
        throw err
      }
    }
    total += most
  }
  return total
}
