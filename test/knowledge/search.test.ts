import t from 'tap'
import { passageWriter } from '../../src/knowledge/passages.js'
import { build, signup, addUser, uploadDocument, type TestUser, searching } from '../helper.js'
import type { App } from '../../src/app.js'
import { readableParams, readableWhere } from '../../src/knowledge/readers.js'
import { createSearch, type SearchHit } from '../../src/knowledge/search.js'
import { cutLevel, intersects, mergePostings, topEntries } from '../../src/knowledge/word-ranking.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

interface Result { document: { id: string; fileName: string }; chunk: { text: string }; score: number; snippet: string;
  matchedBy: string[] }
async function search(app: App, user: TestUser, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/api/knowledge/search', headers: user.auth, payload: body })
}
async function results(app: App, user: TestUser, body: Record<string, unknown>): Promise<Result[]> {
  const res = await search(app, user, body)
  if (res.statusCode !== 200) throw new Error(`search failed: ${res.statusCode} ${res.body}`)
  return res.json().results
}
const names = (rs: Result[]) => rs.map((r) => r.document.fileName)
/** an organization's owner, a colleague outside its second workspace (`ws2`), and another organization's owner */
async function organizations(t: Parameters<typeof build>[0]) {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const owner = await signup(app)
  const mate = await addUser(app, owner)
  const stranger = await signup(app)
  const ws2 = (await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: owner.auth,
    payload: { name: 'Team' } })).json().data as { id: string }
  return { app, owner, mate, stranger, ws2 }
}

t.test('modes: a question finds the passage that answers it; substring stays literal', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  await uploadDocument(app, u,
    { filename: 'handbook.txt', content: 'Employees receive sixteen weeks of parental leave at full pay.' })
  await uploadDocument(app, u,
    { filename: 'travel.txt', content: 'Travel expenses are reimbursed within thirty days of the trip.' })
  await uploadDocument(app, u, { filename: 'école.txt', content: 'Les élèves de l\'école arrivent à huit heures.' })

  const question = 'How many weeks of parental leave do employees get?'
  t.same(await results(app, u, { query: question, mode: 'substring' }), [],
    'the question is not a substring of anything')
  const words = await results(app, u, { query: question, mode: 'words' })
  t.same(names(words), ['handbook.txt'])
  t.same(words[0].matchedBy, ['words'])
  t.ok(words[0].score > 0)
  t.match(words[0].snippet, /<mark>weeks<\/mark> of <mark>parental<\/mark> <mark>leave<\/mark>/)
  const hybrid = await results(app, u, { query: question })
  t.same(names(hybrid), ['handbook.txt'], 'hybrid is the default')
  t.same(hybrid[0].matchedBy, ['words'])

  // stemming: "reimburse" finds "reimbursed"; words are OR-matched
  t.same(names(await results(app, u, { query: 'reimburse', mode: 'words' })), ['travel.txt'])
  t.same(names(await results(app, u, { query: 'trip leave', mode: 'words' })).sort(), ['handbook.txt', 'travel.txt'])
  // non-English words match themselves, diacritics folded
  t.same(names(await results(app, u, { query: 'eleves ecole', mode: 'words' })), ['école.txt'])
  t.same(names(await results(app, u, { query: 'élèves', mode: 'words' })), ['école.txt'])
  // stop words alone find nothing; FTS5 syntax is never interpreted
  t.same(await results(app, u, { query: 'what is the', mode: 'words' }), [])
  for (const q of ['NEAR(a b)', '"', 'leave*', 'text:leave', 'AND OR NOT', '{readers}: x', '-leave']) {
    t.equal((await search(app, u, { query: q, mode: 'words' })).statusCode, 200, q)
    t.equal((await search(app, u, { query: q })).statusCode, 200, q)
  }
  t.same(names(await results(app, u, { query: 'text:leave', mode: 'words' })), [],
    'a colon joins its words into a phrase')

  // every substring match stays a hybrid candidate, even inside a word
  const fragment = await results(app, u, { query: 'mbursed withi' })
  t.same(names(fragment), ['travel.txt'])
  t.same(fragment[0].matchedBy, ['substring'])
  t.match(fragment[0].snippet, /<mark>mbursed withi<\/mark>/)
  const both = await results(app, u, { query: 'parental leave' })
  t.same(both[0].matchedBy, ['substring', 'words'])
  // long substrings with inner words, accents and punctuation are still found exactly
  for (const q of ['eceive sixteen weeks of parental le', "de l'école arrivent à hu", 'TRAVEL EXPENSES ARE']) {
    t.equal((await results(app, u, { query: q, mode: 'substring' })).length, 1, q)
  }
  t.same(await results(app, u, { query: 'sixteen weeks parental', mode: 'substring' }), [],
    'the words are there, the substring is not')
  // 1–2 characters: substring only
  const short = await results(app, u, { query: 'à' })
  t.same(names(short), ['école.txt'])
  t.same(short[0].matchedBy, ['substring'])

  // semantic without an embedding endpoint
  const sem = await search(app, u, { query: question, mode: 'semantic' })
  t.equal(sem.statusCode, 400)
  t.equal(sem.json().code, 'EMBEDDINGS_NOT_CONFIGURED')
  t.match(sem.json().message, /CAIRN_EMBED_BASE_URL/)
  t.equal((await search(app, u, { query: 'x', mode: 'fuzzy' })).statusCode, 400)
})

