import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { build, signup, addUser, createKey, multipart, type TestUser, type FilePart, FIXTURES, searching,
  trigramsCaughtUp } from '../../helper.js'
import { docxBomb } from '../../zip-helper.js'
import type { App } from '../../../src/app.js'
import { contentDisposition } from '../../../plugins/knowledge/disposition.js'

t.test('download names cannot inject headers', async (t) => {
  t.equal(contentDisposition('a"b\\c.txt'), `attachment; filename="a_b_c.txt"; filename*=UTF-8''a%22b%5Cc.txt`)
  const evil = contentDisposition('x.txt\r\nSet-Cookie: a=b')
  t.notMatch(evil, /[\r\n]/)
  t.match(evil, /filename="x.txt__Set-Cookie: a=b"/)
  t.equal(contentDisposition(''), `attachment; filename="download"; filename*=UTF-8''`)
})

const fixtures = path.join(FIXTURES, 'knowledge')
const pdf = fs.readFileSync(path.join(fixtures, 'report.pdf'))
const docx = fs.readFileSync(path.join(fixtures, 'notes.docx'))
const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

async function upload(app: App, headers: Record<string, string>, file: FilePart, fields: Record<string, string> = {}) {
  const body = multipart([file], fields)
  return app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...headers, ...body.headers },
    payload: body.payload })
}
async function uploadOk(app: App, user: TestUser, file: FilePart, fields: Record<string, string> = {}) {
  const res = await upload(app, user.auth, file, fields)
  if (res.statusCode !== 201) throw new Error(`upload failed: ${res.statusCode} ${res.body}`)
  await app.jobs.idle()
  return res.json().document as { id: string; chunkCount: number; textLength: number }
}
async function search(app: App, headers: Record<string, string>, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/api/knowledge/search', headers, payload: body })
}
const ids = (res: { json(): { results: Array<{ document: { id: string } }> } }) =>
  res.json().results.map((r) => r.document.id)

t.test('every file kind is extracted, stored and found', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const kinds: Array<[FilePart, string]> = [
    [{ filename: 'report.pdf', content: pdf }, 'lighthouse keeper recorded seventeen storms'],
    [{ filename: 'notes.docx', content: docx }, 'Edelweiss grows on limestone ledges'],
    [{ filename: 'a.txt', content: 'Plain text about copper kettles.' }, 'copper kettles'],
    [{ filename: 'b.md', content: '# Title\n\nMarkdown mentions *velvet* curtains.' }, 'velvet'],
    [{ filename: 'c.json', content: '{"animal": "pangolin scales"}' }, 'pangolin scales'],
    [{ filename: 'd.yaml', content: 'river: meandering oxbow lake\n' }, 'oxbow lake'],
    [{ filename: 'e.xml', content: '<root><item>granite quarry</item></root>' }, 'granite quarry'],
    [{ filename: 'f.html', content: '<html><script>hidden_script_text()</script><p>harbour seals bask</p></html>' },
      'harbour seals bask'],
    [{ filename: 'g.csv', content: 'name,colour\nzinnia,magenta\n' }, 'zinnia,magenta'],
    [{ filename: 'h.ts', content: 'export const quokkaCount = 42\n' }, 'quokkaCount'],
    [{ filename: 'i.py', content: 'def platypus_bill():\n    return 1\n' }, 'platypus_bill'],
    [{ filename: 'j.htm', content: '<p>saffron threads</p>' }, 'saffron threads'],
    [{ filename: 'k.txt',
      content: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('utf sixteen walrus', 'utf16le')]) },
    'sixteen walrus']
  ]
  for (const [file, sentence] of kinds) {
    const doc = await uploadOk(app, u, file)
    const res = await search(app, u.auth, { query: sentence })
    t.equal(res.statusCode, 200)
    t.ok(ids(res).includes(doc.id), `${file.filename}: "${sentence}" found`)
  }
  t.same(ids(await search(app, u.auth, { query: 'hidden_script_text' })), [], 'scripts are not indexed')
  const stats = (await app.inject({ url: '/api/knowledge/stats', headers: u.auth })).json()
  t.equal(stats.documentCount, kinds.length)
  t.same(stats.fileTypes, ['csv', 'docx', 'htm', 'html', 'json', 'md', 'pdf', 'py', 'ts', 'txt', 'xml', 'yaml'])
  t.same(stats.categories, ['general'])
  t.same(stats.scopes, ['organization'])
  t.ok(stats.supportedFormats.includes('.pdf'))
  t.same(stats.tenantContext, { customerId: u.customerId, scope: 'all' })
})

