import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { build, FIXTURES, searching, signup, tempDir, uploadDocument, type TestUser } from '../helper.js'
import { createSearch } from '../../src/knowledge/search.js'
import { fakeEmbeddings } from '../fake-embeddings.js'
import type { App } from '../../src/app.js'
import { documentOutline, MAX_HEADINGS, passageHeadingPath } from '../../src/ingest/outline.js'
import { passageRanges } from '../../src/ingest/chunker.js'
import { LACKING_SQL, outlineBackfill, sharedStart } from '../../src/knowledge/outline-backfill.js'
import { TOOLS } from '../../src/mcp/tools.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

type Result = { document: { id: string; fileName: string; title: string }; chunk: { text: string;
  headingPath: string[] } }

async function search(app: App, user: TestUser, query: string, mode = 'hybrid'): Promise<Result[]> {
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: user.auth,
    payload: { query, mode } })
  if (res.statusCode !== 200) throw new Error(`search failed: ${res.statusCode} ${res.body}`)
  return res.json().results
}

/** the stored heading paths of a document's passages, in order (null: none stored) */
const storedPaths = (app: App, id: string) => (app.sqlite.prepare(`SELECT heading_path FROM knowledge_passages
  WHERE document_id = ? ORDER BY chunk_index`).pluck().all(id) as Array<string | null>)
  .map((p) => p === null ? [] : JSON.parse(p) as string[])
const titleOf = (app: App, id: string) =>
  app.sqlite.prepare(`SELECT title FROM knowledge_documents WHERE id = ?`).pluck().get(id) as string | null

const PAGE = `<!doctype html><html><head><title>Tab Title</title></head><body>
<h1>Server Configuration</h1>
<p>How the server is set up.</p>
<h2>Resource Consumption</h2>
<h3>Memory</h3>
<p>shared_buffers sets how much memory the quokkafish cache takes for shared buffers.</p>
<h3>Disk</h3>
<p>temp_file_limit bounds the temporary files a process may write.</p>
<h2>Logging</h2>
<p>log_destination says where the wombatlark messages go.</p>
</body></html>`

const MARKDOWN = [
  '# Deployment Guide',
  '',
  'Read this first.',
  '',
  '## Proxies',
  '',
  'Put the service behind a reverse proxy that terminates TLS.',
  '',
  '### Timeouts',
  '',
  'Raise the proxy read timeout above the longest narwhalquest stream.',
  '',
  '## Backups',
  '',
  'Copy the data directory with the backup command while it runs.'
].join('\n')