t.test('every mode keeps the read rules, the filters and the limit', async (t) => {
  const { app, owner, mate, stranger, ws2 } = await organizations(t)
  await uploadDocument(app, owner, { filename: 'org.txt', content: 'The lighthouse keeper logs storms.' },
    { category: 'ops', tags: '["sea"]' })
  await uploadDocument(app, owner, { filename: 'ws.txt', content: 'The lighthouse lens was polished.' },
    { scope: 'workspace', workspaceId: ws2.id })
  await uploadDocument(app, owner, { filename: 'me.txt', content: 'My lighthouse diary.' }, { scope: 'personal' })
  // the stranger's own organization is large in these words: it must neither see nor be seen
  for (let i = 0; i < 5; i++) await uploadDocument(app, stranger,
    { filename: `theirs${i}.txt`, content: `The lighthouse keeper ${i} logs storms and lenses.` })

  for (const mode of ['hybrid', 'substring', 'words'] as const) {
    const all = (u: TestUser, extra: Record<string,
      unknown> = {}) => results(app, u, { query: 'lighthouse', mode, ...extra }).then((r) => names(r).sort())
    t.same(await all(owner), ['me.txt', 'org.txt', 'ws.txt'], `${mode}: owner`)
    t.same(await all(mate), ['org.txt'], `${mode}: a colleague outside the workspace, not the owner's personal`)
    t.same(await all(stranger), ['theirs0.txt', 'theirs1.txt', 'theirs2.txt', 'theirs3.txt', 'theirs4.txt'],
      `${mode}: another organization`)
    t.same(await all(owner, { scope: 'personal' }), ['me.txt'], `${mode}: scope`)
    t.same(await all(owner, { scope: 'workspace' }), ['ws.txt'], `${mode}: scope workspace`)
    t.same(await all(owner, { category: 'ops' }), ['org.txt'], `${mode}: category`)
    t.same(await all(owner, { tags: ['sea'] }), ['org.txt'], `${mode}: tags`)
    t.same(await all(owner, { workspaceId: owner.workspaceId }), ['me.txt', 'org.txt'],
      `${mode}: another workspace in context`)
    t.equal((await all(stranger, { limit: 2 })).length, 2, `${mode}: limit`)
    for (const r of await results(app, owner, { query: 'lighthouse', mode })) {
      t.type(r.score, 'number')
      t.match(r.snippet, /<mark>lighthouse<\/mark>/i)
      t.ok(r.matchedBy.length > 0)
    }
  }
  for (const mode of ['hybrid', 'substring', 'words']) {
    t.same(await results(app, mate, { query: 'the lighthouse lens', mode, scope: 'workspace' }), [],
      `${mode}: a member of no workspace, scope workspace`)
  }
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws2.id}/members`, headers: owner.auth,
    payload: { userId: mate.userId, role: 'member' } })
  t.same(names(await results(app, mate, { query: 'lens', mode: 'words' })), ['ws.txt'],
    'membership opens the workspace passages to word search')

  // deleted documents leave every mode at once, and the word index once purged
  const docs = (await app.inject({ url: '/api/knowledge/documents',
    headers: owner.auth })).json().documents as Array<{ id: string; fileName: string }>
  await app.inject({ method: 'DELETE', url: `/api/knowledge/document/${docs.find((d) => d.fileName === 'org.txt')!.id}`,
    headers: owner.auth })
  for (const mode of ['hybrid', 'substring',
    'words']) t.notOk(names(await results(app, owner, { query: 'storms', mode })).includes('org.txt'), mode)
  await app.jobs.idle()
  const left = app.sqlite.prepare(`SELECT COUNT(*) AS n FROM knowledge_passages_words
    WHERE knowledge_passages_words MATCH 'storms'`).get() as { n: number }
  t.equal(left.n, 5, 'only the other organization\'s passages are left in the word index')
})

t.test('ranking: word matches by BM25; hybrid puts passages found both ways first', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  await uploadDocument(app, u,
    { filename: 'a.txt', content: 'Backups run nightly. Restore a backup with the restore command.' })
  await uploadDocument(app, u, { filename: 'b.txt', content: 'The command line accepts flags.' })
  await uploadDocument(app, u,
    { filename: 'c.txt', content: 'To restore a backup, stop the server and run the restore command.' })
  const words = await results(app, u, { query: 'restore backup command', mode: 'words' })
  t.same(names(words).slice(2), ['b.txt'], 'one word matched ranks below three')
  t.ok(words[0].score >= words[1].score && words[1].score > words[2].score)
  const hybrid = await results(app, u, { query: 'restore a backup' })
  t.same(names(hybrid).slice(0, 2).sort(), ['a.txt', 'c.txt'])
  t.ok(hybrid.slice(0, 2).every((r) => r.matchedBy.includes('substring') && r.matchedBy.includes('words')))
})

t.test('the assistant retrieves with hybrid search: extractive answers quote the best sentences; unified search ' +
  'finds questions', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const filler = Array.from({ length: 12 },
    (_, i) => `Section ${i} describes the office floor plan and the kitchen rota.`).join(' ')
  await uploadDocument(app, u,
    { filename: 'handbook.txt',
      content: `${filler} Employees receive sixteen weeks of parental leave at full pay. ` +
        'Desks are cleaned on Fridays.' },
    { chunkSize: '2000', chunkOverlap: '0' })
  await uploadDocument(app, u,
    { filename: 'travel.txt', content: 'Travel expenses are reimbursed within thirty days.' })
  const res = await app.inject({ method: 'POST', url: '/api/v2/chat', headers: u.auth,
    payload: { message: 'How many weeks of parental leave do employees get?' } })
  t.equal(res.statusCode, 200)
  const reply = res.json().reply as string
  t.match(reply, /\[1\] "Employees receive sixteen weeks of parental leave at full pay\." \(source: handbook\.txt\)/,
    'the answering sentence first, cited')
  t.notMatch(reply, /Section 0 describes/, 'not the start of the passage')
  t.notMatch(reply, /travel\.txt/)

  const unified = await app.inject({ method: 'POST', url: '/api/v2/search', headers: u.auth,
    payload: { query: 'when are travel costs reimbursed?' } })
  t.same(unified.json().results.map((r: { kind: string; title: string }) => `${r.kind}:${r.title}`),
    ['knowledge:travel'], 'titled by the document\'s title (its file name without the extension)')
  const stranger = await signup(app)
  t.same((await app.inject({ method: 'POST', url: '/api/v2/search', headers: stranger.auth,
    payload: { query: 'parental leave weeks' } })).json().results, [])
})

t.test('substring over the trigram index when the caller reads many passages; over its own ' +
  'passages when few', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const small = await signup(app)
  // 10,200 passages of 50 characters: past the few-passages bound (10,000), so the trigram index answers
  const lines = Array.from({ length: 10_200 },
    (_,
      i) =>
      `Row ${String(i).padStart(5, '0')} of the ledger: ${i === 4321 ? 'ÉCOLE NORMALE' : 'plain entry'}.`.padEnd(50,
        ' ').slice(0, 50))
  await uploadDocument(app, u, { filename: 'ledger.txt', content: lines.join('') },
    { chunkSize: '50', chunkOverlap: '0' })
  await uploadDocument(app, small, { filename: 'mine.txt', content: 'My own école normale notes.' })
  const big = await results(app, u, { query: 'école normale', mode: 'substring' })
  t.same(big.map((r) => r.chunk.text.trim()), [lines[4321].trim()], 'found through the index, case folded')
  t.match(big[0].snippet, /<mark>ÉCOLE NORMALE<\/mark>/)
  t.equal((await results(app, u, { query: 'plain entry', mode: 'substring', limit: 100 })).length, 100)
  const mine = await results(app, small, { query: 'ÉCOLE NORMALE', mode: 'substring' })
  t.same(names(mine), ['mine.txt'], 'the small organization reads only its own passages')
  t.same(names(await results(app, small, { query: 'ledger', mode: 'substring' })), [])
  t.same(names(await results(app, small, { query: 'ledger' })), [], 'nor in hybrid')
})

t.test('words at scale (bounded candidates): rare terms lead, common terms rescore, all-common queries still find, ' +
  'tenants stay apart', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  const b = await signup(app)
  const filler = Array.from({ length: 24 }, (_, i) =>
    `Quarterly report number ${i} lists the budget of team ${i}; the report is filed monthly.`)
  for (let i = 0; i < filler.length; i += 6) {
    await uploadDocument(app, a, { filename: `filler-${i}.txt`, content: filler.slice(i, i + 6).join('\n\n') },
      { chunkSize: '120', chunkOverlap: '0' })
  }
  await uploadDocument(app, a, { filename: 'zephyr.txt',
    content: 'The zephyr wind report came early, the zephyr report was late.' })
  await uploadDocument(app, a, { filename: 'pair.txt', content: 'Lighthouse keepers archive tidal ledgers.' })
  await uploadDocument(app, b, { filename: 'foreign.txt',
    content: 'The zephyr wind report of another organization, zephyr zephyr report.' })
  // tiny bounds: every term with more than two postings is common, FTS5 never ranks all matches itself
  const bounded = createSearch(...searching(t, app),
    { settings: { words: { exactPostings: 0, postingsPerTerm: 2, rescore: 3 } } })
  const reader = (u: TestUser) => ({ customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId] })
  const files = (hits: SearchHit[]) => hits.map((h) => h.document.fileName)

  const rare = await bounded.search(reader(a), {}, 'zephyr report', 5, 'words')
  t.equal(files(rare)[0], 'zephyr.txt', 'the passage holding the rare term and the common one ranks first')
  t.notOk(files(rare).includes('foreign.txt'), 'never another organization\'s passage')
  t.ok(rare.every((h, i) => i === 0 || h.score <= rare[i - 1].score), 'ordered by score')
  t.match(rare[0].snippet, /<mark>zephyr<\/mark>/)

  // the most terms a query keeps (32): the rare one last still leads
  const many = Array.from({ length: 31 }, (_, i) => `word${i}x`).join(' ') + ' zephyr'
  t.equal(files(await bounded.search(reader(a), {}, many, 5, 'words'))[0], 'zephyr.txt')

  // only common terms, and a passage holding all of them that is neither newest nor frequent
  const common = await bounded.search(reader(a), {}, 'quarterly budget team', 3, 'words')
  t.equal(common.length, 3)
  t.ok(files(common).every((f) => f.startsWith('filler-')))
  // more common terms than are ANDed (EVERY_TERMS) or sought: still the passages holding them
  const six = await bounded.search(reader(a), {}, 'quarterly budget team report filed monthly lists', 3, 'words')
  t.equal(six.length, 3)
  t.ok(files(six).every((f) => f.startsWith('filler-')))

  // the small organization reads through its own readers token
  t.same(files(await bounded.search(reader(b), {}, 'zephyr report', 5, 'words')), ['foreign.txt'])
  t.same(await bounded.search(reader(b), {}, 'quarterly budget', 5, 'words'), [])
  t.same(files(await bounded.search(reader(b), {}, 'lighthouse ledgers', 5, 'hybrid')), [])
  t.same(files(await bounded.search(reader(a), {}, 'lighthouse ledgers', 5, 'hybrid')), ['pair.txt'])
})

t.test('words at scale: a term with more postings than the probe but few enough is read whole, so its oldest ' +
  'passage can still win', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  const b = await signup(app)
  await uploadDocument(app, a, { filename: 'oldest.txt', content: 'Marigold beds by the harbour; marigold seeds.' })
  const sentences = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join('\n\n')
  await uploadDocument(app, a, { filename: 'marigold.txt',
    content: sentences(5, (i) => `Entry ${i} of the garden log mentions one marigold among the roses and tulips.`) },
  { chunkSize: '120', chunkOverlap: '0' })
  await uploadDocument(app, a, { filename: 'harbour.txt',
    content: sentences(12, (i) => `Note ${i} from the harbour office: ships arrived and left on schedule.`) },
  { chunkSize: '120', chunkOverlap: '0' })
  await uploadDocument(app, b, { filename: 'foreign.txt', content: 'Marigold marigold harbour marigold harbour.' })
  // 5–6 postings of "marigold": over the probe (2), within postingsPerTerm (8); "harbour" has 13: common at once.
  // Only the 2 best candidates are read: if "marigold" stopped at its 2 newest postings, oldest.txt never would be.
  const bounded = createSearch(...searching(t, app),
    { settings: { words: { exactPostings: 0, postingsPerTerm: 8, probe: 2, rescore: 2 } } })
  const reader = { customerId: a.customerId, userId: a.userId, workspaceIds: [a.workspaceId] }
  const hits = await bounded.search(reader, {}, 'marigold harbour', 1, 'words')
  t.same(hits.map((h) => h.document.fileName), ['oldest.txt'])
  t.match(hits[0].snippet, /<mark>Marigold<\/mark>/)
  const more = await bounded.search(reader, {}, 'marigold harbour', 20, 'words')
  t.notOk(more.some((h) => h.document.fileName === 'foreign.txt'), 'never another organization\'s passage')
  const { n } = app.sqlite.prepare(`SELECT count(*) AS n FROM knowledge_passages p JOIN knowledge_documents d
    ON d.id = p.document_id WHERE d.file_name = 'marigold.txt'`).get() as { n: number }
  t.ok(n >= 4)
  t.equal(more.filter((h) => h.document.fileName === 'marigold.txt').length, n, 'every passage of the rare term')
})

t.test('words for a reader of few passages: every match ranked when the reader\'s postings are few, the bounded ' +
  'path otherwise; another organization\'s passages count for nothing', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  const b = await signup(app)
  await uploadDocument(app, a, { filename: 'many.txt',
    content: Array.from({ length: 12 }, (_, i) => `Harbour note ${i} of the large organization.`).join('\n\n') },
  { chunkSize: '60', chunkOverlap: '0' })
  // the small reader: an old passage saying it five times, then newer ones saying it once
  await uploadDocument(app, b,
    { filename: 'dense.txt', content: 'Harbour harbour harbour harbour harbour. Kelp kelp kelp.' })
  for (const i of [1, 2, 3]) {
    await uploadDocument(app, b,
      { filename: `newer-${i}.txt`, content: `A harbour${i === 1 ? ' and kelp' : ''}, entry ${i}.` })
  }
  // the reader reads 4 passages: "kelp" is in 2 of them, "harbour" in all 4 (and in 12 of the other organization's)
  const search = createSearch(...searching(t, app), { settings: { words: { exactPostings: 3, rescore: 1 } } })
  const reader = { customerId: b.customerId, userId: b.userId, workspaceIds: [b.workspaceId] }
  const first = async (q: string) => (await search.search(reader, {}, q, 1, 'words')).map((h) => h.document.fileName)
  t.same(await first('kelp'), ['dense.txt'], 'few postings: every match ranked, the densest wins')
  t.same(await first('harbour'), ['newer-3.txt'],
    'more postings than are ranked whole: the bounded path, the best of the newest candidates')
  const all = await search.search(reader, {}, 'harbour', 10, 'words')
  t.same(all.map((h) => h.document.fileName).sort(), ['dense.txt', 'newer-1.txt', 'newer-2.txt', 'newer-3.txt'],
    'every one of the reader\'s matches, none of the other organization\'s')
  t.equal(all[0].document.fileName, 'dense.txt', 'rescored by BM25 among them')
})

t.test('words with a category or tag filter: inside the filtered documents\' passages, or as without the filter ' +
  'when it leaves nearly everything; the same answers as every match ranked', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  const b = await signup(app)
  const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join('\n\n')
  const opts = (category: string, tags: string[]) => ({ chunkSize: '70', chunkOverlap: '0', category,
    tags: JSON.stringify(tags) })
  await uploadDocument(app, a, { filename: 'ops-old.txt',
    content: lines(3, (i) => `Ops runbook ${i}: restart the harbour crane, then the harbour lights.`) },
  opts('ops', ['sea', 'all']))
  await uploadDocument(app, a, { filename: 'misc.txt',
    content: lines(20, (i) => `Misc note ${i} about the harbour crane and other harbour things.`) },
  opts('misc', ['all']))
  await uploadDocument(app, a, { filename: 'ops-new.txt',
    content: lines(3, (i) => `Ops checklist ${i}: the crane is inspected weekly.`) }, opts('ops', ['all']))
  await uploadDocument(app, a, { filename: 'tiny.txt', content: 'A harbour.' }, opts('other', []))
  await uploadDocument(app, b, { filename: 'foreign.txt', content: 'Ops harbour crane harbour crane.' },
    opts('ops', ['sea', 'all']))
  const reader = { customerId: a.customerId, userId: a.userId, workspaceIds: [a.workspaceId] }
  t.equal(app.sqlite.prepare(`SELECT count(*) FROM knowledge_passages x JOIN knowledge_passages y
    ON y.document_id = x.document_id AND y.chunk_index > x.chunk_index AND y.rowid < x.rowid`).pluck().get(), 0,
  'a document\'s passages rise in rowid with their index: its first and last bound them')
  const exact = createSearch(...searching(t, app))
  // every term's postings read whole inside the filtered documents: the same passages as every match ranked
  const inside = createSearch(...searching(t, app), { settings: { words: { exactPostings: 0, rescore: 2 } } })
  // few postings per term: the rare term's passages lead
  const tight = createSearch(...searching(t, app),
    { settings: { words: { exactPostings: 0, postingsPerTerm: 3, probe: 2, rescore: 2 } } })
  // one document at most is searched inside: a filter leaving more, as without it (nearly all) or every match ranked
  const fewDocs = createSearch(...searching(t, app),
    { settings: { words: { exactPostings: 0, rescore: 2, filteredDocs: 1 } } })
  const names = (hits: SearchHit[]) => hits.map((h) => `${h.document.fileName} ${h.chunk.chunkIndex}`).sort()
  const cases: Array<[{ category?: string; tags?: string[] }, string]> = [[{ category: 'ops' }, 'harbour crane'],
    [{ category: 'ops' }, 'weekly crane'], [{ tags: ['sea'] }, 'crane lights'], [{ category: 'none' }, 'crane'],
    [{ category: 'misc' }, 'harbour'], [{ category: 'other' }, 'harbour'], [{ tags: ['all'] }, 'harbour crane']]
  for (const [filters, q] of cases) {
    const expected = names(await exact.search(reader, filters, q, 100, 'words'))
    t.ok(expected.every((n) => !n.startsWith('foreign')))
    for (const search of [inside, fewDocs]) {
      t.same(names(await search.search(reader, filters, q, 100, 'words')), expected, `${JSON.stringify(filters)} ${q}`)
    }
    for (const mode of ['words', 'hybrid'] as const) {
      const hits = await tight.search(reader, filters, q, 3, mode)
      t.ok(hits.every((h) => expected.includes(`${h.document.fileName} ${h.chunk.chunkIndex}`)), `${mode}: filtered`)
      t.equal(hits.length, Math.min(3, expected.length), `${mode}: as many as there are`)
    }
  }
  t.match(names(await inside.search(reader, { category: 'ops' }, 'harbour lights', 1, 'words')), [/^ops-old/],
    'the best of the filtered passages, though others are newer')
})

t.test('words with a filter of more documents than are walked inside: every match ranked unless it leaves out ' +
  'nothing (a cache keyed without the filter; a word whose newest postings all lie outside it)', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  for (let i = 1; i <= 6; i++) {
    await uploadDocument(app, a, { filename: `ops-${i}.txt`,
      content: `Ops ${i === 1 ? 'harbour' : 'quay'} crane number ${i}.` }, { category: 'ops' })
  }
  await uploadDocument(app, a, { filename: 'misc.txt',
    content: Array.from({ length: 4 }, (_, i) => `Misc harbour note number ${i} here.`).join('\n\n') },
  { chunkSize: '50', chunkOverlap: '0', category: 'misc' })
  const reader = { customerId: a.customerId, userId: a.userId, workspaceIds: [a.workspaceId] }
  const names = (hits: SearchHit[]) => hits.map((h) => `${h.document.fileName} ${h.chunk.chunkIndex}`).sort()
  const exact = createSearch(...searching(t, app))
  t.same(names(await exact.search(reader, { category: 'ops' }, 'harbour', 10, 'words')), ['ops-1.txt 0'])
  const tuning = { exactPostings: 0, postingsPerTerm: 3, probe: 2, rescore: 2, filteredDocs: 2 }
  for (const warm of [false, true]) {
    const search = createSearch(...searching(t, app), { settings: { words: tuning } })
    if (warm) await search.search(reader, {}, 'harbour', 3, 'words')
    for (const mode of ['words', 'hybrid'] as const) {
      t.same(names(await search.search(reader, { category: 'ops' }, 'harbour', 3, mode)), ['ops-1.txt 0'],
        `${mode}, ${warm ? 'after' : 'before'} an unfiltered search`)
    }
  }
})

t.test('words with a filter of more documents than are walked inside: the walks as without it, the best ' +
  'candidates kept while they pass it, and a filter of old documents walked inside its ranges', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  // the best "crane" passage of the filter is its oldest
  for (let i = 1; i <= 4; i++) {
    await uploadDocument(app, a, { filename: `keep-${i}.txt`, content: `Keep ${i}: ${'crane '.repeat(5 - i)}gate.` },
      { category: 'keep' })
  }
  for (const i of [1, 2]) {
    await uploadDocument(app, a, { filename: `other-${i}.txt`,
      content: Array.from({ length: 60 }, (_, k) => `Other passage ${k}: the crane lights are on.`).join('\n\n') },
    { chunkSize: '50', chunkOverlap: '0', category: 'other' })
  }
  const reader = { customerId: a.customerId, userId: a.userId, workspaceIds: [a.workspaceId] }
  const names = (hits: SearchHit[]) => hits.map((h) => `${h.document.fileName} ${h.chunk.chunkIndex}`)
  const exact = createSearch(...searching(t, app))
  // "crane" is common (124 passages, 4 read); the 80 newest passages holding it (20 times 4 sought: the filter
  // keeps 4 of 124) are all outside the "keep" documents
  const search = createSearch(...searching(t, app),
    { settings: { words: { exactPostings: 0, postingsPerTerm: 3, probe: 2, rescore: 4, filteredDocs: 1 } } })
  const expected = names(await exact.search(reader, { category: 'keep' }, 'crane', 3, 'words'))
  t.same(expected, ['keep-1.txt 0', 'keep-2.txt 0', 'keep-3.txt 0'])
  for (const mode of ['words', 'hybrid'] as const) {
    t.same(names(await search.search(reader, { category: 'keep' }, 'crane', 3, mode)), expected, mode)
    const other = names(await search.search(reader, { category: 'other' }, 'crane', 5, mode))
    t.equal(other.length, 5)
    t.ok(other.every((n) => n.startsWith('other-')), `${mode}: only the filter's passages`)
  }
  t.same(names(await search.search(reader, { category: 'keep' }, 'crane gate', 10, 'words')),
    names(await exact.search(reader, { category: 'keep' }, 'crane gate', 10, 'words')), 'every filtered match')
  // the filter's ranges are kept between searches, and worked out again when its documents change
  t.same(await search.search(reader, { category: 'keep' }, 'lights', 3, 'words'), [])
  app.sqlite.prepare(`UPDATE knowledge_documents SET category = 'keep' WHERE file_name = 'other-2.txt'`).run()
  const moved = names(await search.search(reader, { category: 'keep' }, 'lights', 3, 'words'))
  t.equal(moved.length, 3, 'a document moved into it')
  t.ok(moved.every((n) => n.startsWith('other-2')))
  await uploadDocument(app, a, { filename: 'keep-new.txt', content: 'Keep: crane crane crane crane crane gate.' },
    { category: 'keep' })
  t.same(names(await search.search(reader, { category: 'keep' }, 'crane', 1, 'words')), ['keep-new.txt 0'],
    'a document uploaded into it')
})

