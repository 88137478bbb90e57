import t from 'tap'
import { narrowPairsPay, pairsGiveWay, plan, probeGoesOn, type IndexStatistics, type Plan, type PlanStatistics,
  type PlannedMode, type SubstringStatistics, type WordsStatistics } from '../../src/knowledge/planner.js'
import { SEARCH_SETTINGS, searchSettings } from '../../src/knowledge/search-settings.js'
import { createSearch } from '../../src/knowledge/search.js'
import { addUser, build, searching, signup, uploadDocument } from '../helper.js'

// The decision table of docs/design/knowledge-search.md, row by row, through `plan`: each row names the figures that
// decide it; every other figure is one that would not (a reader of the whole index, rare trigrams, no filter).

type Figures = { words?: Partial<WordsStatistics>; substring?: Partial<Omit<SubstringStatistics, 'index'>>;
  index?: Partial<IndexStatistics>; semantic?: boolean }

function statistics(f: Figures): PlanStatistics {
  const index: IndexStatistics = { pairs: () => undefined, mayExist: () => true, behind: () => false,
    vocabulary: () => undefined, wholeTokens: () => true, runsHolding: () => 0, phraseRuns: () => undefined,
    trigrams: () => [100, 5000, 20_000, 40_000], trigramStep: () => 1, rareTrigrams: () => 50, ...f.index }
  return {
    words: () => ({ terms: 3, readsNothing: false, filter: () => 'none',
      postings: () => 30_000, ...f.words }),
    substring: () => ({ readsNothing: () => false, ownDocuments: () => ({ docs: 101, passages: 1_000_000 }),
      index: () => index, ...f.substring }),
    semantic: f.semantic ?? false
  }
}

const rows: Array<[string, PlannedMode, string, Figures, string]> = [
  // substring
  ['1–2 characters', 'substring', 'ab', {}, 'short-scan'],
  ['1–2 characters in hybrid', 'hybrid', 'ab', {}, 'short-scan'],
  ['a reader of no document', 'substring', 'harbour', { substring: { readsNothing: () => true } }, 'nothing'],
  ['hybrid: the words part shows no passage holding every inner word', 'substring', 'harbour crane',
    { substring: { evidence: () => ({ none: true }) } }, 'nothing'],
  ['hybrid: the words part shows few passages that may hold it', 'substring', 'harbour crane',
    { substring: { evidence: () => ({ none: false, among: [9, 4, 1] }) } }, 'among'],
  ['hybrid: more passages than `among` may hold it', 'substring', 'harbour crane',
    { substring: { evidence: () => ({ none: false, among: Array.from({ length: 65 }, (_, i) => 65 - i) }) } },
    'trigram-and'],
  ['a reader of few documents and passages', 'substring', 'harbour',
    { substring: { ownDocuments: () => ({ docs: 100, passages: 10_000 }) } }, 'own-passages'],
  ['a reader of few documents, none holding the inner words', 'substring', 'harbour crane',
    { substring: { ownDocuments: () => ({ docs: 3, passages: 30 }) }, index: { mayExist: () => false } }, 'nothing'],
  ['a reader of few documents but many passages', 'substring', 'harbour',
    { substring: { ownDocuments: () => ({ docs: 100, passages: 10_001 }) } }, 'trigram-and'],
  ['one word, in few words of the vocabulary', 'substring', 'separation',
    { index: { vocabulary: () => ['separation', 'separations'] } }, 'run-exact'],
  ['one word in no word of the vocabulary', 'substring', 'separatiom', { index: { vocabulary: () => [] } },
    'run-exact'],
  ['one word within more, its words rarer than the rarest trigrams', 'substring', 'separation:',
    { index: { vocabulary: () => ['separation'], trigrams: () => [50_000, 90_000], rareTrigrams: () => 20_000,
      runsHolding: () => 300 } }, 'runs'],
  ['one word within more, its words commoner than the rarest trigrams', 'substring', 'separation:',
    { index: { vocabulary: () => ['separation'], trigrams: () => [50_000, 90_000, 95_000, 99_000],
      rareTrigrams: () => 200, runsHolding: () => 300 } }, 'trigram-probe'],
  ['one word in too many words of the vocabulary', 'substring', 'ion', { index: { vocabulary: () => undefined } },
    'trigram-and'],
  ['several words the pair index can ask', 'substring', 'weeks of parental',
    { index: { pairs: () => ({ match: '"ks_of of_parental"' }) } }, 'pairs'],
  ['several words, no pairs, no readable passage holding the inner words', 'substring', 'of the',
    { index: { mayExist: () => false } }, 'nothing'],
  ['several words, no pairs, the run index narrower than the rarest trigram', 'substring', 'pin to a',
    { index: { trigrams: () => [40_000, 80_000], phraseRuns: () => ({ match: '"pin" AND "to"', n: 1000 }) } },
    'runs'],
  ['several words, no pairs, the run index too broad', 'substring', 'pin to a',
    { index: { trigrams: () => [40_000, 80_000, 90_000, 95_000], phraseRuns: () => ({ match: '"to"', n: 30_000 }) } },
    'trigram-probe'],
  ['the rarest trigram rare enough', 'substring', 'a-b-c-d', { index: { trigrams: () => [3000, 9000, 9000, 9000] } },
    'trigram-and'],
  ['the rarest trigram past rareEnough', 'substring', 'a-b-c-d',
    { index: { trigrams: () => [3001, 9000, 9000, 9000] } }, 'trigram-probe'],
  ['every trigram would be ANDed', 'substring', 'a-b-c', { index: { trigrams: () => [3001, 9000, 9000] } },
    'trigram-phrase'],
  ['even the rarest trigram past probeUpTo', 'substring', 'a-b-c-d',
    { index: { trigrams: () => [500_001, 600_000, 700_000, 800_000] } }, 'trigram-phrase'],
  // words
  ['no word', 'words', '!!', { words: { terms: 0 } }, 'nothing'],
  ['words: a reader of no document', 'words', 'harbour', { words: { readsNothing: true } }, 'nothing'],
  ['a filter leaving nothing', 'words', 'harbour', { words: { filter: () => 'empty' } }, 'nothing'],
  ['few postings among the reader\'s passages', 'words', 'harbour crane', { words: { postings: () => 6000 } },
    'words-exact'],
  ['more postings than are ranked whole', 'words', 'harbour crane', { words: { postings: () => 6001 } },
    'words-bounded'],
  ['common words', 'words', 'the server is used', {}, 'words-bounded'],
  // semantic and hybrid
  ['semantic', 'semantic', 'a car', {}, 'semantic'],
  ['hybrid', 'hybrid', 'harbour crane', {}, 'hybrid']
]

