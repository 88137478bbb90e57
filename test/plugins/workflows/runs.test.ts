// A run executes what was authorized, as whom, and shows its outputs only to that person; every filled step keeps
// the limits of the route it stands for; a schedule's runs are pruned.
import t, { type Test } from 'tap'
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { build, signup, addUser, multipart, type TestUser } from '../../helper.js'
import type { App } from '../../../src/app.js'

const h = (u: TestUser) => ({ ...u.auth, 'x-workspace-id': u.workspaceId })
const define = (app: App, u: TestUser, payload: object) =>
  app.inject({ method: 'POST', url: '/api/v2/workflows', headers: h(u), payload })
const execute = async (app: App, u: TestUser, id: string, inputs: object = {}) => {
  const res = await app.inject({ method: 'POST', url: `/api/v2/workflows/${id}/execute`, headers: h(u),
    payload: { inputs } })
  if (res.statusCode !== 202) throw new Error(`execute: ${res.statusCode} ${res.body}`)
  return res.json().run.id as string
}
const getRun = async (app: App, u: TestUser, runId: string) =>
  (await app.inject({ url: `/api/v2/workflow-runs/${runId}`, headers: h(u) })).json().run
async function waitRun(app: App, u: TestUser, runId: string) {
  for (let i = 0; i < 400; i++) {
    await app.jobs.idle()
    const run = await getRun(app, u, runId)
    if (run.status === 'completed' || run.status === 'failed') return run
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error('run did not finish')
}

/**
 * An OpenAI-compatible model on 127.0.0.1 that holds every answer until `release()`: runs with an `llm` step keep
 * the job queue's workflow slots busy meanwhile, as a member who keeps the shared queue busy would.
 */
async function heldModel(t: Test) {
  let open = false
  const waiting: Array<() => void> = []
  let received = 0
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      received++
      const answer = () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk',
          choices: [{ index: 0, delta: { role: 'assistant', content: 'done' } }] })}\n\n`)
        res.end('data: [DONE]\n\n')
      }
      if (open) answer()
      else waiting.push(answer)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => { open = true; for (const w of waiting) w(); server.close() })
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    /** resolves once `n` answers are being held */
    async holding(n: number) {
      for (let i = 0; i < 400 && waiting.length < n; i++) await new Promise((r) => setTimeout(r, 25))
      if (waiting.length < n) throw new Error(`only ${waiting.length} model calls held`)
    },
    release() { open = true; for (const w of waiting.splice(0)) w() },
    /** holds answers again */
    hold() { open = false },
    get received() { return received }
  }
}

/** an owner, and a plain member of the owner's workspace */
async function team(app: App, t: Test) {
  const owner = await signup(app)
  const u = await addUser(app, owner, 'member')
  const res = await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`,
    headers: owner.auth, payload: { userId: u.userId, role: 'member' } })
  t.equal(res.statusCode, 201)
  return { owner, member: { ...u, workspaceId: owner.workspaceId } }
}

/** the member fills both workflow slots of the job queue with runs whose model call is held */
async function busyQueue(app: App, model: Awaited<ReturnType<typeof heldModel>>, member: TestUser) {
  const slow = (await define(app, member, { name: 'slow', steps: [{ id: 'think', type: 'llm', prompt: 'wait' }] }))
    .json().workflow
  const runs = [await execute(app, member, slow.id), await execute(app, member, slow.id)]
  await model.holding(2)
  return runs
}

async function uploadPersonal(app: App, u: TestUser, text: string) {
  const body = multipart([{ filename: 'diary.txt', content: text }], { scope: 'personal' })
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...body.headers },
    payload: body.payload })
  if (res.statusCode !== 201) throw new Error(`upload: ${res.statusCode} ${res.body}`)
  await app.jobs.idle()
}

