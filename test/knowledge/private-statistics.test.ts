import t from 'tap'
import { build, searching, signup, uploadDocument, type TestUser } from '../helper.js'
import { createSearch } from '../../src/knowledge/search.js'
import type { SearchSettingsOverrides } from '../../src/knowledge/search-settings.js'

// Ranking counts only what the caller reads (docs/design/knowledge-search.md, "Tenant-private statistics"): another
// organization's uploads change neither a caller's results nor their scores, on every words path.

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }
const QUERIES = ['harbour crane', 'crane', 'night shift harbour lights', 'the gate', 'inspection of the crane cable',
  'weekly harbour report', 'zebra report', 'zebra crane cable']
const paths: Array<[string, SearchSettingsOverrides | undefined]> = [
  ['every match ranked', undefined],
  // few postings read per term: common words take the bounded path, their document frequency estimated
  ['the bounded path', { words: { exactPostings: 0, postingsPerTerm: 4, probe: 2, rescore: 3 } }]
]

for (const [name, searchSettings] of paths) {
  t.test(`${name}: another organization's uploads change neither results nor scores`, async (t) => {
    const app = await build(t, { config: { rateLimits: NO_LIMITS, searchSettings } })
    const a = await signup(app)
    const b = await signup(app)
    const small = { chunkSize: '80', chunkOverlap: '0' }
    const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join('\n\n')
    await uploadDocument(app, a, { filename: 'runbook.txt', content: lines(12, (i) =>
      `Step ${i}: the harbour crane ${i % 3 === 0 ? 'cable' : 'gate'} is checked${i % 4 === 0 ? ' at night' : ''}.`) },
    small)
    await uploadDocument(app, a, { filename: 'report.md', content: lines(6, (i) =>
      `Weekly harbour report ${i}: ${i % 2 ? 'the lights of the night shift' : 'crane inspection, the cable'}.`) },
    small)
    await uploadDocument(app, a, { filename: 'gate.txt', content: 'The gate. The gate is shut at night. Gate gate.' })
    // a word rare for the caller, met with common ones
    await uploadDocument(app, a, { filename: 'zebra.txt', content: lines(6, (i) =>
      `Zebra ${i % 2 ? 'report' : 'note'}: the crane ${i % 3 ? 'gate' : 'cable'} was checked.`) }, small)
    // a personal document of the caller's: in what they read, and in their figures
    await uploadDocument(app, a, { filename: 'mine.txt', content: 'My crane notes: the crane cable, the crane.' },
      { scope: 'personal' })

    const search = async (user: TestUser, query: string, mode: string) => {
      const res = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: user.auth,
        payload: { query, mode, limit: 20 } })
      t.equal(res.statusCode, 200, `${mode} "${query}"`)
      return (res.json().results as Array<{ document: { id: string }; chunk: { chunkIndex: number }; score: number }>)
        .map((r) => [r.document.id, r.chunk.chunkIndex, r.score])
    }
    const answers = async () => {
      const all: unknown[] = []
      for (const q of QUERIES) for (const mode of ['words', 'hybrid']) all.push(await search(a, q, mode))
      return all
    }
    const before = await answers()
    t.ok(before.filter((r) => (r as unknown[]).length > 0).length >= 10, 'the queries find passages')

    // the other organization: many more passages, the same words in other proportions, some found nowhere else
    for (let d = 0; d < 4; d++) {
      await uploadDocument(app, b, { filename: `other-${d}.txt`, content: lines(30, (i) =>
        `${i % 2 ? 'Crane crane crane' : 'Harbour'} ledger ${d}-${i}: gate ${i % 5 ? 'lights' : 'cable report'} ` +
        'weekly night shift inspection.') }, small)
    }
    await uploadDocument(app, b, { filename: 'zebra.txt', content: lines(8, (i) =>
      `Zebra report ${i}: the harbour crane cable, inspection at night.`) }, small)
    await uploadDocument(app, b, { filename: 'long.txt',
      content: 'harbour crane '.repeat(400) }, { chunkSize: '2000', chunkOverlap: '0' })
    t.not(JSON.stringify(await search(b, 'harbour crane', 'words')), '[]', 'the other organization finds its own')

    t.same(await answers(), before, 'the same passages, in the same order, with the same scores')
  })
}