t.test('words with a filter: a document\'s rowid range holding passages written between its slices is no ' +
  'filter (review: other documents\' passages filled the candidates), and a filter of many old ranges still finds ' +
  'its passages (review: nothing was found past 400 ranges)', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  const reader = { customerId: a.customerId, userId: a.userId, workspaceIds: [a.workspaceId] }
  const names = (hits: SearchHit[]) => hits.map((h) => `${h.document.fileName} ${h.chunk.chunkIndex}`)
  const k1 = await uploadDocument(app, a, { filename: 'keep-1.txt', content: 'Keep one: crane gate.' },
    { category: 'keep' })
  await uploadDocument(app, a, { filename: 'keep-2.txt', content: 'Keep two: crane gate.' }, { category: 'keep' })
  // an upload written while keep-1, a large document indexed in the background, still had a slice to go
  await uploadDocument(app, a, { filename: 'upload.txt',
    content: Array.from({ length: 20 }, (_, k) => `Upload passage ${k}: the crane lights.`).join('\n\n') },
  { chunkSize: '50', chunkOverlap: '0', category: 'other' })
  const w = passageWriter(app.sqlite)
  app.sqlite.transaction(() => {
    w.insert(k1.id, w.readers(k1.id) ?? null, 1, 'Keep one more: crane gate again.')
    app.sqlite.prepare(`UPDATE knowledge_documents SET chunk_count = 2, indexed_count = 2, updated_at = ?
      WHERE id = ?`).run(new Date().toISOString(), k1.id)
  })()
  const exact = createSearch(...searching(t, app))
  const expected = names(await exact.search(reader, { category: 'keep' }, 'crane', 3, 'words')).sort()
  t.equal(expected.length, 3)
  for (const tuning of [{ filteredDocs: 1 }, {}]) {
    const search = createSearch(...searching(t, app),
      { settings: { words: { exactPostings: 0, postingsPerTerm: 3, probe: 2, rescore: 4, ...tuning } } })
    t.same(names(await search.search(reader, { category: 'keep' }, 'crane', 3, 'words')).sort(), expected,
      tuning.filteredDocs ? 'walked as without the filter' : 'walked inside its ranges')
  }
  // the filter's passages are older than all the newest postings sought, in more ranges than are walked
  for (let i = 0; i < 3; i++) {
    await uploadDocument(app, a, { filename: `gap-${i}.txt`, content: `Gap ${i}: blue sky.` }, { category: 'other' })
    await uploadDocument(app, a, { filename: `old-${i}.txt`, content: `Old ${i}: crane gate.` }, { category: 'old' })
  }
  await uploadDocument(app, a, { filename: 'fresh.txt',
    content: Array.from({ length: 120 }, (_, k) => `Fresh passage ${k}: the crane lights.`).join('\n\n') },
  { chunkSize: '50', chunkOverlap: '0', category: 'other' })
  const old = names(await exact.search(reader, { category: 'old' }, 'crane', 3, 'words')).sort()
  t.equal(old.length, 3)
  const search = createSearch(...searching(t, app),
    { settings: { words: { exactPostings: 0, postingsPerTerm: 3, probe: 2, rescore: 4, filteredDocs: 1,
      fallbackRanges: 1 } } })
  t.same(names(await search.search(reader, { category: 'old' }, 'crane', 3, 'words')).sort(), old)
})