t.test('a queued run executes the definition its user executed, not a later edit', async (t) => {
  const model = await heldModel(t)
  const app = await build(t, { config: { llm: { baseUrl: model.baseUrl, model: 'held' } } })
  const { owner, member } = await team(app, t)
  await uploadPersonal(app, owner, 'The vault combination is lighthouse-4471.')
  const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: h(owner),
    payload: { name: 'general', type: 'public' } })).json().data

  // the member's own workflow, harmless as the owner sees it
  const wf = (await define(app, member, { name: 'weekly plan',
    steps: [{ id: 'plan', type: 'create_artifact', artifactType: 'task_plan', title: 'Weekly plan' }] }))
    .json().workflow
  const blockers = await busyQueue(app, model, member)
  const runId = await execute(app, owner, wf.id)
  // a second run of the owner's, as if queued before runs kept their definition
  const legacyId = await execute(app, owner, wf.id)
  app.sqlite.prepare('UPDATE workflow_runs SET definition = NULL WHERE id = ?').run(legacyId)
  t.equal((await getRun(app, owner, runId)).status, 'queued', 'the owner\'s run waits behind the member\'s')

  // while it waits, the member (its creator, so allowed) rewrites it to read the owner's diary into a public channel
  const put = await app.inject({ method: 'PUT', url: `/api/v2/workflows/${wf.id}`, headers: h(member), payload: {
    name: 'weekly plan',
    steps: [{ id: 'steal', type: 'search_knowledge', query: 'vault combination' },
      { id: 'leak', type: 'post_message', channelId: channel.id, content: 'found: {{steps.steal.output}}' }]
  } })
  t.equal(put.statusCode, 200)
  model.release()

  const run = await waitRun(app, owner, runId)
  t.equal(run.status, 'completed', run.error ?? '')
  t.equal(run.started_by, owner.userId)
  t.same(run.steps.map((s: { id: string }) => s.id), ['plan'], 'the steps the owner executed')
  const artifact = (await app.inject({ url: `/api/v2/artifacts/${run.outputs.plan}`, headers: h(owner) })).json().data
  t.match(artifact, { title: 'Weekly plan', workflow_run_id: runId, created_by: owner.userId })
  const posted = (await app.inject({ url: `/api/v2/channels/${channel.id}/messages`, headers: owner.auth })).json()
  t.same(posted.data, [], 'nothing was posted to the public channel')

  const legacy = await waitRun(app, owner, legacyId)
  t.equal(legacy.status, 'failed', 'a run without a fixed definition never runs an edit made after it was queued')
  t.match(legacy.error, /changed after this run was queued/)
  t.same(legacy.steps, [])
  for (const id of blockers) t.equal((await waitRun(app, member, id)).status, 'completed')
  const leaked = app.sqlite.prepare('SELECT COUNT(*) AS n FROM channel_messages WHERE content LIKE ?')
    .get('%lighthouse%') as { n: number }
  t.equal(leaked.n, 0)
})

t.test('a queued run of a user removed from the workspace does not run', async (t) => {
  const model = await heldModel(t)
  const app = await build(t, { config: { llm: { baseUrl: model.baseUrl, model: 'held' } } })
  const { owner, member } = await team(app, t)
  const wf = (await define(app, owner,
    { name: 'w', steps: [{ id: 'a', type: 'create_artifact', artifactType: 'task_plan', title: 'x' }] }))
    .json().workflow
  await busyQueue(app, model, owner)
  const runId = await execute(app, member, wf.id)
  t.equal((await app.inject({ method: 'DELETE',
    url: `/api/v2/workspaces/${owner.workspaceId}/members/${member.userId}`, headers: owner.auth })).statusCode, 200)
  model.release()
  const run = await waitRun(app, owner, runId)
  t.equal(run.status, 'failed')
  t.match(run.error, /no longer a member/)
  const made = app.sqlite.prepare('SELECT COUNT(*) AS n FROM artifacts WHERE workflow_run_id = ?').get(runId) as
    { n: number }
  t.equal(made.n, 0, 'nothing created as the member who left')

  // a person removed from the organization (the row stays, marked removed) does not act either
  const other = await team(app, t)
  await app.jobs.idle()
  model.hold()
  await busyQueue(app, model, other.owner)
  const wf2 = (await define(app, other.owner,
    { name: 'w', steps: [{ id: 'a', type: 'create_artifact', artifactType: 'task_plan', title: 'x' }] }))
    .json().workflow
  const second = await execute(app, other.member, wf2.id)
  app.sqlite.prepare('UPDATE users SET removed_at = ? WHERE id = ?').run(new Date().toISOString(), other.member.userId)
  model.release()
  const refused = await waitRun(app, other.owner, second)
  t.equal(refused.status, 'failed')
  t.match(refused.error, /no longer a member/)
})

