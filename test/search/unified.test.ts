import t from 'tap'
import { randomUUID } from 'node:crypto'
import { build, signup, searching, type TestUser } from '../helper.js'
import type { App } from '../../src/app.js'
import { createKindSearch, OWN_ROWS } from '../../src/search/kinds.js'

const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

/** `n` copies of an artifact row with new ids and the given titles (the columns read from the table itself) */
function copyArtifact(app: App, id: string, titles: string[]) {
  const columns = (app.sqlite.prepare('SELECT name FROM pragma_table_info(\'artifacts\')').pluck().all() as string[])
    .filter((c) => c !== 'id' && c !== 'title')
  const insert = app.sqlite.prepare(`INSERT INTO artifacts (id, title, ${columns.join(', ')})
    SELECT ?, ?, ${columns.join(', ')} FROM artifacts WHERE id = ?`)
  app.sqlite.transaction(() => { for (const title of titles) insert.run(randomUUID(), title, id) })()
}

async function artifact(app: App, u: TestUser, title: string, content: unknown) {
  const res = await app.inject({ method: 'POST', url: '/api/v2/artifacts',
    headers: { ...u.auth, 'x-workspace-id': u.workspaceId }, payload: { type: 'task_plan', title, content } })
  return res.json().data as { id: string }
}

t.test('unified search never returns or counts another organization\'s rows, in either plan', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const small = await signup(app)
  const large = await signup(app)
  const mine = await artifact(app, small, 'Polish the lantern', { steps: ['buy polish'] })
  const theirs = await artifact(app, large, 'Their lantern plan', { steps: ['lantern '.repeat(2000)] })
  // the large organization has more rows than are read without the index; many hold the query, some large
  copyArtifact(app, theirs.id, Array.from({ length: OWN_ROWS + 100 }, (_, i) => i % 3 ? `other ${i}` : `lantern ${i}`))
  const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels',
    headers: { ...large.auth, 'x-workspace-id': large.workspaceId }, payload: { name: 'x', type: 'public' } })).json()
    .data as { id: string }
  await app.inject({ method: 'POST', url: '/api/v2/messages', headers: large.auth,
    payload: { channel_id: channel.id, content: 'the lantern of the large organization' } })

  const ask = async (u: TestUser, query: string, limit = 100) => {
    const res = await app.inject({ method: 'POST', url: '/api/v2/search', headers: u.auth, payload: { query, limit } })
    t.equal(res.statusCode, 200)
    return res.json() as { results: Array<{ kind: string; id: string; title: string }>; count: number }
  }
  const found = await ask(small, 'lantern')
  t.same(found.results.map((r) => `${r.kind}:${r.id}`), [`artifact:${mine.id}`], 'only its own artifact')
  t.equal(found.count, 1, 'and counted alone')

  // the large organization searches through the index: its own matches, never the small one's
  const big = await ask(large, 'lantern')
  t.notOk(big.results.some((r) => r.id === mine.id))
  t.ok(big.results.some((r) => r.kind === 'message'))
  const largeIds = new Set(app.sqlite.prepare('SELECT id FROM artifacts WHERE customer_id = ?').pluck()
    .all(large.customerId) as string[])
  t.ok(big.results.filter((r) => r.kind === 'artifact').every((r) => largeIds.has(r.id)))
  t.equal(big.count, big.results.length)

  // the same through the kinds' own search, with both plans: the caller's rows only, each holding the query
  const kinds = createKindSearch(searching(t, app)[0])
  const of = (u: TestUser) => ({ customerId: u.customerId, userId: u.userId, workspaceIds: [u.workspaceId],
    query: 'LANTERN', limit: 100 })
  t.same(kinds.search(of(small)).hits.map((h) => h.id), [mine.id], 'a small caller reads its own rows')
  const indexed = kinds.search(of(large))
  t.notOk(indexed.partial)
  t.ok(indexed.hits.length > 1)
  t.ok(indexed.hits.every((h) => h.kind === 'message' || largeIds.has(h.id)),
    'through the index, only the caller\'s rows')
  t.ok(indexed.hits.every((h) => /lantern/i.test(h.snippet)), 'each hit holds the query')
  t.ok(indexed.hits.every((h) => h.snippet.includes('<mark>')))

  // a spent budget: partial, nothing of anyone else
  const spent = kinds.search(of(large), () => true)
  t.ok(spent.partial)
  t.same(spent.hits, [])

  // short queries do not reach the trigram indexes
  t.same((await ask(small, 'la')).results.filter((r) => r.kind !== 'knowledge'), [])
})
