import t from 'tap'
import path from 'node:path'
import { build, signup, uploadDocument, searching } from '../helper.js'
import { createSearchPool } from '../../src/knowledge/search-pool.js'
import { createSearch, type SearchBudget } from '../../src/knowledge/search.js'
import { repetitionProblem } from '../../src/knowledge/query.js'
import type { Reader } from '../../src/knowledge/readers.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }
const readerOf = (u: { customerId: string; userId: string; workspaceId: string }): Reader =>
  ({ customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId] })

t.test('a free worker goes to the organization with nothing running before the busy one\'s next search', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const slow = await signup(app)
  const small = await signup(app)
  await uploadDocument(app, slow, { filename: 'a.txt', content: 'zebra crossings and zebra herds' })
  await uploadDocument(app, small, { filename: 'b.txt', content: 'zebra of the small organization' })
  // one worker: the order searches end in is the order they were given it
  const pool = createSearchPool(path.join(app.config.dataDir, 'cairn.db'), { size: 1 })
  t.teardown(() => pool.close())
  const order: string[] = []
  const ask = (who: string, reader: Reader) =>
    pool.run(reader, {}, 'zebra', 10).then((a) => { order.push(who); return a })
  // the slow organization queues three, then the small one asks once
  const asked = [ask('slow 1', readerOf(slow)), ask('slow 2', readerOf(slow)), ask('slow 3', readerOf(slow)),
    ask('small', readerOf(small))]
  const answers = await Promise.all(asked)
  t.same(order, ['slow 1', 'small', 'slow 2', 'slow 3'], 'the small organization goes second, not last')
  t.same(answers[3].hits.map((h) => h.document.fileName), ['b.txt'], 'each its own passages')
  t.same(answers[0].hits.map((h) => h.document.fileName), ['a.txt'])

  // round-robin between organizations that both have searches waiting
  order.length = 0
  await Promise.all([ask('slow 1', readerOf(slow)), ask('slow 2', readerOf(slow)), ask('small 1', readerOf(small)),
    ask('small 2', readerOf(small))])
  t.same(order, ['slow 1', 'small 1', 'slow 2', 'small 2'])
})

t.test('a search past its time budget answers what it found, flagged partial', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  await uploadDocument(app, u, { filename: 'lantern.txt', content: 'The brass lantern hangs in the hallway.' })
  const search = createSearch(...searching(t, app))
  // a budget already spent: hybrid search stops after its first step
  const spent: SearchBudget = { cut: false, expired: () => true }
  const hits = await search.search(readerOf(u), {}, 'brass lantern', 10, 'hybrid', undefined, spent)
  t.ok(spent.cut, 'the search says it was cut short')
  t.ok(hits.every((h) => !h.matchedBy.includes('substring')), 'the substring step was not run')
  const ample: SearchBudget = { cut: false, expired: () => false }
  t.same((await search.search(readerOf(u), {}, 'brass lantern', 10, 'hybrid', undefined, ample))
    .map((h) => h.document.fileName), ['lantern.txt'])
  t.notOk(ample.cut, 'a search within its budget is whole')

  // through the pool: a budget of 0 ms is spent at the first look
  const pool = createSearchPool(path.join(app.config.dataDir, 'cairn.db'), { size: 1, budgetMs: 0 })
  t.teardown(() => pool.close())
  t.equal((await pool.run(readerOf(u), {}, 'brass lantern', 10)).partial, true)
  t.equal((await pool.unified(readerOf(u), { customerId: u.customerId, userId: u.userId,
    workspaceIds: [u.workspaceId], query: 'brass lantern', limit: 10 })).partial, true)
})

t.test('the routes flag a partial answer; a whole one has no flag', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS, searchBudgetMs: 0 } })
  const u = await signup(app)
  await uploadDocument(app, u, { filename: 'lantern.txt', content: 'The brass lantern hangs in the hallway.' })
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: u.auth,
    payload: { query: 'brass lantern' } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().partial, true)
  const unified = await app.inject({ method: 'POST', url: '/api/v2/search', headers: u.auth,
    payload: { query: 'brass lantern' } })
  t.equal(unified.statusCode, 200)
  t.equal(unified.json().partial, true)

  const whole = await build(t, { config: { rateLimits: NO_LIMITS } })
  const w = await signup(whole)
  await uploadDocument(whole, w, { filename: 'lantern.txt', content: 'The brass lantern hangs in the hallway.' })
  const body = (await whole.inject({ method: 'POST', url: '/api/knowledge/search', headers: w.auth,
    payload: { query: 'brass lantern' } })).json()
  t.equal(body.count, 1)
  t.notOk('partial' in body)
})

t.test('a query repeating a short unit is refused with 400, in every search', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  await uploadDocument(app, u, { filename: 'z.txt', content: 'zz '.repeat(2000) })
  for (const query of ['a'.repeat(1000), 'zz '.repeat(300), 'abc'.repeat(12), 'to be or not '.repeat(20)]) {
    for (const mode of ['hybrid', 'substring', 'words']) {
      const res = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: u.auth,
        payload: { query, mode } })
      t.equal(res.statusCode, 400, `${mode}: ${query.slice(0, 20)}…`)
      t.equal(res.json().code, 'VALIDATION_ERROR')
      t.match(res.json().message, /repeats/)
    }
    const unified = await app.inject({ method: 'POST', url: '/api/v2/search', headers: u.auth, payload: { query } })
    t.equal(unified.statusCode, 400)
  }
  // the assistant's tools find nothing for it rather than fail
  t.same(await app.knowledgeSearch.search(readerOf(u), {}, 'zz '.repeat(300), 5), [])
  // ordinary queries pass, long ones too
  t.equal((await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: u.auth,
    payload: { query: 'zz zz zz' } })).statusCode, 200)
  t.equal(repetitionProblem('a'.repeat(32)), undefined)
  t.ok(repetitionProblem('a'.repeat(33)))
  t.equal(repetitionProblem('How many weeks of parental leave do employees get? '.repeat(2)), undefined)
  t.equal(repetitionProblem('=== Heading ===\n' + 'The quick brown fox jumps over the lazy dog. '.repeat(1)),
    undefined)
})