t.test('words inside a filter\'s ranges weighs each term by its passages among all the reader\'s (a word common ' +
  'there but rare in the filtered documents does not weigh as much as a rare one)',
async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  await uploadDocument(app, a, { filename: 'misc.txt',
    content: Array.from({ length: 30 }, (_, i) => `Misc harbour note number ${i} here.`).join('\n\n') },
  { chunkSize: '50', chunkOverlap: '0', category: 'misc' })
  // the harbour passage is the newer of the two: with equal weights it would lead
  for (const word of ['crane', 'harbour']) {
    await uploadDocument(app, a, { filename: `ops-${word}.txt`, content: `Ops: the ${word} gate is shut at night.` },
      { category: 'ops' })
  }
  const reader = { customerId: a.customerId, userId: a.userId, workspaceIds: [a.workspaceId] }
  const first = (hits: SearchHit[]) => hits[0]?.chunk.text
  const exact = createSearch(...searching(t, app))
  t.equal(first(await exact.search(reader, { category: 'ops' }, 'harbour crane', 1, 'words')),
    'Ops: the crane gate is shut at night.')
  const inside = createSearch(...searching(t, app), { settings: { words: { exactPostings: 0, rescore: 2 } } })
  t.equal(first(await inside.search(reader, { category: 'ops' }, 'harbour crane', 1, 'words')),
    'Ops: the crane gate is shut at night.', 'the word rarer among all the reader\'s passages leads')
})