for (const [row, mode, text, figures, kind] of rows) {
  t.equal(plan({ text, mode }, statistics(figures), SEARCH_SETTINGS).kind, kind, row)
}

t.test('each plan says why', async (t) => {
  for (const [row, mode, text, figures] of rows) {
    const p = plan({ text, mode }, statistics(figures), SEARCH_SETTINGS)
    t.ok(p.reason.length > 10, row)
  }
})

t.test('hybrid composes its parts, semantic only where an endpoint is configured', async (t) => {
  const without = plan({ text: 'harbour crane', mode: 'hybrid' }, statistics({}), SEARCH_SETTINGS)
  t.match(without, { kind: 'hybrid', words: { kind: 'words-bounded' }, substring: { kind: 'trigram-and' } })
  t.notOk((without as Extract<Plan, { kind: 'hybrid' }>).semantic)
  const withSemantic = plan({ text: 'harbour crane', mode: 'hybrid' }, statistics({ semantic: true }),
    SEARCH_SETTINGS)
  t.match(withSemantic, { semantic: { kind: 'semantic' } })
})

t.test('an indexed plan walks the passages above the pair and run indexes\' mark through trigrams', async (t) => {
  const caughtUp = plan({ text: 'weeks of parental', mode: 'substring' },
    statistics({ index: { pairs: () => ({ match: 'm' }) } }), SEARCH_SETTINGS)
  t.match(caughtUp, { kind: 'pairs', behind: false })
  t.notOk('above' in caughtUp)
  const behind = plan({ text: 'weeks of parental', mode: 'substring' },
    statistics({ index: { pairs: () => ({ match: 'm' }), behind: () => true } }), SEARCH_SETTINGS)
  t.match(behind, { kind: 'pairs', behind: true, above: { kind: 'trigram-and' } })
})

