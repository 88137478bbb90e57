import t from 'tap'
import { documentText, pageLines, type TextRun } from '../../src/ingest/pdf-layout.js'

const run = (x: number, y: number, text: string, size = 10, width = text.length * size * 0.5): TextRun =>
  ({ x, y, text, size, width })

t.test('runs on one baseline make a line; gaps decide between nothing, a space and a cell boundary', async (t) => {
  t.same(pageLines([run(0, 100, 'abc'), run(15, 100, 'def'), run(33, 100, 'ghi'), run(100, 100, 'cell')])
    .map((l) => l.text), ['abcdef ghi | cell'])
  t.same(pageLines([run(0, 100, 'one'), run(15, 100, ' '), run(15, 100, 'two')]).map((l) => l.text), ['one two'],
    'a run of spaces is a space')
  t.same(pageLines([run(0, 100, 'x'), run(5, 102, '2', 6), run(12, 100, 'y')]).map((l) => l.text), ['x2 y'],
    'a raised run is on the same line')
  // right to left: each run starts left of the one before
  t.same(pageLines([run(100, 100, 'שלום', 10, 20), run(70, 100, 'עולם', 10, 20)]).map((l) => l.text), ['שלום עולם'])
})

t.test('paragraph breaks: a tall gap, or a jump back up to another column', async (t) => {
  const lines = pageLines([run(0, 700, 'a'), run(0, 688, 'b'), run(0, 660, 'c'), run(300, 700, 'd')])
  t.same(lines.map((l) => [l.text, l.break]), [['a', true], ['b', false], ['c', true], ['d', true]])
})

t.test('headings by size: the body is the size with most text', async (t) => {
  const pages = [[
    { text: 'Title', size: 30, break: true },
    { text: 'Chapter one', size: 20, break: true },
    { text: 'set over', size: 20, break: false },
    { text: 'Body text that is long enough to be the body.', size: 10, break: true },
    { text: 'Section', size: 16, break: true },
    { text: 'Smaller heading', size: 13, break: true },
    { text: '12 | 13', size: 16, break: true },
    { text: 'More body text, the most common size by far.', size: 10, break: false }
  ]]
  t.equal(documentText(pages),
    '# Title\n\n## Chapter one set over\n\nBody text that is long enough to be the body.\n\n### Section\n\n' +
    '### Smaller heading\n\n12 | 13\nMore body text, the most common size by far.')
  t.equal(documentText([[], [{ text: 'only', size: 10, break: true }], []]), 'only', 'empty pages leave nothing')
})

t.test('two columns written a line at a time across the page are read one after the other', async (t) => {
  const left = ['Pilots board inbound vessels at the', 'outer buoy two hours before high',
    'water, and the harbour master', 'confirms each berth by radio.']
  const right = ['Outbound vessels leave on the ebb,', 'never against a flood tide above',
    'two knots; tugs stand by at the', 'inner mole until they clear.']
  const runs: TextRun[] = []
  left.forEach((text, i) => {
    runs.push(run(72, 700 - 12 * i, text, 10, 220))
    // the left column's last line has nothing beside it; the right column's last line comes after it
    if (i < 3) runs.push(run(320, 700 - 12 * i, right[i], 10, 220))
  })
  runs.push(run(320, 700 - 12 * 4, right[3], 10, 150))
  t.same(pageLines(runs).map((l) => [l.text, l.break]), [
    ...left.map((text, i) => [text, i === 0]),
    ...[...right.slice(0, 3), right[3]].map((text, i) => [text, i === 0])
  ])
})

t.test('a table with short first cells stays a table of rows', async (t) => {
  const rows = [['work_mem', 'Sets the base maximum amount of memory used by a query operation'],
    ['temp_buffers', 'Sets the maximum amount of memory used for temporary buffers'],
    ['shared_buffers', 'Sets the amount of memory the server uses for shared memory buffers']]
  const runs = rows.flatMap(([a, b], i) => [run(72, 700 - 12 * i, a, 10, 60), run(180, 700 - 12 * i, b, 10, 300)])
  t.same(pageLines(runs).map((l) => l.text), rows.map(([a, b]) => `${a} | ${b}`))
})