t.test('words at scale: the best candidates and the merged postings are those of a sort and of a map', async (t) => {
  const random = (() => { let s = 7; return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648 })()
  for (let round = 0; round < 50; round++) {
    const n = 1 + Math.floor(random() * 400)
    const rowids = [...new Set(Array.from({ length: n }, () => Math.floor(random() * 5000)))]
    const scores = rowids.map(() => [1.5, 2.25, 3.75, 4][Math.floor(random() * 4)])
    const k = 1 + Math.floor(random() * 60)
    const sorted = rowids.map((r, i) => [r, scores[i]]).sort((x, y) => y[1] - x[1] || y[0] - x[0]).slice(0, k)
    t.same(topEntries(rowids, scores, k).map((i) => rowids[i]), sorted.map(([r]) => r))
    t.equal(cutLevel(scores, k), rowids.length < k ? 0 : sorted[k - 1][1])

    const lists = Array.from({ length: 1 + Math.floor(random() * 4) }, () =>
      [...new Set(Array.from({ length: Math.floor(random() * 50) }, () => Math.floor(random() * 200)))]
        .sort((x, y) => y - x))
    const weights = lists.map((_, i) => i + 0.5)
    const expected = new Map<number, [number, number]>()
    lists.forEach((l, i) => l.forEach((r) => {
      const [w, m] = expected.get(r) ?? [0, 0]
      expected.set(r, [w + weights[i], m | (1 << i)])
    }))
    const merged = mergePostings(lists, weights, lists.map((_, i) => 1 << i))
    t.same(merged.rowids, [...expected.keys()].sort((x, y) => y - x), 'newest first, each once')
    t.same(merged.rowids.map((_, i) => [merged.weight[i], merged.held[i]]),
      merged.rowids.map((r) => expected.get(r)), 'weights summed, terms marked')
  }
})