t.test('upload response, get with chunks, status, byte-identical download', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const text = Array.from({ length: 300 }, (_, i) => `Sentence number ${i} about tidal pools.`).join(' ')
  const res = await upload(app, u.auth, { filename: 'pools.txt', content: text },
    { category: 'nature', tags: '["sea","rocks"]', chunkSize: '500', chunkOverlap: '50' })
  t.equal(res.statusCode, 201)
  const body = res.json()
  t.equal(body.success, true)
  t.match(body.document,
    { fileName: 'pools.txt', filePath: null, originalStorage: 'local', fileSize: Buffer.byteLength(text),
      fileType: 'txt', textLength: text.length })
  t.ok(body.document.chunkCount > 20)
  t.type(body.message, 'string')
  await app.jobs.idle()
  const status = (await app.inject({ url: `/api/knowledge/documents/${body.document.id}/status`,
    headers: u.auth })).json()
  t.match(status,
    { success: true, status: 'indexed', processingProgress: 100,
      document: { id: body.document.id, fileName: 'pools.txt', fileType: 'txt',
        chunkCount: body.document.chunkCount } })

  const got = (await app.inject({ url: `/api/knowledge/document/${body.document.id}`, headers: u.auth })).json()
  t.equal(got.document.size, Buffer.byteLength(text))
  t.same(got.document.tags, ['sea', 'rocks'])
  t.equal(got.document.category, 'nature')
  t.equal(got.document.scope, 'organization')
  t.equal(got.chunks.length, body.document.chunkCount)
  t.same(got.chunks.map((c: { chunkIndex: number }) => c.chunkIndex), [...Array(got.chunks.length).keys()])
  t.ok(got.chunks.every((c: { text: string; chunkSize: number }) => c.chunkSize === c.text.length &&
    c.chunkSize <= 500))
  t.equal(got.chunks[1].text.slice(0, 50), got.chunks[0].text.slice(-50), 'overlap of 50')
  const paged = (await app.inject({ url: `/api/knowledge/document/${body.document.id}?chunkOffset=3&chunkLimit=2`,
    headers: u.auth })).json()
  t.same(paged.chunks.map((c: { chunkIndex: number }) => c.chunkIndex), [3, 4])

  const p = await uploadOk(app, u, { filename: 'Rapport «été» v2; x.pdf', content: pdf })
  const dl = await app.inject({ url: `/api/knowledge/document/${p.id}/download`, headers: u.auth })
  t.equal(dl.statusCode, 200)
  t.equal(dl.headers['content-type'], 'application/octet-stream')
  t.ok(Buffer.compare(dl.rawPayload, pdf) === 0, 'original bytes')
  t.equal(dl.headers['content-disposition'],
    'attachment; filename="Rapport __t__ v2; x.pdf"; ' +
    "filename*=UTF-8''Rapport%20%C2%AB%C3%A9t%C3%A9%C2%BB%20v2%3B%20x.pdf")

  // when the original is gone, the stored text is sent under the file name
  app.sqlite.prepare('UPDATE knowledge_documents SET original_path = NULL WHERE id = ?').run(body.document.id)
  const asText = await app.inject({ url: `/api/knowledge/document/${body.document.id}/download`, headers: u.auth })
  t.match(asText.headers['content-type'], /^text\/plain/)
  t.match(asText.headers['content-disposition'], /filename="pools.txt"/)
  t.equal(asText.body, text)
})

