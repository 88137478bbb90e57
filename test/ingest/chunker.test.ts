import t from 'tap'
import fc from 'fast-check'
import { chunkText, passageRanges, countPassages, chunkOptionsProblem } from '../../src/ingest/chunker.js'

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff
const splits = (text: string, i: number) => i > 0 && i < text.length && isHigh(text.charCodeAt(i - 1)) &&
  isLow(text.charCodeAt(i))

// text with words, runs of whitespace, long unbroken runs and astral characters (surrogate pairs)
const piece = fc.oneof(
  fc.constantFrom(' ', '\n', '\t', '  ', ' \n\n', '\n# h', '\n\n## '),
  fc.stringMatching(/^[a-zA-Zéàü]{1,12}$/),
  fc.constantFrom('😀', '𝔘', '🎉🎉', 'a😀b', 'x'.repeat(300)),
  fc.string({ unit: 'grapheme', maxLength: 8 })
)
const textArb = fc.array(piece, { maxLength: 400 }).map((parts) => parts.join(''))
const optionsArb = fc.integer({ min: 50, max: 400 }).chain((chunkSize) =>
  fc.record({ chunkSize: fc.constant(chunkSize), chunkOverlap: fc.integer({ min: 0, max: chunkSize - 1 }) }))

t.test('invariants hold for any text and options', async (t) => {
  fc.assert(fc.property(textArb, optionsArb, (text, options) => {
    const ranges = [...passageRanges(text, options)]
    const chunks = ranges.map((r) => text.slice(r.start, r.end))
    if (text.length === 0) return ranges.length === 0
    // cover the whole text: first starts at 0, last ends at the end
    if (ranges[0].start !== 0 || ranges[ranges.length - 1].end !== text.length) return false
    for (let i = 0; i < ranges.length; i++) {
      const r = ranges[i]
      if (chunks[i].length > options.chunkSize || chunks[i].length === 0) return false
      if (splits(text, r.start) || splits(text, r.end)) return false
      if (i === 0) continue
      const prev = ranges[i - 1]
      if (r.start <= prev.start) return false
      // no gap
      if (r.start > prev.end) return false
      const overlap = prev.end - r.start
      const exact = overlap === options.chunkOverlap
      const grown = overlap === options.chunkOverlap + 1 && splits(text, prev.end - options.chunkOverlap)
      const nearlyWhole = options.chunkOverlap >= prev.end - prev.start - 1 // the documented edge
      if (!exact && !grown && !nearlyWhole) return false
      // a boundary moved back only within the last fifth of the window
      const full = Math.min(prev.start + options.chunkSize, text.length)
      if (prev.end < full - Math.floor(options.chunkSize / 5) - 1) return false
    }
    // passage i+1 begins with the last `overlap` characters of passage i
    for (let i = 1; i < ranges.length; i++) {
      const shared = ranges[i - 1].end - ranges[i].start
      if (chunks[i].slice(0, shared) !== chunks[i - 1].slice(chunks[i - 1].length - shared)) return false
    }
    return countPassages(text, options) === ranges.length
  }), { numRuns: 2000 })
  t.pass('2000 random cases')
})

t.test('concrete cases', async (t) => {
  const words = Array.from({ length: 500 }, (_, i) => `word${i}`).join(' ')
  const chunks = chunkText(words, { chunkSize: 1000, chunkOverlap: 200 })
  t.ok(chunks.length > 3)
  t.ok(chunks.every((c) => c.length <= 1000))
  for (let i = 1; i < chunks.length; i++) t.equal(chunks[i].slice(0, 200), chunks[i - 1].slice(-200), `overlap ${i}`)
  t.ok(chunks.slice(0, -1).every((c) => /\s$/.test(c)), 'boundaries moved back to whitespace')

  const noSpaces = 'x'.repeat(2500)
  t.same(chunkText(noSpaces, { chunkSize: 1000, chunkOverlap: 0 }).map((c) => c.length), [1000, 1000, 500])
  t.same(chunkText('short', { chunkSize: 1000, chunkOverlap: 200 }), ['short'])
  t.same(chunkText('', { chunkSize: 1000, chunkOverlap: 200 }), [])

  // a surrogate pair right at the window edge is not split
  const emoji = 'a'.repeat(99) + '😀' + 'b'.repeat(100)
  const parts = chunkText(emoji, { chunkSize: 100, chunkOverlap: 10 })
  t.equal(parts[0], 'a'.repeat(99), 'ends before the pair')
  t.ok(parts.every((p) => !isLow(p.charCodeAt(0)) && !isHigh(p.charCodeAt(p.length - 1))))
  // and where the overlap start would split one, the overlap grows by one
  const text2 = 'c'.repeat(95) + '😀' + 'd'.repeat(200)
  const r2 = [...passageRanges(text2, { chunkSize: 100, chunkOverlap: 4 })]
  t.equal(r2[0].end, 100)
  t.equal(r2[1].start, 95, 'starts at the pair: overlap 5 instead of 4')
})

