import t, { type Test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createExtractor, DEFAULT_WORKER_LIMITS } from '../../src/ingest/run.js'
import { extractorFor, fileTypeOf } from '../../src/ingest/formats.js'
import { bullet, docx, para, picture, table } from './docx-builder.js'
import { layoutPdf, type PlacedText } from './layout-pdf.js'

// Real files of each kind through the extraction processes, as uploads take them: the text keeps tables,
// headings and code apart.

const FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url))
const extractor = createExtractor(DEFAULT_WORKER_LIMITS)
t.teardown(() => extractor.close())

async function extract(t: Test, name: string, bytes: Buffer): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-structure-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const source = path.join(dir, name)
  fs.writeFileSync(source, bytes)
  const target = path.join(dir, 'out.txt')
  await extractor.extract(source, target, extractorFor(fileTypeOf(name))!, { chunkSize: 1000, chunkOverlap: 100 })
  return fs.readFileSync(target, 'utf8')
}

t.test('HTML: a manual page through the extraction process', async (t) => {
  const text = await extract(t, 'sql-createindex.html',
    fs.readFileSync(path.join(FIXTURES, 'knowledge', 'pg-create-index.html')))
  t.notMatch(text, /Prev|Next|Home/)
  t.match(text, '\nB-tree | 90 | 10 – 100\n')
  t.match(text, '\n## Parameters\n')
})

t.test('DOCX: title, headings, a table, a list and preformatted code', async (t) => {
  const file = docx([
    para('Field Guide to Alpine Plants', 'Title'),
    para('Habitats', 'Heading1'),
    para('Edelweiss grows on limestone ledges.'),
    para('Flowering times', 'Heading2'),
    table([
      ['Plant', 'Flowers', 'Altitude'],
      ['Edelweiss', 'July–September', '1800–3000 m'],
      ['Gentian', 'May–August', 'up to 2500 m\nin bright sun']
    ]),
    bullet('Carry a hand lens.'),
    bullet('Never pick protected species.'),
    para('Survey file', 'Heading3'),
    para('plot: 7', 'PreformattedText'),
    para('  altitude: 2500', 'PreformattedText'),
    para('After the code.')
  ])
  t.equal(await extract(t, 'guide.docx', file), [
    '# Field Guide to Alpine Plants',
    '',
    '# Habitats',
    '',
    'Edelweiss grows on limestone ledges.',
    '',
    '## Flowering times',
    '',
    'Plant | Flowers | Altitude',
    'Edelweiss | July–September | 1800–3000 m',
    'Gentian | May–August | up to 2500 m in bright sun',
    '',
    '- Carry a hand lens.',
    '- Never pick protected species.',
    '',
    '### Survey file',
    '',
    '```',
    'plot: 7',
    '  altitude: 2500',
    '```',
    '',
    'After the code.'
  ].join('\n'))
})

t.test('DOCX: a table holding a table is read as blocks, the inner table as rows', async (t) => {
  const inner = table([['a1', 'b1'], ['a2', 'b2']])
  const text = await extract(t, 'nested.docx', docx([table([['Left column text', inner]])]))
  t.equal(text, 'Left column text\n\na1 | b1\na2 | b2')
})

t.test('DOCX: pictures are never read', async (t) => {
  t.equal(await extract(t, 'pictures.docx', docx([para('Before the picture.'), picture('a lighthouse'),
    para('After the picture.')])), 'Before the picture.\n\nAfter the picture.')
})

t.test('DOCX made by LibreOffice keeps its paragraphs', async (t) => {
  const text = await extract(t, 'notes.docx', fs.readFileSync(path.join(FIXTURES, 'knowledge', 'notes.docx')))
  t.match(text, /^# Field Notes on Alpine Botany\n\nEdelweiss grows on limestone ledges above two thousand metres\.\n\n/)
})

t.test('PDF: columns stay apart, table cells are separated, larger lines are headings', async (t) => {
  const line = (x: number, y: number, text: string, size = 10): PlacedText => ({ x, y, size, text })
  const first = [
    line(72, 740, 'Harbor Operations Manual', 20),
    line(72, 700, 'Tide tables', 14),
    // two columns, the left one first, as typesetters write them
    line(72, 670, 'Pilots board inbound vessels at the'),
    line(72, 658, 'outer buoy two hours before high water.'),
    line(320, 670, 'Outbound vessels leave on the ebb, never'),
    line(320, 658, 'against a flood tide above two knots.'),
    line(72, 600, 'Error codes', 14),
    // a table, row by row
    line(72, 580, 'Code'), line(160, 580, 'Condition name'),
    line(72, 566, '23503'), line(160, 566, 'foreign_key_violation'),
    line(72, 552, '23505'), line(160, 552, 'unique_violation'),
    // one word set in two runs (kerned), then a word space
    line(72, 520, 'Ker'), line(87.6, 520, 'ned'), line(106, 520, 'text.')
  ]
  const text = await extract(t, 'manual.pdf', layoutPdf([first, [line(72, 740, 'Second page text.')]]))
  t.equal(text, [
    '# Harbor Operations Manual',
    '',
    '## Tide tables',
    '',
    'Pilots board inbound vessels at the',
    'outer buoy two hours before high water.',
    '',
    'Outbound vessels leave on the ebb, never',
    'against a flood tide above two knots.',
    '',
    '## Error codes',
    '',
    'Code | Condition name',
    '23503 | foreign_key_violation',
    '23505 | unique_violation',
    '',
    'Kerned text.',
    '',
    'Second page text.'
  ].join('\n'))
})

t.test('PDF made by LibreOffice: its lines as before', async (t) => {
  const text = await extract(t, 'report.pdf', fs.readFileSync(path.join(FIXTURES, 'knowledge', 'report.pdf')))
  t.match(text, /lighthouse keeper recorded seventeen storms during the winter season\.\n/)
  t.match(text, /Fresnel lens was completed ahead of schedule/)
})