t.test('refusals: no file, unsupported type, too large, bad fields, too many files', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const json = await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: u.auth,
    payload: { file: 'x' } })
  t.equal(json.statusCode, 400)
  t.equal(json.json().message, 'No file uploaded')

  const exe = await upload(app, u.auth, { filename: 'tool.exe', content: 'MZ' })
  t.equal(exe.statusCode, 415)
  t.ok(exe.json().supportedFormats.includes('.docx'))
  t.equal(exe.json().code, 'UNSUPPORTED_FILE_TYPE')
  t.equal((await upload(app, u.auth, { filename: 'noext', content: 'x' })).statusCode, 415)

  const big = await upload(app, u.auth, { filename: 'big.txt', content: Buffer.alloc(50 * 1024 * 1024 + 1, 'a') })
  t.equal(big.statusCode, 413)
  t.equal(big.json().code, 'PAYLOAD_TOO_LARGE')

  for (const [fields, why] of [
    [{ scope: 'galaxy' }, 'scope'], [{ tags: 'not json' }, 'tags'], [{ tags: '{"a":1}' }, 'tags object'],
    [{ tags: '[1,2]' }, 'tags numbers'],
    [{ chunkSize: '10' }, 'chunkSize small'], [{ chunkSize: '20001' }, 'chunkSize big'],
    [{ chunkSize: 'abc' }, 'chunkSize text'],
    [{ chunkSize: '100', chunkOverlap: '100' }, 'overlap = size'], [{ chunkOverlap: '-1' }, 'negative overlap'],
    [{ scope: 'workspace' }, 'workspace without id'], [{ scope: 'workspace', workspaceId: 'nope' }, 'bad workspace id']
  ] as Array<[Record<string, string>, string]>) {
    const res = await upload(app, u.auth, { filename: 'a.txt', content: 'hello there' }, fields)
    t.equal(res.statusCode, 400, why)
  }
  const stranger = await signup(app)
  t.equal((await upload(app, u.auth, { filename: 'a.txt', content: 'x' },
    { scope: 'workspace', workspaceId: stranger.workspaceId })).statusCode, 403)

  const unreadable = await upload(app, u.auth, { filename: 'broken.pdf', content: pdf.subarray(0, 500) })
  t.equal(unreadable.statusCode, 422)
  t.equal(unreadable.json().code, 'UNREADABLE_FILE')

  const eleven = multipart(Array.from({ length: 11 },
    (_, i) => ({ name: 'files', filename: `f${i}.txt`, content: `file ${i}` })))
  const tooMany = await app.inject({ method: 'POST', url: '/api/knowledge/upload/batch',
    headers: { ...u.auth, ...eleven.headers }, payload: eleven.payload })
  t.equal(tooMany.statusCode, 400)
  const two = multipart([{ filename: 'a.txt', content: 'a' }, { filename: 'b.txt', content: 'b' }])
  t.equal((await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...two.headers },
    payload: two.payload })).statusCode, 400, 'one file per single upload')

  const docs = (await app.inject({ url: '/api/knowledge/documents', headers: u.auth })).json()
  t.equal(docs.count, 0, 'no refused upload left a document')
  t.same(fs.readdirSync(path.join(app.config.dataDir, 'knowledge', 'originals')), [], 'nor a file')
  t.same(fs.readdirSync(path.join(app.config.dataDir, 'knowledge', 'tmp')), [])
})

t.test('batch: unreadable and hostile files fail alone; an unsupported type refuses the whole batch', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const body = multipart([
    { name: 'files', filename: 'good.txt', content: 'The albatross glides for hours.' },
    { name: 'files', filename: 'cut.pdf', content: pdf.subarray(0, Math.floor(pdf.length / 2)) },
    { name: 'files', filename: 'bomb.docx', content: docxBomb(300 * 1024 * 1024) },
    { name: 'files', filename: 'notes.docx', content: docx }
  ], { category: 'batch', tags: '["b"]' })
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/upload/batch',
    headers: { ...u.auth, ...body.headers }, payload: body.payload })
  t.equal(res.statusCode, 201)
  const r = res.json()
  t.equal(r.successCount, 2)
  t.equal(r.errorCount, 2)
  t.same(r.results.map((x: { fileName: string }) => x.fileName), ['good.txt', 'notes.docx'])
  t.ok(r.results.every((x: { scope: string }) => x.scope === 'organization'))
  t.same(r.errors.map((e: { fileName: string; code: string }) => [e.fileName, e.code]),
    [['cut.pdf', 'UNREADABLE_FILE'], ['bomb.docx', 'UNREADABLE_FILE']])
  t.match(r.errors[1].error, /expands to more than/)
  await app.jobs.idle()
  t.equal(ids(await search(app, u.auth, { query: 'albatross' })).length, 1)
  t.equal(ids(await search(app, u.auth, { query: 'Gentian flowers' })).length, 1)

  const mixed = multipart([
    { name: 'files', filename: 'ok.txt', content: 'would be fine' },
    { name: 'files', filename: 'evil.exe', content: 'MZ' }
  ])
  const refused = await app.inject({ method: 'POST', url: '/api/knowledge/upload/batch',
    headers: { ...u.auth, ...mixed.headers }, payload: mixed.payload })
  t.equal(refused.statusCode, 415)
  t.same(refused.json().supportedFormats.length > 30, true)
  t.equal((await app.inject({ url: '/api/knowledge/documents', headers: u.auth })).json().count, 2,
    'nothing of the refused batch was added')
})