t.test('option limits', async (t) => {
  t.equal(chunkOptionsProblem({ chunkSize: 1000, chunkOverlap: 200 }), undefined)
  t.equal(chunkOptionsProblem({ chunkSize: 50, chunkOverlap: 0 }), undefined)
  t.equal(chunkOptionsProblem({ chunkSize: 20000, chunkOverlap: 19999 }), undefined)
  t.match(chunkOptionsProblem({ chunkSize: 49, chunkOverlap: 0 }), /chunkSize/)
  t.match(chunkOptionsProblem({ chunkSize: 20001, chunkOverlap: 0 }), /chunkSize/)
  t.match(chunkOptionsProblem({ chunkSize: 100, chunkOverlap: 100 }), /chunkOverlap/)
  t.match(chunkOptionsProblem({ chunkSize: 100, chunkOverlap: -1 }), /chunkOverlap/)
  t.match(chunkOptionsProblem({ chunkSize: 100.5, chunkOverlap: 1 }), /chunkSize/)
  t.throws(() => chunkText('abc', { chunkSize: 10, chunkOverlap: 0 }))
})

t.test('a boundary moves back to just before a heading line, else after the last whitespace', async (t) => {
  const options = { chunkSize: 100, chunkOverlap: 0 }
  const filler = (n: number) => 'x'.repeat(n)
  // the last fifth of the first window is characters 80–100
  t.equal(chunkText(`${filler(84)}\n# Heading\n\nnext words here`, options)[0], `${filler(84)}\n`, 'before a heading')
  t.equal(chunkText(`${filler(82)}\n\n${filler(5)}\n${filler(5)} ${filler(20)}`, options)[0],
    `${filler(82)}\n\n${filler(5)}\n${filler(5)} `, 'a blank line or a line break is whitespace like any other')
  t.equal(chunkText(`${filler(70)}\n# Early\n${filler(9)} ${filler(30)}`, options)[0],
    `${filler(70)}\n# Early\n${filler(9)} `, 'a heading before the last fifth does not count')
})

t.test('a passage depends only on the chunkSize + 1 characters from its start (windowed indexing)', async (t) => {
  const same = (a: { start: number; end: number }[], b: { start: number; end: number }[]) =>
    JSON.stringify(a.map((p) => [p.start, p.end])) === JSON.stringify(b.map((p) => [p.start, p.end]))
  fc.assert(fc.property(textArb, optionsArb, fc.nat(), (text, options, at) => {
    const ranges = [...passageRanges(text, options)]
    // the text from the start of any passage gives the same passages from there on
    const fromAnyStart = ranges.every((r, i) => same(
      [...passageRanges(text.slice(r.start), options)].map((p) => ({ start: p.start + r.start, end: p.end + r.start })),
      ranges.slice(i)))
    // a text cut short gives the same passages as far as they are decided
    const cut = text.length === 0 ? 0 : at % (text.length + 1)
    const decided = (rs: { start: number; end: number }[]) => rs.filter((r) => r.start + options.chunkSize + 1 <= cut)
    return fromAnyStart && same(decided([...passageRanges(text.slice(0, cut), options)]), decided(ranges))
  }), { numRuns: 300 })
  t.pass('300 random cases')
})