t.test('settings move the rows\' bounds', async (t) => {
  const noPairs = searchSettings({ substring: { pairs: false } })
  t.equal(plan({ text: 'weeks of parental', mode: 'substring' },
    statistics({ index: { pairs: () => ({ match: 'm' }) } }), noPairs).kind, 'trigram-and')
  const noRuns = searchSettings({ substring: { runs: false } })
  t.equal(plan({ text: 'separation', mode: 'substring' },
    statistics({ index: { vocabulary: () => ['separation'] } }), noRuns).kind, 'trigram-and')
  const always = searchSettings({ substring: { phraseRuns: 'always' } })
  const phrase = statistics({ index: { pairs: () => ({ match: 'm' }),
    phraseRuns: () => ({ match: 'r', n: 900_000 }) } })
  t.equal(plan({ text: 'weeks of parental', mode: 'substring' }, phrase, always).kind, 'runs')
  const exactAlways = searchSettings({ words: { exactPostings: Number.MAX_SAFE_INTEGER } })
  t.equal(plan({ text: 'the server', mode: 'words' }, statistics({}), exactAlways).kind, 'words-exact')
})

t.test('the switches a walk weighs on what it measured', async (t) => {
  const index = statistics({}).substring().index()
  t.equal(pairsGiveWay(3000, index, SEARCH_SETTINGS), undefined, 'the rest few enough: the pairs go on')
  t.equal(pairsGiveWay(3001, index, SEARCH_SETTINGS), 'trigrams', 'the rare trigrams far fewer than the rest')
  const runsNarrower = { ...index, rareTrigrams: () => 5000, phraseRuns: () => ({ match: 'r', n: 1000 }) }
  t.equal(pairsGiveWay(10_000, runsNarrower, SEARCH_SETTINGS), 'runs')
  t.equal(pairsGiveWay(1500 * 2, { ...runsNarrower, rareTrigrams: () => undefined }, SEARCH_SETTINGS), undefined)
  // 64 candidates over 64 rowids (every rowid a candidate) against a phrase walk of cheap postings
  const dense = { ...index, trigrams: () => [4000, 5000, 6000, ...Array.from({ length: 10 }, () => 900_000)] }
  t.equal(probeGoesOn(64, 64, 1_000_000, dense, SEARCH_SETTINGS), 'phrase')
  // 64 candidates over 100,000 rowids: candidates are sparse, each costs less than stepping every doclist
  t.equal(probeGoesOn(64, 100_000, 1_000_000, dense, SEARCH_SETTINGS), 'candidates')
  t.equal(narrowPairsPay(1000, 10, 100, SEARCH_SETTINGS), true, 'a prefix of 1,000 postings: cheaper than 1,000 reads')
  t.equal(narrowPairsPay(1_000_000, 10, 2, SEARCH_SETTINGS), false)
})

t.test('a search answers the plan it followed, from the figures of a real index', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
  const u = await signup(app)
  await uploadDocument(app, u, { filename: 'harbour.txt', content: 'The harbour crane lifts containers at dawn.' })
  const reader = { customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId] }
  const search = createSearch(...searching(t, app))
  const planOf = async (query: string, mode: PlannedMode, filters = {}) =>
    (await search.run(reader, filters, query, 5, mode)).plan
  t.match(await planOf('ha', 'substring'), { kind: 'short-scan' })
  t.match(await planOf('crane', 'substring'), { kind: 'own-passages' }, 'a reader of one document reads it')
  t.match(await planOf('crane', 'words'), { kind: 'words-exact' })
  t.match(await planOf('crane', 'words', { category: 'nothing' }), { kind: 'nothing' })
  t.match(await planOf('harbour crane', 'hybrid'),
    { kind: 'hybrid', words: { kind: 'words-exact' }, substring: { kind: 'own-passages' } })
  t.notOk((await planOf('harbour crane', 'hybrid') as Extract<Plan, { kind: 'hybrid' }>).semantic,
    'no semantic part without an embedding endpoint')
  const stranger = await signup(app)
  const theirs = { customerId: stranger.customerId, userId: stranger.userId, workspaceIds: [stranger.workspaceId] }
  t.match((await search.run(theirs, {}, 'crane', 5, 'substring')).plan, { kind: 'nothing' },
    'another organization reads nothing of it')
  t.same((await search.run(theirs, {}, 'crane', 5, 'hybrid')).hits, [])
  // a large reader goes through the indexes (few passages, but bounds made small)
  const indexed = createSearch(...searching(t, app), { settings: { ownPassages: { fewDocs: 0, fewPassages: 0 },
    words: { exactPostings: 0 } } })
  t.match((await indexed.run(reader, {}, 'crane', 5, 'substring')).plan, { kind: 'run-exact' })
  t.match((await indexed.run(reader, {}, 'harbour crane', 5, 'substring')).plan, { kind: 'pairs' })
  const bounded = await indexed.run(reader, {}, 'crane lifts', 5, 'words')
  t.match(bounded.plan, { kind: 'words-bounded' })
  t.same(bounded.hits.map((h) => h.document.fileName), ['harbour.txt'])
})

