import t from 'tap'
import { build, signup, uploadDocument } from '../helper.js'

t.test('a JSON body is taken with its own types: no string becomes a number, no number a string', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const headers = { ...u.auth, 'x-workspace-id': u.workspaceId }
  await uploadDocument(app, u, { filename: 'notes.md', content: 'needle in the haystack\n'.repeat(50) })
  const search = (body: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/knowledge/search',
    headers, payload: { query: 'needle', ...body } })

  for (const mode of ['substring', 'words', 'hybrid']) {
    for (const limit of ['Infinity', '1e400', '-Infinity', '5', '']) {
      const res = await search({ mode, limit })
      t.equal(res.statusCode, 400, `${mode} limit ${JSON.stringify(limit)}`)
      t.match(res.json(), { code: 'VALIDATION_ERROR', message: 'body/limit must be integer' })
    }
    t.equal((await search({ mode, limit: 101 })).statusCode, 400, 'the maximum holds')
    const ok = await search({ mode, limit: 100 })
    t.equal(ok.statusCode, 200)
    t.ok(ok.json().results.length <= 100)
  }
  t.match((await search({ query: 5 })).json(), { code: 'VALIDATION_ERROR', message: 'body/query must be string' })
  t.equal((await search({ query: ['needle'] })).statusCode, 400, 'an array is not its one string')
  t.equal((await search({ limit: true })).statusCode, 400)

  const artifact = (score: unknown) => app.inject({ method: 'POST', url: '/api/v2/artifacts', headers,
    payload: { type: 'task_plan', title: 'x', confidence: { score } } })
  t.equal((await artifact('0.5')).statusCode, 400, 'a number written as a string')
  t.equal((await artifact(0.5)).statusCode, 201)

  // text parts of a request are still read as their schema says: a query parameter is always a string
  const listed = await app.inject({ url: '/api/v2/artifacts?limit=5', headers })
  t.equal(listed.statusCode, 200)
  t.equal(listed.json().meta.limit, 5)
})
