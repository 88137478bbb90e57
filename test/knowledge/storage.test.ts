import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { build, signup, multipart, type TestUser, type FilePart } from '../helper.js'
import { fillDatabase, freeDatabase } from '../db/fill-disk.js'
import type { App } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { malformedOr, toErrorBody } from '../../src/http/errors.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

async function upload(app: App, user: TestUser, file: FilePart, fields: Record<string, string> = {}) {
  const body = multipart([file], fields)
  return app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...user.auth, ...body.headers },
    payload: body.payload })
}

async function batch(app: App, user: TestUser, files: FilePart[], fields: Record<string, string> = {}) {
  const body = multipart(files.map((f) => ({ ...f, name: 'files' })), fields)
  return app.inject({ method: 'POST', url: '/api/knowledge/upload/batch', headers: { ...user.auth, ...body.headers },
    payload: body.payload })
}

const text = (bytes: number, word = 'budget ') => word.repeat(Math.ceil(bytes / word.length)).slice(0, bytes)
const filesIn = (app: App, dir: string) => fs.readdirSync(path.join(app.config.dataDir, 'knowledge', dir)).length
/**
 * fields whose record takes more than the room left in a page (50 tags of 100 characters): on a full disk it needs a
 * page that cannot be added (a small row may still fit in a page the database has)
 */
const bulky = { tags: JSON.stringify(Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(100, 'x'))) }
const documents = (app: App) => app.sqlite.prepare('SELECT count(*) FROM knowledge_documents').pluck().get()

t.test('an upload on a full disk answers 507 INSUFFICIENT_STORAGE, leaves nothing behind, and reads go on',
  async (t) => {
    const app = await build(t, { config: { rateLimits: NO_LIMITS } })
    const u = await signup(app)
    t.equal((await upload(app, u, { filename: 'first.txt', content: text(2000) })).statusCode, 201)
    await app.jobs.idle()
    fillDatabase(app.sqlite)

    const res = await upload(app, u, { filename: 'second.txt', content: text(3000, 'report ') }, bulky)
    t.equal(res.statusCode, 507, 'before: 500 Internal Server Error')
    t.match(res.json(), { success: false, statusCode: 507, error: 'Insufficient Storage', code: 'INSUFFICIENT_STORAGE',
      message: /out of storage space/ })
    t.equal(documents(app), 1, 'no document recorded')
    t.same([filesIn(app, 'originals'), filesIn(app, 'text'), filesIn(app, 'tmp')], [1, 1, 0],
      'the refused upload left no file')

    const listed = await app.inject({ url: '/api/knowledge/documents', headers: u.auth })
    t.equal(listed.statusCode, 200, 'reads keep working')
    t.equal(listed.json().documents.length, 1)
    const searched = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: u.auth,
      payload: { query: 'budget' } })
    t.equal(searched.statusCode, 200)
    t.ok(searched.json().count > 0, 'search finds the stored document')

    const some = await batch(app, u, [{ filename: 'a.txt', content: text(500) }], bulky)
    t.equal(some.statusCode, 201)
    t.same(some.json().errors.map((e: { code: string }) => e.code), ['INSUFFICIENT_STORAGE'],
      'a batch names the full disk per file')

    freeDatabase(app.sqlite)
    t.equal((await upload(app, u, { filename: 'second.txt', content: text(3000, 'report ') }, bulky)).statusCode, 201,
      'once there is space, the same upload goes through')
  })

t.test('stored bytes are counted per organization: past the quota an upload answers 413 QUOTA_EXCEEDED, and a ' +
  'deletion makes room', async (t) => {
  const quotas: Config['quotas'] = { storedBytes: 10_000, passages: 0, developerLogBytes: 0, runs: 0 }
  const app = await build(t, { config: { rateLimits: NO_LIMITS, quotas } })
  const a = await signup(app)
  const b = await signup(app)
  // a document counts its upload and its text: 4000 + 4000
  const first = await upload(app, a, { filename: 'one.txt', content: text(4000) })
  t.equal(first.statusCode, 201)
  const over = await upload(app, a, { filename: 'two.txt', content: text(1500) })
  t.equal(over.statusCode, 413)
  t.match(over.json(), { code: 'QUOTA_EXCEEDED', quota: 'storedBytes', limit: 10_000, used: 8000 })
  const huge = await upload(app, a, { filename: 'huge.txt', content: text(20_000) })
  t.match(huge.json(), { statusCode: 413, code: 'QUOTA_EXCEEDED' }, 'a file larger than the room left: refused too')
  t.same([documents(app), filesIn(app, 'originals'), filesIn(app, 'tmp')], [1, 1, 0], 'nothing kept of either')

  t.equal((await upload(app, b, { filename: 'one.txt', content: text(4000) })).statusCode, 201,
    'another organization has a quota of its own')
  const some = await batch(app, b,
    [{ filename: 'x.txt', content: text(500) }, { filename: 'y.txt', content: text(2000) }])
  t.same(some.json().errors.map((e: { fileName: string; code: string }) => [e.fileName, e.code]),
    [['y.txt', 'QUOTA_EXCEEDED']], 'a batch names the file past the quota')

  const id = first.json().document.id
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${id}`, headers: a.auth })).statusCode,
    200)
  t.equal((await upload(app, a, { filename: 'two.txt', content: text(1500) })).statusCode, 201,
    'a deleted document no longer counts')
})

t.test('passages are counted per organization: an upload that would pass the quota answers 413', async (t) => {
  const quotas: Config['quotas'] = { storedBytes: 0, passages: 12, developerLogBytes: 0, runs: 0 }
  const app = await build(t, { config: { rateLimits: NO_LIMITS, quotas } })
  const u = await signup(app)
  const fields = { chunkSize: '100', chunkOverlap: '0' }
  const ok = await upload(app, u, { filename: 'a.txt', content: text(1000) }, fields)
  const used = ok.json().document.chunkCount as number
  t.ok(used >= 10 && used < 12, `${used} passages stored`)
  const over = await upload(app, u, { filename: 'b.txt', content: text(300) }, fields)
  t.match(over.json(), { statusCode: 413, code: 'QUOTA_EXCEEDED', quota: 'passages', limit: 12, used })
  t.equal((await upload(app, u, { filename: 'c.txt', content: text(60) }, fields)).statusCode, 201,
    'what still fits goes in')
})

t.test('quotas are read from the environment: generous by default, 0 for unlimited', async (t) => {
  t.same(loadConfig({}).quotas,
    { storedBytes: 20480 * 1048576, passages: 10_000_000, developerLogBytes: 1024 * 1048576, runs: 10_000 })
  t.same(loadConfig({ CAIRN_QUOTA_STORAGE_MB: '0', CAIRN_QUOTA_PASSAGES: '500', CAIRN_QUOTA_DEVELOPER_LOG_MB: '2',
    CAIRN_QUOTA_RUNS: '0' }).quotas, { storedBytes: 0, passages: 500, developerLogBytes: 2 * 1048576, runs: 0 })
})

t.test('a file write that finds no space (ENOSPC) while an upload is received answers 507 too', async (t) => {
  const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 })
  const passed = malformedOr(enospc)
  t.equal(passed, enospc, 'the multipart reader passes a system error through (not a 400 of the client)')
  t.match(toErrorBody(passed as Error),
    { statusCode: 507, code: 'INSUFFICIENT_STORAGE', error: 'Insufficient Storage' })
  // an error that crossed a thread boundary keeps only its message
  t.equal(toErrorBody(new Error('database or disk is full')).statusCode, 507)
  t.equal(toErrorBody(new Error('something else')).statusCode, 500)
})