t.test('uploads: each result in every mode carries its heading path and its document\'s title; the listing and the ' +
  'document carry the title; another organization finds none of them', async (t) => {
  const fake = await fakeEmbeddings(t)
  const app = await build(t, { config: { rateLimits: NO_LIMITS,
    embeddings: { baseUrl: fake.url, apiKey: 'sk-embed-test', model: 'fake-small', batchSize: 8, pollMs: 20 } } })
  const u = await signup(app)
  const other = await signup(app)
  const small = { chunkSize: '120', chunkOverlap: '10' }
  const html = await uploadDocument(app, u, { filename: 'runtime-config.html', content: PAGE,
    contentType: 'text/html' }, small)
  const md = await uploadDocument(app, u, { filename: 'deploy.md', content: MARKDOWN }, small)
  const txt = await uploadDocument(app, u, { filename: 'plain notes.v2.txt',
    content: 'No headings at all: the lemurdrake sleeps here.' })
  const py = await uploadDocument(app, u, { filename: 'tool.py',
    content: '# Settings loader\nimport os\n\n# a comment above the ocelotwren setting\nocelotwren = 1\n' })
  const docx = await uploadDocument(app, u, { filename: 'notes.docx',
    content: fs.readFileSync(path.join(FIXTURES, 'knowledge', 'notes.docx')) })

  for (const mode of ['substring', 'words', 'hybrid']) {
    const [memory] = await search(app, u, 'quokkafish', mode)
    t.same(memory.chunk.headingPath, ['Server Configuration', 'Resource Consumption', 'Memory'],
      `${mode}: a passage under an h3 has the full path`)
    t.equal(memory.document.title, 'Server Configuration', `${mode}: an HTML page's title is its h1`)
    const [logging] = await search(app, u, 'wombatlark', mode)
    t.same(logging.chunk.headingPath, ['Server Configuration', 'Logging'], `${mode}: back up a level`)
    const [timeouts] = await search(app, u, 'narwhalquest', mode)
    t.same(timeouts.chunk.headingPath, ['Deployment Guide', 'Proxies', 'Timeouts'], `${mode}: Markdown`)
    t.equal(timeouts.document.title, 'Deployment Guide')
    const [plain] = await search(app, u, 'lemurdrake', mode)
    t.same([plain.chunk.headingPath, plain.document.title], [[], 'plain notes.v2'],
      `${mode}: no headings: an empty path, the file name without its extension`)
    const [code] = await search(app, u, 'ocelotwren', mode)
    t.same([code.chunk.headingPath, code.document.title], [[], 'tool'], `${mode}: a # comment is no heading`)
    const [botany] = await search(app, u, 'Edelweiss', mode)
    t.same([botany.document.title, botany.chunk.headingPath[0]], ['Field Notes on Alpine Botany',
      'Field Notes on Alpine Botany'], `${mode}: a DOCX's title`)
    t.same(await search(app, other, 'quokkafish', mode), [], `${mode}: another organization finds nothing`)
    t.same(await search(app, other, 'narwhalquest', mode), [])
  }

  // semantic: once every passage has its vector
  for (let i = 0; ; i++) {
    app.knowledgeEmbeddings!.kick()
    await app.jobs.idle()
    const [{ vectors }] = app.sqlite.prepare(`SELECT count(*) AS vectors FROM knowledge_vectors`).all() as
      Array<{ vectors: number }>
    const [{ passages }] = app.sqlite.prepare(`SELECT count(*) AS passages FROM knowledge_passages`).all() as
      Array<{ passages: number }>
    if (vectors === passages) break
    if (i > 500) throw new Error('passages not embedded')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const near = await search(app, u, 'Raise the proxy read timeout above the longest narwhalquest stream.', 'semantic')
  const timeouts = near.find((r) => r.chunk.text.includes('narwhalquest'))
  t.same(timeouts?.chunk.headingPath, ['Deployment Guide', 'Proxies', 'Timeouts'], 'semantic too')
  t.equal(timeouts?.document.title, 'Deployment Guide')
  t.same(await search(app, other, 'Raise the proxy read timeout above the longest narwhalquest stream.', 'semantic'),
    [], 'semantic: another organization finds nothing')

  const listed = await app.inject({ method: 'GET', url: '/api/knowledge/documents', headers: u.auth })
  const titles = Object.fromEntries((listed.json().documents as Array<{ id: string; title: string }>)
    .map((d) => [d.id, d.title]))
  t.same(titles, { [html.id]: 'Server Configuration', [md.id]: 'Deployment Guide', [txt.id]: 'plain notes.v2',
    [py.id]: 'tool', [docx.id]: 'Field Notes on Alpine Botany' }, 'the listing carries each title')
  const one = await app.inject({ method: 'GET', url: `/api/knowledge/document/${md.id}`, headers: u.auth })
  t.equal(one.json().document.title, 'Deployment Guide', 'and the document')
  const foreign = await app.inject({ method: 'GET', url: `/api/knowledge/document/${md.id}`, headers: other.auth })
  t.equal(foreign.statusCode, 404, 'another organization\'s document is not found')
  t.same((await app.inject({ method: 'GET', url: '/api/knowledge/documents', headers: other.auth }))
    .json().documents, [])
})

/** a Markdown text of about `chars` characters: chapters, sections and subsections, some headings underlined */
function manual(chars: number): string {
  const lines: string[] = ['# The Manual', '', 'Opening words.', '']
  for (let chapter = 1, size = 0; size < chars; chapter++) {
    lines.push(chapter % 3 === 0 ? `Chapter ${chapter}\n==========` : `# Chapter ${chapter}`, '')
    for (let section = 1; section <= 4; section++) {
      lines.push(section % 2 === 0 ? `Section ${chapter}.${section}\n-----------` : `## Section ${chapter}.${section}`,
        '')
      for (let sub = 1; sub <= 3; sub++) {
        lines.push(`### Part ${chapter}.${section}.${sub}`, '')
        const words = Array.from({ length: 20 + ((chapter * 7 + section * 3 + sub) % 90) },
          (_, i) => `word${(i * 31 + chapter) % 997}`).join(' ')
        lines.push(words, '', '```sh', '# not a heading', '```', '')
        size += words.length + 60
      }
    }
  }
  return lines.join('\n')
}

/** the heading path of each passage, as computed from the whole text */
function expectedPaths(text: string, chunkSize: number, chunkOverlap: number): string[][] {
  const outline = documentOutline(text)
  return Array.from(passageRanges(text, { chunkSize, chunkOverlap }), (p) => passageHeadingPath(outline, p))
}

t.test('a document indexed in the background (over 1 MB of text, read a window at a time) has every passage\'s ' +
  'heading path; one indexed before heading paths were stored gets them and its title from the index worker ' +
  'after a restart, the same as at upload', async (t) => {
  const dataDir = tempDir(t)
  let app = await build(t, { dataDir, config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const text = manual(1_200_000)
  t.ok(Buffer.byteLength(text) > 1024 * 1024, 'past the read-your-writes size: indexed by the background job')
  const big = await uploadDocument(app, u, { filename: 'manual.md', content: text },
    { chunkSize: '1000', chunkOverlap: '200' })
  const small = await uploadDocument(app, u, { filename: 'short.md', content: MARKDOWN },
    { chunkSize: '60', chunkOverlap: '15' })
  const py = await uploadDocument(app, u, { filename: 'setup.py', content: '# Setup\nx = 1\n' })
  const expected = expectedPaths(text, 1000, 200)
  const stored = storedPaths(app, big.id)
  t.equal(stored.length, expected.length)
  t.ok(stored.every((p, i) => JSON.stringify(p) === JSON.stringify(expected[i])), 'every passage\'s path is right')
  t.ok(stored.filter((p) => p.length === 3).length > 1000, 'most passages are three headings deep')
  t.equal(titleOf(app, big.id), 'The Manual')
  const smallPaths = storedPaths(app, small.id)
  t.same(smallPaths, expectedPaths(MARKDOWN, 60, 15))
  t.same(storedPaths(app, py.id), [[]])

  await app.close()

  // as a database from before titles and heading paths were stored
  const file = path.join(dataDir, 'cairn.db')
  const raw = new Database(file)
  raw.exec(`UPDATE knowledge_documents SET title = NULL; UPDATE knowledge_passages SET heading_path = NULL`)
  raw.close()
  const [sqlite, store] = searching(t, app)
  const reader = { customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId] }
  const [hit] = await createSearch(sqlite, store).search(reader, {}, 'narwhalquest', 10)
  t.same([hit.document.title, hit.chunk.headingPath], ['short', []],
    'until the back-fill: the title from the file name, no path')
  const listed = JSON.parse(store.listPage(reader, {}, 10, 0).documents) as Array<{ title: string }>
  t.same(listed.map((d) => d.title).sort(), ['manual', 'setup', 'short'], 'the listing too')

  app = await build(t, { dataDir, config: { rateLimits: NO_LIMITS } })
  for (let i = 0; titleOf(app, big.id) === null || titleOf(app, small.id) === null || titleOf(app, py.id) === null;
    i++) {
    if (i > 3000) throw new Error('the back-fill did not come')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  t.equal(titleOf(app, big.id), 'The Manual')
  t.equal(titleOf(app, py.id), 'setup')
  const filled = storedPaths(app, big.id)
  t.ok(filled.every((p, i) => JSON.stringify(p) === JSON.stringify(expected[i])),
    'the back-fill gives every passage the path it had at upload')
  t.same(storedPaths(app, small.id), smallPaths)
  t.same(storedPaths(app, py.id), [[]])
  const [after] = await search(app, u, 'narwhalquest')
  t.same([after.document.title, after.chunk.headingPath], ['Deployment Guide', ['Deployment Guide', 'Proxies',
    'Timeouts']])
  t.equal(await outlineBackfill(app.sqlite).all(), 0, 'nothing is left to do')
})

t.test('the back-fill reads where each passage lies from the overlap of its neighbours', async (t) => {
  t.equal(sharedStart('abcdef', 'defgh', 3), 3)
  t.equal(sharedStart('abc\u{1F600}de', '\u{1F600}def', 3), 4, 'one more where a start would split a surrogate pair')
  t.equal(sharedStart('abcdef', 'bcdefg', 2), 5, 'a start one character on')
  t.equal(sharedStart('abcdef', 'xyz', 0), 0)
  t.equal(sharedStart('abcdef', 'xyz', 3), 0, 'none fits: none')

  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  // emoji around every overlap's start, so that some passages start one character early
  const text = MARKDOWN.replace(/ /g, ' \u{1F600}')
  const doc = await uploadDocument(app, u, { filename: 'emoji.md', content: text },
    { chunkSize: '70', chunkOverlap: '21' })
  const ranges = [...passageRanges(text, { chunkSize: 70, chunkOverlap: 21 })]
  t.ok(ranges.some((r, i) => i > 0 && r.start === ranges[i - 1].end - 22), 'some passages share 22 characters')
  const paths = storedPaths(app, doc.id)
  t.same(paths, expectedPaths(text, 70, 21))
  t.ok(paths.some((p) => p.length === 3))
  app.sqlite.prepare(`UPDATE knowledge_documents SET title = NULL WHERE id = ?`).run(doc.id)
  app.sqlite.prepare(`UPDATE knowledge_passages SET heading_path = NULL WHERE document_id = ?`).run(doc.id)
  t.equal(await outlineBackfill(app.sqlite).all(), 1)
  t.same(storedPaths(app, doc.id), paths)
  t.equal(titleOf(app, doc.id), '\u{1F600}Deployment \u{1F600}Guide')
})

t.test('an outline keeps at most MAX_HEADINGS headings: later passages take the last one\'s path', async (t) => {
  const text = ['# Top', ...Array.from({ length: MAX_HEADINGS + 10 }, (_, i) => `## H${i}\nbody`)].join('\n')
  const outline = documentOutline(text)
  t.equal(outline.headings.length, MAX_HEADINGS)
  t.same(passageHeadingPath(outline, { start: text.length - 4, end: text.length }), ['Top', `H${MAX_HEADINGS - 2}`])
})

t.test('the back-fill finds its documents through the partial index of untitled ones', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const plan = (app.sqlite.prepare(`EXPLAIN QUERY PLAN ${LACKING_SQL}`).all() as Array<{ detail: string }>)
    .map((r) => r.detail).join('; ')
  t.match(plan, /USING INDEX knowledge_docs_untitled_idx/)
  t.notMatch(plan, /TEMP B-TREE/, 'in its order')
})

t.test('the MCP search_knowledge text shows where each passage is', async (t) => {
  const tool = TOOLS.find((x) => x.name === 'search_knowledge')!
  const text = tool.summary({ query: 'timeout', results: [
    { document: { id: 'd1', fileName: 'deploy.md' }, chunk: { headingPath: ['Deployment Guide', 'Proxies'] },
      snippet: 'the <mark>timeout</mark>' },
    { document: { id: 'd2', fileName: 'tool.py' }, chunk: { headingPath: [] }, snippet: 'timeout = 3' }
  ] })
  t.equal(text, '2 passage(s) for "timeout"\n' +
    '- deploy.md › Deployment Guide › Proxies (d1): the <mark>timeout</mark>\n' +
    '- tool.py (d2): timeout = 3')
})