t.test('tenants: another organization sees nothing; scopes and workspaces', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const owner = await signup(app)
  const colleague = await addUser(app, owner)
  const stranger = await signup(app)
  const ws2 = (await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: owner.auth,
    payload: { name: 'Private team' } })).json().data

  const orgDoc = await uploadOk(app, owner, { filename: 'org.txt', content: 'organization wide marmalade recipe' })
  const wsDoc = await uploadOk(app, owner, { filename: 'ws.txt', content: 'workspace only marmalade secret' },
    { scope: 'workspace', workspaceId: ws2.id })
  const personal = await uploadOk(app, owner, { filename: 'me.txt', content: 'personal marmalade diary' },
    { scope: 'personal' })

  // the stranger: 404 everywhere, and nothing in list, search or stats
  for (const id of [orgDoc.id, wsDoc.id, personal.id]) {
    for (const [method, url] of [['GET', `/api/knowledge/document/${id}`],
      ['GET', `/api/knowledge/document/${id}/download`],
      ['GET', `/api/knowledge/documents/${id}/status`], ['DELETE', `/api/knowledge/document/${id}`],
      ['GET', `/api/knowledge-graph/documents/${id}`], ['DELETE', `/api/knowledge-graph/documents/${id}`]] as const) {
      t.equal((await app.inject({ method, url, headers: stranger.auth })).statusCode, 404,
        `${method} ${url.replace(id, ':id')}`)
    }
  }
  t.equal((await app.inject({ url: '/api/knowledge/documents', headers: stranger.auth })).json().count, 0)
  t.same(ids(await search(app, stranger.auth, { query: 'marmalade' })), [])
  t.same(ids(await search(app, stranger.auth, { query: 'ma' })), [], 'nor by the short-query scan')
  t.equal((await app.inject({ url: '/api/knowledge/stats', headers: stranger.auth })).json().documentCount, 0)

  // the colleague: organization documents yes; another's personal no; a workspace only when a member
  const seen = async (user: TestUser) => ids(await search(app, user.auth, { query: 'marmalade' })).sort()
  t.same(await seen(colleague), [orgDoc.id])
  t.same(await seen(owner), [orgDoc.id, wsDoc.id, personal.id].sort())
  t.equal((await app.inject({ url: `/api/knowledge/document/${personal.id}`, headers: colleague.auth })).statusCode,
    404)
  t.equal((await app.inject({ url: `/api/knowledge/document/${wsDoc.id}`, headers: colleague.auth })).statusCode, 404)
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws2.id}/members`, headers: owner.auth,
    payload: { userId: colleague.userId, role: 'member' } })
  t.same(await seen(colleague), [orgDoc.id, wsDoc.id].sort(), 'membership opens the workspace documents')
  // with another workspace as context, ws2's documents are out of view
  const inFirst = await search(app, { ...owner.auth, 'x-workspace-id': owner.workspaceId }, { query: 'marmalade' })
  t.same(ids(inFirst).sort(), [orgDoc.id, personal.id].sort())
  const list = (await app.inject({ url: `/api/knowledge/documents?scope=workspace`, headers: colleague.auth })).json()
  t.same(list.documents.map((d: { id: string }) => d.id), [wsDoc.id])
  t.same(list.tenantContext, { customerId: owner.customerId, scope: 'workspace' })

  // delete rules: a member cannot delete the owner's organization document (404); an org admin can
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${orgDoc.id}`,
    headers: colleague.auth })).statusCode, 404)
  const admin = await addUser(app, owner, 'admin')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${orgDoc.id}`,
    headers: admin.auth })).statusCode, 200)
  // a workspace member cannot delete a workspace document; its workspace admin can
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${wsDoc.id}`,
    headers: colleague.auth })).statusCode, 404)
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws2.id}/members`, headers: owner.auth,
    payload: { userId: colleague.userId, role: 'admin' } })
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${wsDoc.id}`,
    headers: colleague.auth })).statusCode, 200)
  t.same(await seen(owner), [personal.id])
})

