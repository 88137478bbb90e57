import t from 'tap'
import { build, signup, type TestUser } from '../../helper.js'
import type { App } from '../../../src/app.js'

// A refused workflow names each problem's field (a JSON pointer into the body), so that a form can show it there.
const h = (u: TestUser) => ({ ...u.auth, 'x-workspace-id': u.workspaceId })
const define = (app: App, u: TestUser, payload: object) =>
  app.inject({ method: 'POST', url: '/api/v2/workflows', headers: h(u), payload })

t.test('each problem of a refused definition carries its field', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const res = await define(app, u, {
    name: 'Broken', inputs: [{ name: 'topic' }, { name: 'topic' }, { name: '9lives' }],
    steps: [
      { id: 'find', type: 'search_knowledge', query: '{{inputs.subject}}' },
      { id: 'find', type: 'llm', prompt: 'Sum up {{steps.later.output}}' },
      { id: 'write', type: 'create_artifact', artifactType: 'task_plan', title: 'Plan',
        content: { summary: '{{ nonsense }}' } }
    ],
    schedule: { cron: 'not a cron' }
  })
  t.equal(res.statusCode, 400)
  const body = res.json()
  t.equal(body.code, 'INVALID_WORKFLOW')
  t.match(body.message, /^Invalid workflow: /, 'the message lists them as before')
  const byField = Object.fromEntries((body.problems as Array<{ field: string; message: string }>)
    .map((p) => [p.field, p.message]))
  t.match(byField, {
    '/inputs/1/name': /declared twice/,
    '/inputs/2/name': /must be an identifier/,
    '/steps/0/query': /\{\{inputs\.subject\}\} names an undeclared input/,
    '/steps/1/id': /id is used twice/,
    '/steps/1/prompt': /names no earlier step/,
    '/steps/2/content': /is not a reference/,
    '/schedule/cron': /schedule\.cron/
  })
  for (const p of body.problems as Array<{ message: string }>) t.ok(body.message.includes(p.message))
})

t.test('an agent or channel of another organization is a problem of its field, said as not found', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const stranger = await signup(app)
  const theirs = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: h(stranger),
    payload: { name: 'theirs', type: 'public' } })).json().data
  const res = await define(app, u, { name: 'Reach over', steps: [
    { id: 'ask', type: 'agent', agentId: '00000000-0000-4000-8000-000000000000', message: 'hello' },
    { id: 'say', type: 'post_message', channelId: theirs.id, content: 'hello' }
  ] })
  t.equal(res.statusCode, 400)
  t.same(res.json().problems.map((p: { field: string }) => p.field), ['/steps/0/agentId', '/steps/1/channelId'])
  t.match(res.json().problems[1].message, /not found in this workspace/)

  const mine = await define(app, u, { name: 'Mine', steps: [{ id: 'think', type: 'llm', prompt: 'hi' }] })
  const id = mine.json().workflow.id
  const foreign = await app.inject({ method: 'PUT', url: `/api/v2/workflows/${id}`, headers: h(stranger),
    payload: { name: 'taken', steps: [{ id: 'x', type: 'llm', prompt: '{{inputs.nope}}' }] } })
  t.equal(foreign.statusCode, 404, 'another organization\'s workflow is not found, before its definition is read')
  const replaced = await app.inject({ method: 'PUT', url: `/api/v2/workflows/${id}`, headers: h(u),
    payload: { name: 'Mine', steps: [{ id: 'x', type: 'llm', prompt: '{{inputs.nope}}' }] } })
  t.equal(replaced.statusCode, 400)
  t.same(replaced.json().problems.map((p: { field: string }) => p.field), ['/steps/0/prompt'], 'on replace too')
})