t.test('a run\'s inputs and outputs are shown to its user only', async (t) => {
  const app = await build(t)
  const { owner, member } = await team(app, t)
  await uploadPersonal(app, owner, 'The vault combination is lighthouse-4471.')
  const wf = (await define(app, owner, { name: 'reader', inputs: [{ name: 'q' }],
    steps: [{ id: 'find', type: 'search_knowledge', query: '{{inputs.q}}' }] })).json().workflow
  const runId = await execute(app, owner, wf.id, { q: 'vault combination' })
  const mine = await waitRun(app, owner, runId)
  t.equal(mine.status, 'completed', mine.error ?? '')
  t.match(mine.outputs.find, /lighthouse-4471/, 'the owner sees what the run read as the owner')
  t.same(mine.inputs, { q: 'vault combination' })
  t.match(mine.steps[0], { id: 'find', status: 'completed', output: /lighthouse/ })

  const seen = await getRun(app, member, runId)
  t.match(seen, { id: runId, status: 'completed', started_by: owner.userId, outputs: null, inputs: {}, error: null })
  t.same(seen.steps.map((s: Record<string, unknown>) => [s.id, s.status, 'output' in s]),
    [['find', 'completed', false]])
  const listed = (await app.inject({ url: `/api/v2/workflows/${wf.id}/runs`, headers: h(member) })).json().runs
  t.equal(listed.length, 1)
  for (const body of [JSON.stringify(seen), JSON.stringify(listed)]) {
    t.notMatch(body, /lighthouse|vault/, 'neither the passage nor the query reaches another member')
  }
  // the member's own run of the same workflow: the member sees it, the owner does not see its outputs
  const theirs = await waitRun(app, member, await execute(app, member, wf.id, { q: 'vault combination' }))
  t.type(theirs.outputs.find, 'string')
  t.notMatch(theirs.outputs.find, /lighthouse/, 'the member\'s run read only what the member may read')
  t.equal((await getRun(app, owner, theirs.id)).outputs, null)
})

t.test('a filled step keeps the limits of the route it stands for', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: h(u),
    payload: { name: 'general', type: 'public' } })).json().data
  const messages = async () => (await app.inject({ url: `/api/v2/channels/${channel.id}/messages?limit=100`,
    headers: u.auth })).json().data as Array<{ id: string; content: string }>

  // a post's output (its message id, 36 characters) repeated 2,000 times: 72,000 characters from a 38 KB definition
  const amplify = (await define(app, u, { name: 'amplify', steps: [
    { id: 's1', type: 'post_message', channelId: channel.id, content: 'seed' },
    { id: 's2', type: 'post_message', channelId: channel.id, content: '{{steps.s1.output}}'.repeat(2000) }
  ] })).json().workflow
  const run = await waitRun(app, u, await execute(app, u, amplify.id))
  t.equal(run.status, 'failed')
  t.equal(run.error, 'Step "s2" failed: content would be more than 40000 characters, the most a channel message ' +
    '(POST /api/v2/messages) holds')
  t.same(run.steps.map((s: { id: string; status: string }) => [s.id, s.status]), [['s1', 'completed'],
    ['s2', 'failed']])
  t.same((await messages()).map((m) => m.content), ['seed'], 'only the first message was posted')

  // inputs too, and the limit is the route's own: 40,000 characters pass, one more does not
  const echo = (await define(app, u, { name: 'echo', inputs: [{ name: 'text' }, { name: 'times' }],
    steps: [{ id: 'say', type: 'post_message', channelId: channel.id, content: '{{inputs.text}}{{inputs.text}}' }] }))
    .json().workflow
  const ok = await waitRun(app, u, await execute(app, u, echo.id, { text: 'x'.repeat(20_000) }))
  t.equal(ok.status, 'completed', ok.error ?? '')
  t.equal((await messages())[0].content.length, 40_000)
  const over = await waitRun(app, u, await execute(app, u, echo.id, { text: 'x'.repeat(20_001) }))
  t.equal(over.status, 'failed')
  t.match(over.error, /content would be more than 40000 characters/)
  const empty = await waitRun(app, u, await execute(app, u, echo.id, { text: '' }))
  t.equal(empty.status, 'failed', 'an empty message is refused as the route refuses it')
  t.match(empty.error, /content would be empty/)
  t.equal((await messages()).length, 2, 'nothing posted by the refused runs')

  // an artifact: its title within the route's 500 characters, its content within the route's body limit
  const file = (await define(app, u, { name: 'file', inputs: [{ name: 'title' }, { name: 'blob' }],
    steps: [{ id: 'save', type: 'create_artifact', artifactType: 'research_summary', title: '{{inputs.title}}',
      content: { summary: 'x', findings: Array.from({ length: 20 }, () => ({ text: '{{inputs.blob}}' })) } }] }))
    .json().workflow
  const longTitle = await waitRun(app, u, await execute(app, u, file.id, { title: 't'.repeat(501), blob: 'b' }))
  t.equal(longTitle.status, 'failed')
  t.match(longTitle.error, /title would be more than 500 characters, the most an artifact title/)
  const big = await waitRun(app, u, await execute(app, u, file.id, { title: 'big', blob: 'b'.repeat(100_000) }))
  t.equal(big.status, 'failed', '20 × 100 KB is past the artifact route\'s 1 MiB body')
  t.match(big.error, /content would be more than 1048576 bytes/)
  const fine = await waitRun(app, u, await execute(app, u, file.id, { title: 'fine', blob: 'b'.repeat(10_000) }))
  t.equal(fine.status, 'completed', fine.error ?? '')
  const made = app.sqlite.prepare('SELECT title FROM artifacts WHERE workflow_id = ?').all(file.id)
  t.same(made, [{ title: 'fine' }], 'only the run within the limits created an artifact')

  // a fixed text already over its route's limit is refused when the workflow is saved
  const res = await define(app, u, { name: 'too long',
    steps: [{ id: 'say', type: 'post_message', channelId: channel.id, content: 'y'.repeat(40_001) }] })
  t.equal(res.statusCode, 400)
  t.equal(res.json().code, 'INVALID_WORKFLOW')
  t.match(res.json().message, /content is over 40000 characters/)

  // 200 KB of `{{` (no template in it) is read in one pass, not once per brace pair: saved, and run as text
  const braces = (await define(app, u, { name: 'braces', steps: [{ id: 'a', type: 'create_artifact',
    artifactType: 'task_plan', title: 'braces', content: { summary: '{{'.repeat(100_000) + '{{ inputs.x }' } }] }))
  t.equal(braces.statusCode, 201, braces.body.slice(0, 200))
  const spaced = (await define(app, u, { name: 'spaced', inputs: [{ name: 'who' }],
    steps: [{ id: 'say', type: 'post_message', channelId: channel.id, content: 'hi {{{  inputs.who  }}}' }] }))
    .json().workflow
  t.equal((await waitRun(app, u, await execute(app, u, spaced.id, { who: 'sam' }))).status, 'completed')
  t.equal((await messages())[0].content, 'hi {sam}', 'a name is trimmed; braces around a template stay text')
})