t.test('search: case, Unicode, short queries, FTS5 syntax, filters, limit, deletion', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const a = await uploadOk(app, u,
    { filename: 'fr.txt',
      content: 'Les élèves de l\'école primaire. Mot: NEAR(x y) "guillemets" -moins* col:on (par) ^début' },
    { category: 'french', tags: '["lang","fr"]' })
  const b = await uploadOk(app, u, { filename: 'en.txt', content: 'The Ecole Normale is a school. Q is for quince.' },
    { category: 'english', tags: '["lang","en"]' })
  const c = await uploadOk(app, u, { filename: 'misc.txt', content: 'Quince jam, QUINCE paste and quince tea.' },
    { scope: 'personal', tags: '["food"]' })
  const q = async (query: string, extra: Record<string,
    unknown> = {}) => ids(await search(app, u.auth, { query, ...extra })).sort()

  // substring mode: exactly the substring, case folded, accents kept
  t.same(await q('ÉCOLE', { mode: 'substring' }), [a.id], 'ÉCOLE finds école')
  t.same(await q('école', { mode: 'substring' }), [a.id])
  t.same(await q('ecole', { mode: 'substring' }), [b.id], 'accents are not ignored: ecole is another string')
  // hybrid (the default) adds the word matches, which fold diacritics; the exact substring ranks first
  const hybrid = (await search(app, u.auth, { query: 'ÉCOLE' })).json().results
  t.same(hybrid.map((r: { document: { id: string } }) => r.document.id), [a.id, b.id])
  t.same(hybrid.map((r: { matchedBy: string[] }) => r.matchedBy), [['substring', 'words'], ['words']])
  t.same(await q('QUINCE'), [b.id, c.id].sort())
  t.same(await q('Q'), [b.id, c.id].sort(), '1-character query')
  t.same(await q('é'), [a.id], '1 character, Unicode')
  t.same(await q('É'), [a.id], '1 character, Unicode, other case')
  t.same(await q('jA'), [c.id], '2-character query')
  t.same(await q('zz'), [])
  for (const special of ['NEAR(x y)', '"guillemets"', '-moins*', 'col:on', '(par)', '^début', '"', 'AND OR NOT', '*',
    '""']) {
    const res = await search(app, u.auth, { query: special })
    t.equal(res.statusCode, 200, `FTS5 syntax is literal: ${special}`)
  }
  t.same(await q('NEAR(x y)'), [a.id])
  t.same(await q('"guillemets"'), [a.id])
  t.same(await q('-moins*'), [a.id])
  t.same(await q('col:on'), [a.id])
  t.same(await q('AND OR NOT'), [])

  t.same(await q('quince', { scope: 'personal' }), [c.id])
  t.same(await q('quince', { category: 'english' }), [b.id])
  t.same(await q('quince', { tags: ['food', 'fr'] }), [c.id], 'any of the tags')
  t.same(await q('quince', { tags: ['nothing'] }), [])
  t.same(await q('q', { category: 'english' }), [b.id], 'filters apply to short queries too')

  const many = await uploadOk(app, u,
    { filename: 'many.txt',
      content: Array.from({ length: 40 }, (_, i) => `paragraph ${i} mentions zebra crossings.`).join('\n') },
    { chunkSize: '60', chunkOverlap: '0' })
  t.ok(many.chunkCount >= 20)
  const limited = await search(app, u.auth, { query: 'zebra', limit: 5 })
  t.equal(limited.json().count, 5)
  t.equal((await search(app, u.auth, { query: 'zebra' })).json().count, 10, 'default limit 10')
  t.equal((await search(app, u.auth, { query: 'ze', limit: 3 })).json().count, 3, 'short query stops at limit')
  const hit = limited.json().results[0]
  t.type(hit.score, 'number')
  t.match(hit.snippet, /<mark>zebra<\/mark>/)
  t.same(Object.keys(hit.document).sort(), ['category', 'fileName', 'fileType', 'id', 'scope', 'title'])
  t.same(Object.keys(hit.chunk).sort(), ['chunkIndex', 'headingPath', 'id', 'text'])

  for (const body of [{}, { query: '' }, { query: '   ' }, { query: 'x'.repeat(1001) }, { query: 'x', limit: 101 },
    { query: 'x', limit: 0 }, { query: 'x', scope: 'everywhere' }]) {
    t.equal((await search(app, u.auth, body)).statusCode, 400, JSON.stringify(body).slice(0, 40))
  }

  // deletion removes the passages
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${many.id}`,
    headers: u.auth })).statusCode, 200)
  t.same(await q('zebra'), [], 'gone from search at once')
  await app.jobs.idle()
  const left = app.sqlite.prepare('SELECT COUNT(*) AS n FROM knowledge_passages WHERE ' +
    'document_id = ?').get(many.id) as { n: number }
  t.equal(left.n, 0, 'passages purged')
  await trigramsCaughtUp(t, app)
  const fts = searching(t, app)[0].prepare(`SELECT COUNT(*) AS n FROM knowledge_passages_fts
    WHERE knowledge_passages_fts MATCH '"zebra"'`).get() as { n: number }
  t.equal(fts.n, 0, 'and out of the index')
  t.equal((await app.inject({ url: `/api/knowledge/document/${many.id}`, headers: u.auth })).statusCode, 404)
})

t.test('API keys: capabilities and workspace-bound keys', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const doc = await uploadOk(app, u, { filename: 'k.txt', content: 'capability check document' })
  const reader = await createKey(app, u, ['knowledge:read'])
  const writer = await createKey(app, u, ['knowledge:write'])
  const general = await createKey(app, u, ['read', 'write'])
  const h = (k: { key: string }) => ({ 'x-api-key': k.key })

  t.equal((await search(app, h(reader), { query: 'capability' })).statusCode, 200)
  t.equal((await app.inject({ url: '/api/knowledge/documents', headers: h(reader) })).statusCode, 200)
  t.equal((await app.inject({ url: `/api/knowledge/document/${doc.id}/download`, headers: h(reader) })).statusCode, 200)
  t.equal((await app.inject({ method: 'HEAD', url: `/api/knowledge-graph/documents/${doc.id}`,
    headers: h(reader) })).statusCode, 200)
  t.equal((await upload(app, h(reader), { filename: 'x.txt', content: 'x' })).statusCode, 403,
    'knowledge:read cannot upload')
  t.equal((await search(app, h(writer), { query: 'capability' })).statusCode, 403, 'knowledge:write cannot search')
  t.equal((await upload(app, h(writer), { filename: 'x.txt', content: 'written by key' })).statusCode, 201)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${doc.id}`,
    headers: h(general) })).statusCode, 403, 'not in the table')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge-graph/documents/${doc.id}`,
    headers: h(reader) })).statusCode, 403)
  const kg = await app.inject({ url: `/api/knowledge-graph/documents/${doc.id}`, headers: h(general) })
  t.equal(kg.statusCode, 200)
  t.equal(kg.json().data.id, doc.id)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge-graph/documents/${doc.id}`,
    headers: h(general) })).statusCode, 200)
  t.equal((await app.inject({ url: `/api/knowledge-graph/documents/${doc.id}`, headers: h(general) })).statusCode, 404)

  const bound = await createKey(app, u, ['knowledge:write', 'knowledge:read'], { workspaceId: u.workspaceId })
  t.equal((await upload(app, h(bound), { filename: 'o.txt', content: 'x' })).statusCode, 201,
    'no scope: its workspace')
  t.equal((await upload(app, h(bound), { filename: 'o.txt', content: 'x' }, { scope: 'organization' })).statusCode, 403)
  const other = (await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: u.auth,
    payload: { name: 'Other' } })).json().data
  t.equal((await upload(app, h(bound), { filename: 'o.txt', content: 'x' },
    { scope: 'workspace', workspaceId: other.id })).statusCode, 403)
  const wsRes = await upload(app, h(bound), { filename: 'w.txt', content: 'bound key workspace doc' },
    { scope: 'workspace' })
  t.equal(wsRes.statusCode, 201)
  t.equal((await upload(app, h(bound), { filename: 'p.txt', content: 'bound key personal doc' },
    { scope: 'personal' })).statusCode, 201)
  await app.jobs.idle()
  const got = (await app.inject({ url: `/api/knowledge/document/${wsRes.json().document.id}`, headers: u.auth })).json()
  t.equal(got.document.workspaceId, u.workspaceId)
})