t.test('a common word is sought where the caller\'s rare words are, among the caller\'s passages only', async (t) => {
  // "report" is common for the caller (more postings than are read), "zebra" rare: the passages holding both are found
  // by seeking "report" at the newest meetings with "zebra" — three of them here — which another organization's
  // newer "zebra report" passages must not take
  const searchSettings = { words: { exactPostings: 0, postingsPerTerm: 20, probe: 5, rescore: 3, seekMeetings: 3 } }
  const app = await build(t, { config: { rateLimits: NO_LIMITS, searchSettings } })
  const a = await signup(app)
  const b = await signup(app)
  const small = { chunkSize: '80', chunkOverlap: '0' }
  const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i).padEnd(70, '.'))
    .join('\n\n')
  await uploadDocument(app, a, { filename: 'a.txt', content: lines(60, (i) => i % 6 === 0
    ? (i <= 12 ? `Zebra report number ${i} here` : `Zebra sighting ${i} by the river`) : `Weekly report ${i} filed`) },
  small)
  const top = async () => (await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: a.auth,
    payload: { query: 'zebra report', mode: 'words', limit: 3 } })).json().results
    .map((r: { chunk: { text: string }; score: number }) => [r.chunk.text, r.score])
  const before = await top()
  t.same(before.map((r: string[]) => /Zebra report number (\d+)/.exec(r[0])?.[1]).sort(), ['0', '12', '6'],
    'the caller\'s passages holding both words')
  await uploadDocument(app, b, { filename: 'b.txt', content: lines(5, (i) => `Zebra report ${i} of another org`) },
    small)
  t.same(await top(), before, 'the same after another organization wrote newer ones')
})

t.test('a deleted document\'s passages stop counting in the caller\'s figures once they leave the index', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  const b = await signup(app)
  await uploadDocument(app, a, { filename: 'keep.txt', content: 'The harbour crane is checked weekly.' })
  const gone = await uploadDocument(app, a, { filename: 'gone.txt',
    content: Array.from({ length: 30 }, (_, i) => `Crane log ${i}: crane crane, a long line of crane notes.`)
      .join('\n\n') }, { chunkSize: '60', chunkOverlap: '0' })
  await uploadDocument(app, b, { filename: 'theirs.txt', content: 'Their crane.' })
  const version = (customerId: string) => app.sqlite.prepare(`SELECT version FROM knowledge_listing_versions
    WHERE customer_id = ?`).pluck().get(customerId) as number
  const search = async () => (await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: a.auth,
    payload: { query: 'harbour crane', mode: 'words' } })).json().results.map((r: { score: number }) => r.score)
  await search()
  const theirs = version(b.customerId)
  const before = version(a.customerId)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${gone.id}`, headers: a.auth }))
    .statusCode, 200)
  await app.jobs.idle()
  t.equal(app.sqlite.prepare('SELECT count(*) FROM knowledge_passages WHERE document_id = ?').pluck().get(gone.id), 0)
  // once by the document's delete, once more when its passages are gone (whenever the purge ran)
  t.equal(version(a.customerId), before + 2, 'the organization\'s version is raised again when the passages are gone')
  t.equal(version(b.customerId), theirs, 'not another organization\'s')
  const scores = await search()
  t.equal(scores.length, 1)
  // the same figures as a search worker that never saw the document
  const fresh = createSearch(...searching(t, app))
  const reader = { customerId: a.customerId, userId: a.userId, workspaceIds: [a.workspaceId] }
  t.same(scores, (await fresh.search(reader, {}, 'harbour crane', 10, 'words')).map((h) => h.score))
})
