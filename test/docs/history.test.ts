import t from 'tap'
import { docPages, readPage } from './pages.js'

/**
 * The docs state the product and its evidence, not the story of its making: no development sessions or helpers,
 * no issue numbers, no dated experiments, no "was N before".
 */
const STORY: Array<[RegExp, string]> = [
  [/\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|\w+teenth|twentieth|twenty-\w+|\d+(?:st|nd|rd|th)) session\b/i, 'a numbered session'],
  [/\b(?:this|last|previous|next|earlier|later) session\b/i, 'a development session'],
  [/\bhelpers?\s+["“][^"”]+["”]|\bhelpers'|\b(?:other|the|two|three|four|five|six|several)\s+helpers\b(?!\s+for)/i,
    'a development helper'],
  [/\bissues? #?\d+/i, 'an issue number'],
  [/(?<![\w/.)#-])#\d+\b/, 'an issue number'],
  [/\b20\d\d-\d\d-\d\d\b/, 'a date'],
  [/\b(?:January|February|March|April|May|June|July|August|September|October|November|December) 20\d\d\b/, 'a date'],
  [/\bwas [\d.,]+\s*(?:ms|s|µs|MB|GB|%)?\s*before\b/i, 'a figure of the past'],
  [/\b(?:SPEC|CONTRACT)\.md\b/, 'a file outside the repository'],
  [/\bbranch `/i, 'a development branch']
]

t.test('no page tells the story of its own development', async (t) => {
  const found: string[] = []
  for (const page of docPages()) {
    const lines = readPage(page).split('\n')
    lines.forEach((line, i) => {
      const text = line
      for (const [pattern, what] of STORY) {
        const m = pattern.exec(text)
        if (m) found.push(`${page}:${i + 1}: ${what}: "${m[0]}"`)
      }
    })
  }
  t.same(found, [], 'nothing of the kind')
})

t.test('the patterns find what they are for', async (t) => {
  const hits = (s: string) => STORY.filter(([p]) => p.test(s)).map(([, w]) => w)
  t.same(hits('measured in the fifth session'), ['a numbered session'])
  t.same(hits('the twenty-third session'), ['a numbered session'])
  t.same(hits('helper "keys" found'), ['a development helper'])
  t.same(hits('two helpers ran test suites the whole time'), ['a development helper'])
  t.same(hits('typed calls, plus helpers for the common ones'), [])
  t.same(hits('see issue 18'), ['an issue number'])
  t.same(hits('fixed in #42'), ['an issue number'])
  t.same(hits('quiet run, 2026-11-23'), ['a date'])
  t.same(hits('p50 12 ms (was 40 ms before)'), ['a figure of the past'])
  t.same(hits('CONTRACT.md §5'), ['a file outside the repository'])
  t.same(hits('[make a key](mcp.md#1-make-a-key), a session token, the console session'), [])
})