t.test('a schedule keeps its newest runs and never queues a second while one waits', async (t) => {
  const model = await heldModel(t)
  const app = await build(t, { config: { llm: { baseUrl: model.baseUrl, model: 'held' } } })
  const u = await signup(app)
  const body = { name: 'tick', steps: [{ id: 'a', type: 'create_artifact', artifactType: 'task_plan', title: 't' }] }
  const wf = (await define(app, u, body)).json().workflow
  // 150 old finished scheduled runs and 3 old runs from execute
  const insert = app.sqlite.prepare(`INSERT INTO workflow_runs (id, workflow_id, workspace_id, customer_id,
    started_by, trigger, status, inputs, steps, created_at, finished_at)
    VALUES (?, ?, ?, ?, ?, ?, 'completed', '{}', '[]', ?, ?)`)
  for (let i = 0; i < 153; i++) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()
    insert.run(randomUUID(), wf.id, u.workspaceId, u.customerId, u.userId, i < 150 ? 'schedule' : 'api', at, at)
  }
  const count = (trigger: string) => (app.sqlite.prepare(`SELECT COUNT(*) AS n FROM workflow_runs
    WHERE workflow_id = ? AND trigger = ?`).get(wf.id, trigger) as { n: number }).n
  t.equal(count('schedule'), 150)
  t.equal((await app.inject({ method: 'PUT', url: `/api/v2/workflows/${wf.id}`, headers: h(u),
    payload: { ...body, schedule: { cron: '* * * * * *' } } })).statusCode, 200)
  for (let i = 0; i < 200 && count('schedule') !== 100; i++) await new Promise((r) => setTimeout(r, 25))
  t.equal(count('schedule'), 100, 'the newest 100 scheduled runs are kept')
  t.equal(count('api'), 3, 'runs from execute are not a schedule\'s to prune')
  const oldest = app.sqlite.prepare(`SELECT MIN(created_at) AS at FROM workflow_runs
    WHERE workflow_id = ? AND trigger = 'schedule'`).get(wf.id) as { at: string }
  t.ok(oldest.at > new Date(Date.UTC(2026, 0, 1, 0, 0, 50)).toISOString(), 'the oldest went first')

  // with the queue's workflow slots held, ticks do not pile runs up: one waits, later ticks are skipped
  await busyQueue(app, model, u)
  const waiting = () => (app.sqlite.prepare(`SELECT COUNT(*) AS n FROM workflow_runs
    WHERE workflow_id = ? AND trigger = 'schedule' AND status = 'queued'`).get(wf.id) as { n: number }).n
  for (let i = 0; i < 200 && waiting() === 0; i++) await new Promise((r) => setTimeout(r, 25))
  t.equal(waiting(), 1)
  const total = count('schedule')
  await new Promise((r) => setTimeout(r, 2500))
  t.equal(waiting(), 1, 'still one waiting after more ticks')
  t.equal(count('schedule'), total, 'no run added while one waits')
  await app.inject({ method: 'PUT', url: `/api/v2/workflows/${wf.id}`, headers: h(u), payload: body })
  model.release()
})
