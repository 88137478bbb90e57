import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { htmlToStructuredText, tableLines } from '../../src/ingest/html.js'

// no app here: these tests need only the extractor's modules
const FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url))

const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, 'knowledge', name), 'utf8')
const lines = (text: string) => text.split('\n')

t.test('a PostgreSQL-manual page: navigation bars dropped, structure kept', async (t) => {
  const text = await htmlToStructuredText(fixture('pg-create-index.html'))
  // the DocBook navigation header and footer (Prev Up Home Next, and the neighbouring pages' names)
  t.notMatch(text, /\bPrev\b|\bHome\b|\bNext\b|SQL Commands|CREATE GROUP|CREATE LANGUAGE/)
  t.notMatch(text, /INDEXPrev|\w\|\w/)
  t.ok(text.startsWith('## CREATE INDEX\n\nCREATE INDEX — define a new index\n\n## Synopsis\n\n```\nCREATE [ UNIQUE ]'),
    'the title is the first heading, not repeated')
  t.ok(lines(text).includes('### Index Storage Parameters'), 'a sub-heading one level down')
  // the synopsis keeps its line breaks and indentation inside a fence
  t.match(text, /\[ USING method \]\n {4}\( \{ column_name \| \( expression \) \}/)
  t.match(text, /```\nCREATE UNIQUE INDEX title_idx ON films \(title\);\n```/)
  // a variable list: term, colon, definition, on one line; its second paragraph follows
  t.ok(lines(text).includes('UNIQUE: Causes the system to check for duplicate values in the table when the index is ' +
    'created (if data already exist) and each time data is added.'))
  t.match(text, /\nCONCURRENTLY: When this option is used, PostgreSQL will build the index/)
  t.match(text, /\nname: The name of the index to be created\./)
  // the table: its title, a header row, then a row per line; a cell spanning two rows is in both
  t.match(text, [
    'Table 296. Default fillfactor per index method',
    '',
    'Index method | Default fillfactor | Allowed range',
    'B-tree | 90 | 10 – 100',
    'hash | 75 | 10 – 100',
    'GiST | 90 | 10 – 100'
  ].join('\n'))
  t.ok(lines(text).includes('ALTER INDEX, DROP INDEX, REINDEX'))
  // prose reflowed: a paragraph is one line
  t.ok(lines(text).includes('The key field(s) for the index are specified as column names, or alternatively as ' +
    'expressions written in parentheses.'))
})

t.test('a PostgreSQL-manual error-code table: codes and names apart, no navigation text', async (t) => {
  const text = await htmlToStructuredText(fixture('pg-errcodes.html'))
  t.equal(text, [
    '## Appendix A. PostgreSQL Error Codes',
    '',
    'All messages emitted by the PostgreSQL server are assigned five-character error codes that follow the SQL ' +
    'standard\'s conventions for “SQLSTATE” codes.',
    '',
    'Table A.1. PostgreSQL Error Codes',
    '',
    'Error Code | Condition Name',
    'Class 23 — Integrity Constraint Violation',
    '23000 | integrity_constraint_violation',
    '23503 | foreign_key_violation',
    '23505 | unique_violation',
    '',
    'The symbol shown in the column “Condition Name” is the condition name to use in PL/pgSQL.'
  ].join('\n'))
})

t.test('a Sphinx page (the Python documentation): sidebars, related bars, permalinks and footer dropped',
  async (t) => {
    const text = await htmlToStructuredText(fixture('sphinx-sqlite3.html'))
    t.notMatch(text, /¶|Navigation|previous|modules|Table of Contents|Report a Bug|Show Source|Copyright|Sphinx|Quick/)
    t.notMatch(text, /Python 3\.11\.2 documentation/, 'the page title is not repeated: the page has its own h1')
    t.ok(text.startsWith('# sqlite3 — DB-API 2.0 interface for SQLite databases\n'))
    t.ok(lines(text).includes('## Reference'))
    t.ok(lines(text).includes('### Module functions'))
    t.ok(lines(text).includes('sqlite3.connect(database, timeout=5.0): Open a connection to an SQLite database.'),
      'an API signature is the term its description defines')
    t.match(text, 'Parameters:\n- database (path-like object) – The path to the database file to be opened.\n' +
      '- timeout (float) – How many seconds')
    t.ok(lines(text).includes('Return type: Connection'))
    t.match(text, '```\ncon = sqlite3.connect("tutorial.db")\ncur = con.cursor()\n```')
    t.match(text, 'Python type | SQLite type\nNone | NULL\nint | INTEGER\nfloat | REAL')
    t.match(text, 'Note\n\nThe type system of the sqlite3 module is extensible.')
  })

t.test('an HTML5 site page: banner, navigation, sidebar, site footer and pager dropped', async (t) => {
  const text = await htmlToStructuredText(fixture('site-page.html'))
  t.notMatch(text, /Skip to|Harbor Docs|Guide|Reference|Blog|Search|On this page|Previous|Next|Privacy|©/)
  t.ok(text.startsWith('# Backups\n'), "the article's own header is kept")
  t.match(text, '```\nbackup:\n  schedule: "0 3 * * *"\n  # keep one copy off-site\n  target: s3://backups/harbor\n```')
  t.match(text, 'Note: the first snapshot runs at the next scheduled time', 'a callout aside is content')
  t.match(text,
    'Retention by snapshot kind\nKind | Kept for | Compressed\nNightly | 14 days | yes\nWeekly | 8 weeks | yes')
  t.match(text, /1\. Stop the service\.\n +2\. Copy the snapshot\.\n +3\. Start the service\./)
  t.match(text, 'Restoring on another host\n\nCopy the snapshot first.')
})

t.test('furniture of other generators: MediaWiki, Javadoc, Read the Docs', async (t) => {
  const html = '<a class="mw-jump-link" href="#n">Jump to navigation</a><h2>History<span class="mw-editsection">' +
    '[<a href="e">edit</a>]</span></h2><p>Founded in 1901.</p><div class="printfooter">Retrieved from x</div>' +
    '<div class="catlinks">Categories: Harbors</div><ul class="subNav"><li><a href="s">Summary</a></li></ul>' +
    '<div class="rst-footer-buttons"><a href="p">Previous</a></div>'
  t.equal(await htmlToStructuredText(html), '## History\n\nFounded in 1901.')
  // a DOCX footnote as mammoth writes it
  t.equal(await htmlToStructuredText('<p>Text<sup><a href="#footnote-1" id="footnote-ref-1">[1]</a></sup></p>' +
    '<ol><li id="footnote-1"><p>The note. <a href="#footnote-ref-1">↑</a></p></li></ol>'), 'Text[1]\n\n 1. The note.')
})

t.test('the title is the first heading when the body has none', async (t) => {
  t.equal(await htmlToStructuredText(
    '<html><head><title>Release notes</title></head><body><p>Fixed.</p></body></html>'),
  '# Release notes\n\nFixed.')
  t.equal(await htmlToStructuredText('<title>Notes</title><h1>Notes 2</h1><p>x</p>'), '# Notes 2\n\nx')
  t.equal(await htmlToStructuredText('<p>No head at all</p>'), 'No head at all')
  t.equal(await htmlToStructuredText('<p>an <svg><title>icon</title></svg> inside</p>'), 'an inside',
    "an SVG's title is not the page's")
})

t.test('no words run together across blocks and cells', async (t) => {
  const html = '<div>CREATE INDEX</div><div><a href="a">Alpha</a></div><section>one</section><section>two</section>' +
    '<table><tr><td>23503</td><td>foreign_key_violation</td></tr><tr><td>23505</td><td>unique_violation</td></tr>' +
    '</table><figure><img src="x.png"><figcaption>Figure 1</figcaption></figure><p>last<br>line</p>' +
    '<ul><li>first</li><li>second<ul><li>inner</li></ul></li></ul>'
  const text = await htmlToStructuredText(html)
  t.equal(text, [
    'CREATE INDEX', 'Alpha', 'one', 'two', '', '23503 | foreign_key_violation', '23505 | unique_violation', '',
    'Figure 1', '', 'last', 'line', '', '- first', '- second', '  - inner'
  ].join('\n'))
})

t.test('link bars', async (t) => {
  const bars = [
    '<p><a href="1">« Prev</a> | <a href="2">Next »</a></p>',
    '<div><a href="i">Index</a> · <a href="c">Contents</a> · <a href="u">Up</a></div>',
    '<ul><li><a href="p">Previous page</a></li><li><a href="n">Next page</a></li></ul>',
    '<table><tr><td><a href="p">Prev</a></td><td><a href="u">Up</a></td><td><a href="n">Next</a></td></tr>' +
    '<tr><td>Chapter 4</td><td><a href="h">Home</a></td><td>Chapter 6</td></tr></table>'
  ]
  for (const bar of bars) t.equal(await htmlToStructuredText(`<p>Body text.</p>${bar}`), 'Body text.', bar)
  // links that are content stay
  for (const html of [
    '<p>See <a href="x">CREATE TABLE</a> and <a href="y">ALTER TABLE</a>.</p>',
    '<p>Press <a href="n">Next</a> to continue with the installation wizard and accept the licence terms.</p>',
    '<ul><li><a href="a">Installing</a></li><li><a href="b">Upgrading</a></li></ul>'
  ]) t.not(await htmlToStructuredText(html), '', html)
})

t.test('definition lists', async (t) => {
  t.equal(await htmlToStructuredText('<dl><dt>TTL</dt><dd>Time to live.</dd><dt>A</dt><dt>AAAA</dt>' +
    '<dd>Address records.</dd><div><dt>MX</dt><dd>Mail exchanger.</dd></div><dt>Empty</dt></dl>'),
  'TTL: Time to live.\nA, AAAA: Address records.\nMX: Mail exchanger.\nEmpty')
  t.equal(await htmlToStructuredText('<dl><dt>example</dt><dd><pre>a = 1\nb = 2</pre></dd></dl>'),
    'example:\n```\na = 1\nb = 2\n```')
  t.equal(await htmlToStructuredText(
    '<dl><dt>outer</dt><dd><p>Text.</p><dl><dt>inner</dt><dd>Deeper.</dd></dl></dd></dl>'),
  'outer: Text.\n\ninner: Deeper.')
})

t.test('a list made of terms alone, as DocBook writes tables of contents', async (t) => {
  t.equal(await htmlToStructuredText('<div class="toc"><dl class="toc"><dt>26.1. SQL Dump</dt><dd><dl>' +
    '<dt>26.1.1. Restoring the Dump</dt><dt>26.1.2. Using pg_dumpall</dt></dl></dd><dt>26.2. File System Level ' +
    'Backup</dt></dl></div>'),
  '26.1. SQL Dump\n26.1.1. Restoring the Dump\n26.1.2. Using pg_dumpall\n26.2. File System Level Backup')
})

t.test('a zero-width space (where a long word may wrap) is no space', async (t) => {
  t.equal(await htmlToStructuredText('<h2>37.4. administrable_role_\u200bauthorizations</h2>'),
    '## 37.4. administrable_role_authorizations')
})

t.test('code blocks', async (t) => {
  t.equal(await htmlToStructuredText('<pre>\n  indented\n\n\ttabbed &lt;tag&gt;\n</pre>'),
    '```\n  indented\n\n\ttabbed <tag>\n```')
  t.equal(await htmlToStructuredText('<pre>use ``` fences</pre>'), '````\nuse ``` fences\n````',
    'a fence longer than any run of backticks inside')
  t.equal(await htmlToStructuredText('<pre>a<br>b</pre>'), '```\na\nb\n```')
  t.equal(await htmlToStructuredText('<pre>  </pre><p>after</p>'), 'after', 'an empty block leaves nothing')
  t.equal(await htmlToStructuredText('<p>inline <code>x  =  1</code> code</p>'), 'inline x = 1 code')
})

t.test('tables', async (t) => {
  t.equal(await htmlToStructuredText('<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody>' +
    '<tr><td colspan="2">spanning both</td></tr><tr><td></td><td>right only</td></tr>' +
    '<tr><td>left only</td><td></td></tr><tr><td><p>two</p><p>paragraphs</p></td><td><pre>x\ny</pre></td></tr>' +
    '</tbody></table>'),
  'a | b\nspanning both\n| right only\nleft only\ntwo paragraphs | x y')
  // a table that lays out a page is read as the blocks it holds
  t.equal(await htmlToStructuredText('<table><tr><td><h2>Menu</h2><p>Intro</p></td><td><table><tr><td>1</td>' +
    '<td>2</td></tr></table></td></tr></table>'), '## Menu\n\nIntro\n\n1 | 2')
  t.equal(await htmlToStructuredText('<table role="presentation"><tr><td>left</td><td>right</td></tr></table>'),
    'left\nright')
  t.equal(tableLines([
    [{ text: 'a', colspan: 1, rowspan: 3 }, { text: 'b', colspan: 1, rowspan: 1 }],
    [{ text: 'c', colspan: 1, rowspan: 1 }],
    [{ text: 'd', colspan: 1, rowspan: 1 }],
    [{ text: 'e', colspan: 1, rowspan: 1 }, { text: 'f', colspan: 1, rowspan: 1 }]
  ]), 'a | b\na | c\na | d\ne | f')
  t.equal(tableLines([[{ text: 'x', colspan: 1000, rowspan: 1000 }], [], [{ text: 'y', colspan: 1, rowspan: 1 }]]),
    'x\nx\nx | y', 'huge spans end with the table')
})

t.test('spans cannot make a small page costly: work linear in cells and rows, repetition bounded', async (t) => {
  // wide rows, a cell spanning every later row, then empty rows: each empty row jumps to the spanned column
  // (stepping over 3,000 columns one at a time on each of 1,000 rows took minutes of CPU)
  const wide = '<td colspan="1000">a</td>'.repeat(3)
  const page = `<table><tr>${wide}<td rowspan="1000">held</td></tr>${'<tr></tr>'.repeat(999)}</table>`
  t.equal(await htmlToStructuredText(page), `a | a | a | held\n${'held\n'.repeat(998)}held`)
  // 100 cells of 10,000 characters, each spanning 1,000 rows that exist: 1 MB of cells, not 1 GB of text
  const cell = 'grain '.repeat(1666)
  const rows = [Array.from({ length: 100 }, () => ({ text: cell, colspan: 1, rowspan: 1000 })),
    ...Array.from({ length: 999 }, () => [])]
  const text = tableLines(rows)
  const held = 100 * cell.length
  t.ok(text.length <= 5 * held + 65_536 + 1_000_000, `${text.length} characters from ${held} in the cells`)
  t.ok(text.startsWith(Array(100).fill(cell.trim()).join(' | ')), 'the first row whole')
})

t.test('headings', async (t) => {
  t.equal(await htmlToStructuredText(
    '<h3>  Deep\n  heading <a class="headerlink" href="#h">¶</a></h3><h4></h4><p>x</p>'),
  '### Deep heading\n\nx')
  t.equal(await htmlToStructuredText('<td>cell</td><th>head</th>'), 'cell\nhead', 'cells outside a table are blocks')
})