t.test('hybrid at scale: the words part may spare the substring look-up, never a passage holding the whole query',
  async (t) => {
    const app = await build(t, { config: { rateLimits: NO_LIMITS } })
    const a = await signup(app)
    await uploadDocument(app, a,
      { filename: 'alpha.txt', content: 'Gamma ray bursts outshine whole galaxies briefly.' })
    await uploadDocument(app, a, { filename: 'beta.txt', content: 'Gamma ray telescopes watch for bursts at night.' })
    await uploadDocument(app, a, { filename: 'delta.txt', content: 'Solar gamma flares outshine moons.' })
    await uploadDocument(app, a, { filename: 'filler.txt',
      content: Array.from({ length: 8 }, (_, i) => `Gamma note ${i}: the sky was clear.`).join('\n\n') },
    { chunkSize: '50', chunkOverlap: '0' })
    const bounded = createSearch(...searching(t, app),
      { settings: { words: { exactPostings: 0, postingsPerTerm: 4, probe: 2, rescore: 3 } } })
    const reader = { customerId: a.customerId, userId: a.userId, workspaceIds: [a.workspaceId] }
    // inner words "ray", "bursts", "outshine", "whole" are rare (read whole) and meet only in alpha.txt
    const whole = await bounded.search(reader, {}, 'GAMMA ray bursts outshine whole galax', 5, 'hybrid')
    t.equal(whole[0].document.fileName, 'alpha.txt')
    t.same(whole[0].matchedBy, ['substring', 'words'], 'the passage holding the whole query keeps its substring vote')
    // a common inner word ("gamma", 12 postings) must be held where the rare ones meet: it is, in delta.txt
    const mixed = await bounded.search(reader, {}, 'Solar gamma flares outshine moons', 5, 'hybrid')
    t.equal(mixed[0].document.fileName, 'delta.txt')
    t.same(mixed[0].matchedBy, ['substring', 'words'])
    // their postings meet nowhere: no substring match, the words still rank
    const apart = await bounded.search(reader, {}, 'gamma ray telescopes outshine galaxies', 5, 'hybrid')
    t.ok(apart.length >= 2)
    t.ok(apart.every((h) => h.matchedBy.length === 1 && h.matchedBy[0] === 'words'))
    // where they meet, those passages alone are read for the substring part: the same as substring search finds
    for (const q of ['GAMMA ray bursts outshine whole galax', 'Solar gamma flares outshine moons',
      'ray bursts outshine', 'Gamma note 3: the sky', 'gamma ray telescopes outshine galaxies']) {
      const bySubstring = (await bounded.search(reader, {}, q, 10, 'substring')).map((h) => h.chunk.id).sort()
      const inHybrid = (await bounded.search(reader, {}, q, 10, 'hybrid')).filter((h) => h.matchedBy
        .includes('substring')).map((h) => h.chunk.id).sort()
      t.same(inHybrid, bySubstring, `hybrid's substring part: ${q}`)
    }
    t.equal(intersects([[9, 5, 2], [7, 5], [5, 1]]), true)
    t.equal(intersects([[9, 5, 2], [7, 6], [5, 1]]), false)
    t.equal(intersects([[]]), false)
  })