t.test('?explain answers the plan to an organization\'s owners and admins, without what was read on the way',
  async (t) => {
    const app = await build(t, { config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
    const owner = await signup(app)
    await uploadDocument(app, owner,
      { filename: 'harbour.txt', content: 'The harbour crane lifts containers at dawn.' })
    const ask = (auth: Record<string, string>, payload: object, url = '/api/knowledge/search?explain=true') =>
      app.inject({ method: 'POST', url, headers: auth, payload })
    const res = await ask(owner.auth, { query: 'harbour crane', mode: 'hybrid' })
    t.equal(res.statusCode, 200)
    t.same(res.json().plan, {
      kind: 'hybrid', reason: String(res.json().plan.reason),
      words: { kind: 'words-exact', reason: String(res.json().plan.words.reason) },
      substring: { kind: 'own-passages', reason: String(res.json().plan.substring.reason) }
    }, 'kinds and reasons only: no match expressions, rowids or counts')
    t.match(res.json().plan.words.reason, /few postings/)
    t.equal(res.json().count, 1, 'the results as without explain')
    t.match((await ask(owner.auth, { query: 'ha', mode: 'substring' })).json().plan, { kind: 'short-scan' })
    t.notOk('plan' in (await ask(owner.auth, { query: 'crane' }, '/api/knowledge/search')).json(), 'asked only')
    const admin = await addUser(app, owner, 'admin')
    t.equal((await ask(admin.auth, { query: 'crane' })).json().plan.kind, 'hybrid')
    const member = await addUser(app, owner, 'member')
    const refused = await ask(member.auth, { query: 'crane' })
    t.equal(refused.statusCode, 403)
    t.match(refused.json(), { success: false, code: 'FORBIDDEN', message: /owners and admins/ })
    t.equal((await ask(member.auth, { query: 'crane' }, '/api/knowledge/search')).statusCode, 200)
    t.equal((await ask(owner.auth, { query: 'crane' }, '/api/knowledge/search?explain=maybe')).statusCode, 400)
  })

t.test('?explain shows nothing another organization\'s passages decided: a walk of the shared indexes is one ' +
  '`index-walk`, the same before and after another organization writes the word', async (t) => {
  // (no reader of few documents: every substring search walks the shared indexes)
  const app = await build(t, { config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 },
    searchSettings: { ownPassages: { fewDocs: 0 } } } })
  const a = await signup(app)
  const b = await signup(app)
  await uploadDocument(app, a, { filename: 'a.txt', content: 'The harbour crane lifts containers at dawn.' })
  const plans = async () => {
    const out = []
    for (const [query, mode] of [['zanzibarquux', 'substring'], ['zanzibarquux crane', 'hybrid'],
      ['crane lifts', 'substring'], ['zanzibarquux', 'words']]) {
      const res = await app.inject({ method: 'POST', url: '/api/knowledge/search?explain=true', headers: a.auth,
        payload: { query, mode } })
      out.push(res.json().plan)
    }
    return out
  }
  const before = await plans()
  t.match(before[0], { kind: 'index-walk' })
  t.match(before[1], { kind: 'hybrid', substring: { kind: 'index-walk' } })
  await uploadDocument(app, b, { filename: 'b.txt', content: 'zanzibarquux zanzibarquux, crane lifts zanzibarquux.' })
  t.same(await plans(), before)
})
