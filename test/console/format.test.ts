// The console's pure logic, run by tap like every other test (no browser needed): search snippets as text
// pieces, sizes and clock times for people, and the side-by-side comparison of two versions.
import t from 'tap'
import { byteSize, clock, plural, snippetParts } from '../../console/src/format.js'
import { sideBySide } from '../../console/src/line-diff.js'

t.test('a snippet splits into text and matches; nothing in it is read as markup', async (t) => {
  t.same(snippetParts('The on-call <mark>rota</mark> changes'), [
    { text: 'The on-call ', mark: false }, { text: 'rota', mark: true }, { text: ' changes', mark: false }])
  t.same(snippetParts('<img src=x onerror="alert(1)"> <mark>rota</mark>'), [
    { text: '<img src=x onerror="alert(1)"> ', mark: false }, { text: 'rota', mark: true }],
  'other tags stay characters')
  t.same(snippetParts('<mark>a</mark><mark>b</mark>'), [{ text: 'ab', mark: true }], 'neighbouring matches join')
  t.same(snippetParts('x <mark>open to the end'),
    [{ text: 'x ', mark: false }, { text: 'open to the end', mark: true }])
  t.same(snippetParts('stray </mark>close'), [{ text: 'stray close', mark: false }])
  t.same(snippetParts(''), [])
})

t.test('sizes, times and counts for people', async (t) => {
  t.equal(byteSize(912), '912 B')
  t.equal(byteSize(14.2 * 1024), '14.2 KB')
  t.equal(byteSize(3 * 1024 * 1024), '3.0 MB')
  t.equal(byteSize(250 * 1024 * 1024), '250 MB')
  t.equal(clock(0), '0:00')
  t.equal(clock(2.1), '0:02')
  t.equal(clock(75), '1:15')
  t.equal(clock(3725), '1:02:05')
  t.equal(plural(1, 'passage'), '1 passage')
  t.equal(plural(3, 'passage'), '3 passages')
})

t.test('two versions side by side: a replaced line is changed, the rest kept or added', async (t) => {
  const rows = sideBySide('const max = 3\nwhile (true) {\n  attempt()', 'const max = config.retries\nwhile (true) {\n' +
    '  attempt()\n}')
  t.same(rows.map((r) => r.kind), ['changed', 'same', 'same', 'added'])
  t.same(rows[0], { kind: 'changed', left: 'const max = 3', right: 'const max = config.retries' })
})