t.test('indexing resumes from where it stopped', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const text = Array.from({ length: 2000 }, (_, i) => `line ${i} of the long manuscript.`).join('\n')
  const doc = await uploadOk(app, u, { filename: 'long.txt', content: text }, { chunkSize: '100', chunkOverlap: '10' })
  const expected = doc.chunkCount
  // as if the process died after 100 passages
  app.sqlite.prepare('DELETE FROM knowledge_passages WHERE document_id = ? AND chunk_index >= 100').run(doc.id)
  app.sqlite.prepare(`UPDATE knowledge_documents SET indexed_count = 100, status = 'processing'
    WHERE id = ?`).run(doc.id)
  const mid = (await app.inject({ url: `/api/knowledge/documents/${doc.id}/status`, headers: u.auth })).json()
  t.equal(mid.status, 'processing')
  t.equal(mid.processingProgress, Math.floor((100 / expected) * 100))
  app.jobs.enqueue('knowledge.index', { documentId: doc.id })
  await app.jobs.idle()
  const rows = app.sqlite.prepare('SELECT chunk_index FROM knowledge_passages WHERE document_id = ? ORDER ' +
    'BY chunk_index').all(doc.id) as Array<{ chunk_index: number }>
  t.equal(rows.length, expected)
  t.same(rows.map((r) => r.chunk_index), [...Array(expected).keys()], 'no gaps, no duplicates')
  t.equal((await app.inject({ url: `/api/knowledge/documents/${doc.id}/status`, headers: u.auth })).json().status,
    'indexed')
})

