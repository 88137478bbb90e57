import t from 'tap'
import { build, signup, tempDir, uploadDocument, type TestUser } from '../helper.js'
import { fakeEmbeddings, type FakeEmbeddings } from '../fake-embeddings.js'
import type { App } from '../../src/app.js'
import type { Config } from '../../src/config.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }
const embedConfig = (fake: FakeEmbeddings, model = 'fake-small'): Partial<Config> =>
  ({ rateLimits: NO_LIMITS,
    embeddings: { baseUrl: fake.url, apiKey: 'sk-embed-test', model, batchSize: 2, pollMs: 20 } })

const embeddedCount = (app: App) => (app.sqlite.prepare(`SELECT COUNT(*) AS n
  FROM knowledge_vectors`).get() as { n: number }).n
const passageCount = (app: App) => (app.sqlite.prepare(`SELECT COUNT(*) AS n
  FROM knowledge_passages`).get() as { n: number }).n

/** Until every passage has its vector (the job retries with backoff, so this waits for the condition). */
async function embedded(app: App, expected = () => passageCount(app)) {
  for (;;) {
    app.knowledgeEmbeddings!.kick()
    await app.jobs.idle()
    const has = app.sqlite.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'knowledge_vectors'`).get()
    const gone = (app.sqlite.prepare(`SELECT COUNT(*) AS n FROM knowledge_vector_deletes`).get() as { n: number }).n
    if (has && gone === 0 && embeddedCount(app) === expected()) return
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function search(app: App, user: TestUser, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/api/knowledge/search', headers: user.auth, payload: body })
}
const names = (res: { json(): { results: Array<{ document: { fileName: string } }> } }) =>
  res.json().results.map((r) => r.document.fileName)

t.test('semantic search finds meaning the words miss, under the read rules, and joins hybrid', async (t) => {
  const fake = await fakeEmbeddings(t)
  const app = await build(t, { config: embedConfig(fake) })
  const u = await signup(app)
  const stranger = await signup(app)
  await uploadDocument(app, u, { filename: 'garage.txt', content: 'Park the automobile in the garage overnight.' },
    { category: 'home' })
  await uploadDocument(app, u, { filename: 'pets.txt', content: 'The puppy sleeps in a basket.' },
    { scope: 'personal' })
  await uploadDocument(app, stranger, { filename: 'theirs.txt', content: 'Their automobile is red.' })
  await embedded(app)
  t.ok(fake.requests.every((r) => r.model === 'fake-small' && r.authorization === 'Bearer sk-embed-test'),
    'model and key sent')
  t.ok(fake.requests.every((r) => r.input.length <= 2), 'batches of batchSize')

  t.same(names(await search(app, u, { query: 'where is my car', mode: 'words' })), [], 'no word in common')
  const sem = await search(app, u, { query: 'where is my car', mode: 'semantic', limit: 1 })
  t.equal(sem.statusCode, 200)
  t.same(names(sem), ['garage.txt'])
  t.same(sem.json().results[0].matchedBy, ['semantic'])
  t.ok(sem.json().results[0].score > 0 && sem.json().results[0].score <= 1)
  const hybrid = (await search(app, u, { query: 'car' })).json().results
  t.equal(hybrid[0].document.fileName, 'garage.txt')
  t.same(hybrid[0].matchedBy, ['semantic'])

  // read rules and filters
  t.same(names(await search(app, stranger, { query: 'car', mode: 'semantic', limit: 5 })), ['theirs.txt'],
    'another organization sees only its own')
  t.same(names(await search(app, u, { query: 'dog', mode: 'semantic', limit: 5, scope: 'personal' })), ['pets.txt'])
  t.same(names(await search(app, u, { query: 'car', mode: 'semantic', limit: 5, category: 'home' })), ['garage.txt'])
  t.same(names(await search(app, u, { query: 'car', mode: 'semantic', limit: 5, category: 'nothing' })), [])

  // deleted passages lose their vectors
  const docs = (await app.inject({ url: '/api/knowledge/documents',
    headers: u.auth })).json().documents as Array<{ id: string; fileName: string }>
  await app.inject({ method: 'DELETE',
    url: `/api/knowledge/document/${docs.find((d) => d.fileName === 'garage.txt')!.id}`, headers: u.auth })
  t.notOk(names(await search(app, u, { query: 'car', mode: 'semantic', limit: 5 })).includes('garage.txt'),
    'gone at once')
  await embedded(app)
  t.equal(embeddedCount(app), passageCount(app), 'vectors of purged passages removed')
})

t.test('the embedding server failing: retried with backoff; uploads and hybrid never wait on it', async (t) => {
  const fake = await fakeEmbeddings(t)
  fake.failNext = 2
  const app = await build(t, { config: embedConfig(fake) })
  const u = await signup(app)
  await uploadDocument(app, u, { filename: 'garage.txt', content: 'Park the automobile in the garage overnight.' })
  t.same(names(await search(app, u, { query: 'automobile garage', mode: 'words' })), ['garage.txt'],
    'searchable by words before any vector')
  await embedded(app)
  t.ok(fake.requests.length >= 3, 'failed requests were retried')
  t.same(names(await search(app, u, { query: 'car', mode: 'semantic' })), ['garage.txt'])

  await fake.close()
  const hybrid = await search(app, u, { query: 'automobile' })
  t.equal(hybrid.statusCode, 200, 'hybrid answers without its semantic vote')
  t.same(names(hybrid), ['garage.txt'])
  t.same(hybrid.json().warnings?.map((w: { code: string }) => w.code), ['EMBEDDINGS_UNAVAILABLE'],
    'and says it has none')
  const sem = await search(app, u, { query: 'car', mode: 'semantic' })
  t.equal(sem.statusCode, 502)
  t.equal(sem.json().code, 'EMBEDDINGS_UNAVAILABLE')
})

t.test('back-fill after configuring, and a model change embeds everything again', async (t) => {
  const fake = await fakeEmbeddings(t, { 'fake-small': 1024, 'fake-large': 1536 })
  const dataDir = tempDir(t)
  let app = await build(t, { dataDir, config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  await uploadDocument(app, u, { filename: 'garage.txt', content: 'Park the automobile in the garage overnight.' })
  await uploadDocument(app, u,
    { filename: 'long.txt', content: Array.from({ length: 30 }, (_, i) => `Line ${i}: the hound sleeps.`).join('\n') },
    { chunkSize: '100', chunkOverlap: '0' })
  t.equal((await search(app, u, { query: 'car', mode: 'semantic' })).json().code, 'EMBEDDINGS_NOT_CONFIGURED')
  await app.close()

  app = await build(t, { dataDir, config: embedConfig(fake) })
  await embedded(app)
  t.ok(passageCount(app) > 3)
  t.same(names(await search(app, u, { query: 'car', mode: 'semantic', limit: 1 })), ['garage.txt'],
    'existing passages back-filled')
  await app.close()

  const before = fake.requests.length
  app = await build(t, { dataDir, config: embedConfig(fake, 'fake-large') })
  await embedded(app)
  const state = app.sqlite.prepare(`SELECT model, dimensions FROM knowledge_embedding_state`).get()
  t.same(state, { model: 'fake-large', dimensions: 1536 })
  const again = fake.requests.slice(before).filter((r) => r.model === 'fake-large').flatMap((r) => r.input)
  t.ok(again.length >= passageCount(app), 'every passage embedded again with the new model')
  t.same(names(await search(app, u, { query: 'puppy dog', mode: 'semantic', limit: 1 })), ['long.txt'])
})

t.test('an embedding server that cannot be reached from the start: semantic 502, hybrid with a warning', async (t) => {
  // a port that was listening and is closed: nothing answers there
  const fake = await fakeEmbeddings(t)
  await fake.close()
  // the passage written first (an upload waits for the job queue, where embedding would retry for ever)
  const dataDir = tempDir(t)
  const before = await build(t, { dataDir, config: { rateLimits: NO_LIMITS } })
  const u = await signup(before)
  await uploadDocument(before, u, { filename: 'garage.txt', content: 'Park the automobile in the garage overnight.' })
  await before.close()
  const app = await build(t, { dataDir, config: embedConfig(fake) })
  const sem = await search(app, u, { query: 'car', mode: 'semantic' })
  t.equal(sem.statusCode, 502, 'not an empty answer: no vector was ever made, and the server is down')
  t.equal(sem.json().code, 'EMBEDDINGS_UNAVAILABLE')
  t.match(sem.json().message, /cannot be reached/)
  // the embedding server's address is the operator's: the log has it, answers to callers do not
  const host = new URL(fake.url).host
  t.notOk(sem.body.includes(host), 'no internal address in the 502')
  const hybrid = await search(app, u, { query: 'automobile garage' })
  t.equal(hybrid.statusCode, 200)
  t.notOk(hybrid.body.includes(host), 'no internal address in the warning')
  t.same(names(hybrid), ['garage.txt'], 'words and substring still answer')
  t.same(hybrid.json().warnings?.map((w: { code: string }) => w.code), ['EMBEDDINGS_UNAVAILABLE'])
  const unified = await app.inject({ method: 'POST', url: '/api/v2/search', headers: u.auth,
    payload: { query: 'automobile garage' } })
  t.equal(unified.statusCode, 200, 'unified search answers too')
  t.same(unified.json().warnings?.map((w: { code: string }) => w.code), ['EMBEDDINGS_UNAVAILABLE'])
  const words = await search(app, u, { query: 'automobile', mode: 'words' })
  t.equal(words.json().warnings, undefined, 'a mode without embeddings has nothing to warn of')
  t.same(names(words), ['garage.txt'])
})