t.test('words with a filter leaving out none of the reader\'s passages: what the search without it finds, with the ' +
  'same scores, however many documents others have', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const a = await signup(app)
  const b = await signup(app)
  for (let i = 1; i <= 3; i++) {
    await uploadDocument(app, a, { filename: `a-${i}.txt`, content: `Harbour crane ${i} lifts the quay ${i}.` },
      { category: 'ops', tags: '["every"]' })
  }
  await uploadDocument(app, b, { filename: 'b.txt', content: 'Harbour crane of another organization.' },
    { category: 'ops', tags: '["every"]' })
  const reader = { customerId: a.customerId, userId: a.userId, workspaceIds: [a.workspaceId] }
  const search = createSearch(...searching(t, app))
  const found = (hits: SearchHit[]) => hits.map((h) => `${h.document.fileName} ${h.score}`)
  const without = found(await search.search(reader, {}, 'harbour quay', 10, 'words'))
  t.equal(without.length, 3)
  for (const filters of [{ category: 'ops' }, { tags: ['every'] }]) {
    t.same(found(await search.search(reader, filters, 'harbour quay', 10, 'words')), without, JSON.stringify(filters))
  }
})

t.test('the passages a reader reads, from the organization\'s shares: as the read rule counts them, for every ' +
  'reader and scope, read one organization at a time or all at once (warm)', async (t) => {
  const { app, owner, mate, stranger, ws2 } = await organizations(t)
  const passages = (n: number, word: string) => Array.from({ length: n }, (_, i) => `${word} entry ${i} here.`)
    .join('\n\n')
  const small = { chunkSize: '60', chunkOverlap: '0' }
  await uploadDocument(app, owner, { filename: 'org.txt', content: passages(3, 'Harbour') }, small)
  await uploadDocument(app, owner, { filename: 'ws.txt', content: passages(5, 'Lens') },
    { ...small, scope: 'workspace', workspaceId: ws2.id })
  await uploadDocument(app, owner, { filename: 'me.txt', content: passages(7, 'Diary') },
    { ...small, scope: 'personal' })
  await uploadDocument(app, mate, { filename: 'mine.txt', content: passages(11, 'Kelp') },
    { ...small, scope: 'personal' })
  await uploadDocument(app, stranger, { filename: 'theirs.txt', content: passages(13, 'Storm') }, small)
  const [sqlite, store] = searching(t, app)
  const counted = (reader: Parameters<typeof readableParams>[0], scope?: 'organization' | 'workspace' | 'personal') =>
    (sqlite.prepare(`SELECT coalesce(sum(d.chunk_count), 0) FROM knowledge_documents d
      WHERE ${readableWhere({ scope })}`).pluck().get(readableParams(reader, { scope })) as number)
  const readers = [
    { customerId: owner.customerId, userId: owner.userId, workspaceIds: [owner.workspaceId, ws2.id] },
    { customerId: owner.customerId, userId: owner.userId, workspaceIds: [owner.workspaceId] },
    { customerId: owner.customerId, userId: mate.userId, workspaceIds: [] },
    { customerId: owner.customerId, userId: mate.userId, workspaceIds: [ws2.id] },
    { customerId: stranger.customerId, userId: stranger.userId, workspaceIds: [stranger.workspaceId] },
    { customerId: stranger.customerId, userId: owner.userId, workspaceIds: [ws2.id] }
  ]
  const lazy = createSearch(sqlite, store)
  const warmed = createSearch(sqlite, store)
  await warmed.warm()
  for (const [i, reader] of readers.entries()) {
    for (const scope of [undefined, 'organization', 'workspace', 'personal'] as const) {
      const expected = counted(reader, scope)
      t.equal(lazy.passagesReadBy(reader, { scope }), expected, `reader ${i}, scope ${scope ?? 'any'}: read when asked`)
      t.equal(warmed.passagesReadBy(reader, { scope }), expected, `reader ${i}, scope ${scope ?? 'any'}: warm`)
    }
  }
  const chunks = (name: string) => sqlite.prepare('SELECT chunk_count FROM knowledge_documents WHERE file_name = ?')
    .pluck().get(name) as number
  t.ok(['org.txt', 'ws.txt', 'me.txt', 'mine.txt'].every((f) => chunks(f) > 1), 'documents of several passages')
  t.equal(counted(readers[0]), chunks('org.txt') + chunks('ws.txt') + chunks('me.txt'),
    'the owner reads the organization\'s, the workspace\'s and their own')
  t.equal(counted(readers[3]), chunks('org.txt') + chunks('ws.txt') + chunks('mine.txt'),
    'the colleague in the workspace: theirs, not the owner\'s personal')
})