t.test('health is public and unlimited; the group is limited to 30 per minute', async (t) => {
  const app = await build(t,
    { config: { rateLimits: { knowledge: 30, voiceNotes: 100, artifacts: 120, default: 600 } } })
  const u = await signup(app)
  const health = await app.inject({ url: '/api/knowledge/health' })
  t.equal(health.statusCode, 200)
  t.match(health.json(), { status: 'healthy', service: 'knowledge', version: /\d/ })
  t.ok(health.json().supportedFormats.includes('.md'))
  for (let i = 0; i < 30; i++) t.equal((await app.inject({ url: '/api/knowledge/stats', headers: u.auth })).statusCode,
    200)
  const limited = await app.inject({ url: '/api/knowledge/documents', headers: u.auth })
  t.equal(limited.statusCode, 429)
  t.ok(limited.headers['retry-after'])
  for (let i = 0; i < 5; i++) t.equal((await app.inject({ url: '/api/knowledge/health' })).statusCode, 200)
})

t.test('ranking: more occurrences first, then the newest document', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const once = await uploadOk(app, u,
    { filename: 'once.txt', content: 'A walrus rests on the ice floe near the shore today.' })
  const thrice = await uploadOk(app, u,
    { filename: 'thrice.txt', content: 'Walrus, walrus and one more WALRUS on the ice floe.' })
  const newer = await uploadOk(app, u,
    { filename: 'newer.txt', content: 'A walrus rests on the ice floe near the shore today.' })
  const res = (await search(app, u.auth, { query: 'walrus' })).json()
  t.same(res.results.map((r: { document: { id: string } }) => r.document.id), [thrice.id, newer.id, once.id])
  t.ok(res.results[0].score > res.results[1].score)
  t.equal(res.results[1].score, res.results[2].score, 'same text, same score: the newer document wins the tie')
})

t.test('multipart handling is paid by the upload routes only', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  // printRoutes lists each route's hooks: @fastify/multipart adds an onRequest and an onResponse hook to its context
  const routes = app.printRoutes({ includeHooks: true, commonPrefix: false }).split('\n')
  const hooks = (route: string, kind: string) => {
    const at = routes.findIndex((l) => l.includes(`${route} (`))
    const line = routes.slice(at + 1).find((l) => l.includes(`(${kind})`) || /\((GET|POST|HEAD|DELETE)\)/.test(l))
    return line?.includes(`(${kind})`) ? (JSON.parse(line.slice(line.indexOf('['))) as string[]).length : 0
  }
  t.equal(hooks('/api/knowledge/documents', 'onRequest'), hooks('/api/v2/auth/me', 'onRequest'))
  t.equal(hooks('/api/knowledge/documents', 'onResponse'), hooks('/api/v2/auth/me', 'onResponse'))
  t.equal(hooks('/api/knowledge/upload', 'onRequest'), hooks('/api/v2/auth/me', 'onRequest') + 1)
  // a multipart body sent to another knowledge route is still refused by that route's schema (400), not as an
  // unknown media type (415)
  const body = multipart([{ filename: 'a.txt', content: 'x' }], {})
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: { ...u.auth, ...body.headers },
    payload: body.payload })
  t.equal(res.statusCode, 400)
  const ok = await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...body.headers },
    payload: body.payload })
  t.equal(ok.statusCode, 201)
})
