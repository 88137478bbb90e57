import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import {
  definedTerms, documentOutline, documentTitle, hasOutline, OutlineReader, passageHeadingPath
} from '../../src/ingest/outline.js'
import { passageRanges } from '../../src/ingest/chunker.js'
import { htmlToStructuredText } from '../../src/ingest/html.js'

// no app here: these tests need only the extractor's modules
const FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url))

const MARKDOWN = [
  '# Server Configuration', // 0
  '',
  'Intro.',
  '## Resource Consumption',
  '### Memory',
  'shared_buffers: the memory for shared buffers.',
  '```sh',
  '# not a heading: a comment in code',
  '```',
  '### Disk',
  'temp_file_limit: the most temporary files may take.',
  'Write-Ahead Log',
  '---------------',
  '~~~',
  'Also code',
  '## nor this',
  '~~~',
  'wal_level: how much is written.',
  '#hashtag is not a heading',
  '#### Deep ####',
  'x'
].join('\n')

t.test('headings and their paths; fenced code and hashtags are not headings', async (t) => {
  const outline = documentOutline(MARKDOWN)
  t.same(outline.headings.map((h) => [h.level, h.text]), [
    [1, 'Server Configuration'], [2, 'Resource Consumption'], [3, 'Memory'], [3, 'Disk'], [2, 'Write-Ahead Log'],
    [4, 'Deep']
  ])
  t.ok(outline.titled)
  t.equal(documentTitle(outline, 'postgresql.md'), 'Server Configuration')
  const at = (needle: string) => {
    const start = MARKDOWN.indexOf(needle)
    return passageHeadingPath(outline, { start, end: start + needle.length })
  }
  t.same(at('shared_buffers'), ['Server Configuration', 'Resource Consumption', 'Memory'])
  t.same(at('temp_file_limit'), ['Server Configuration', 'Resource Consumption', 'Disk'])
  t.same(at('wal_level'), ['Server Configuration', 'Write-Ahead Log'])
  t.same(at('x'), ['Server Configuration', 'Write-Ahead Log', 'Deep'], 'a level may be skipped')
  t.same(passageHeadingPath(documentOutline('no headings here'), { start: 0, end: 5 }), [])
})

t.test('a passage belongs to the section holding most of it', async (t) => {
  const text = `# A\n${'a'.repeat(100)}\n## B\n${'b'.repeat(300)}\n`
  const outline = documentOutline(text)
  const b = text.indexOf('## B')
  t.same(passageHeadingPath(outline, { start: b - 50, end: b + 200 }), ['A', 'B'])
  t.same(passageHeadingPath(outline, { start: b - 90, end: b + 20 }), ['A'])
  t.same(passageHeadingPath(outline, { start: 0, end: 2 }), ['A'])
})

t.test('the title: a first heading that starts the text, else the file name', async (t) => {
  t.equal(documentTitle(documentOutline('\n\nTitle\n=====\ntext'), 'a.md'), 'Title')
  t.equal(documentTitle(documentOutline('Some text first.\n# Heading'), 'notes.v2.md'), 'notes.v2')
  t.equal(documentTitle(documentOutline('```\n# x\n```\n# Heading'), 'dir/code.md'), 'code')
  t.equal(documentTitle(documentOutline(''), 'README'), 'README')
  t.equal(documentTitle(documentOutline('## Second level first\ntext'), 'x.md'), 'Second level first')
})

t.test('underlined headings: not after a list item, a quote or a blank line', async (t) => {
  const outline = documentOutline('- item\n---\n> quote\n===\n\n---\nText\r\n===\r\nbody')
  t.same(outline.headings.map((h) => [h.level, h.text]), [[1, 'Text']])
})

t.test('which file types have headings', async (t) => {
  for (const type of ['md', 'markdown', 'txt', 'html', 'htm', 'pdf', 'docx', 'MD']) t.ok(hasOutline(type), type)
  for (const type of ['py', 'sh', 'yaml', 'toml', 'rb', 'json', 'csv']) t.notOk(hasOutline(type), type)
})

t.test('read in pieces, the outline is the same as read whole', async (t) => {
  const text = `${MARKDOWN}\r\nTail\r\n====\r\n`
  const whole = documentOutline(text)
  fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 8 }), (cuts) => {
    const reader = new OutlineReader()
    let from = 0
    for (const cut of [...cuts].sort((a, b) => a - b)) { reader.push(text.slice(from, cut)); from = cut }
    reader.push(text.slice(from))
    t.same(reader.end(), whole)
  }), { numRuns: 200 })
})

t.test("an extracted manual page: each passage's heading path", async (t) => {
  const text = await htmlToStructuredText(fs.readFileSync(path.join(FIXTURES, 'knowledge', 'pg-create-index.html'),
    'utf8'))
  const outline = documentOutline(text)
  t.equal(documentTitle(outline, 'sql-createindex.html'), 'CREATE INDEX')
  const paths = new Map<string, string[]>()
  for (const p of passageRanges(text, { chunkSize: 400, chunkOverlap: 50 })) {
    paths.set(text.slice(p.start, p.end), passageHeadingPath(outline, p))
  }
  const pathOf = (needle: string) => [...paths].find(([passage]) => passage.includes(needle))?.[1]
  t.same(pathOf('B-tree | 90'), ['Parameters', 'Index Storage Parameters'])
  t.same(pathOf('title_idx_nulls_low'), ['Examples'])
})

t.test('the terms a passage defines: headings, definition terms, first cells of table rows', async (t) => {
  const passage = [
    'fers for the server.', // the end of the previous passage's definition
    '### 20.4.1. Memory',
    'shared_buffers (integer): Sets the amount of memory the database server uses.',
    'huge_pages (enum):',
    '- a list item: not a term',
    '23503 | foreign_key_violation',
    '- isolation_level (str | None) – a list item with a bar',
    'This flag may be combined with the other flags using the | (bitwise or) operator.',
    'A sentence that mentions work_mem and goes on for a good many words before a colon comes: no term.',
    '```',
    'key: value',
    'a | b',
    '```',
    'https://example.com/x: a link is no term'
  ].join('\n')
  t.same(definedTerms(passage), ['20.4.1. Memory', 'shared_buffers (integer)', 'huge_pages (enum)', '23503'])
  t.same(definedTerms(''), [])
})
