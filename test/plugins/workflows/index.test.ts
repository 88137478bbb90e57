import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { build, signup, addUser, multipart, type TestUser } from '../../helper.js'
import { fakeLlm } from '../../fake-llm.js'
import type { App } from '../../../src/app.js'

const h = (u: TestUser) => ({ ...u.auth, 'x-workspace-id': u.workspaceId })
async function define(app: App, u: TestUser, payload: object) {
  return app.inject({ method: 'POST', url: '/api/v2/workflows', headers: h(u), payload })
}
async function waitRun(app: App, u: TestUser, runId: string) {
  for (let i = 0; i < 200; i++) {
    await app.jobs.idle()
    const run = (await app.inject({ url: `/api/v2/workflow-runs/${runId}`, headers: h(u) })).json().run
    if (run.status === 'completed' || run.status === 'failed') return run
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error('run did not finish')
}

t.test('definitions are validated, references included', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const bad: Array<[string, object]> = [
    ['unknown type', { name: 'w', steps: [{ id: 'a', type: 'shell', command: 'rm' }] }],
    ['no steps', { name: 'w', steps: [] }],
    ['missing prompt', { name: 'w', steps: [{ id: 'a', type: 'llm' }] }],
    ['undeclared input', { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: '{{inputs.topic}}' }] }],
    ['later step',
      { name: 'w',
        steps: [{ id: 'a', type: 'llm', prompt: '{{steps.b.output}}' }, { id: 'b', type: 'llm', prompt: 'x' }] }],
    ['not a reference', { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: '{{ process.env }}' }] }],
    ['duplicate id',
      { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: 'x' }, { id: 'a', type: 'llm', prompt: 'y' }] }],
    ['bad cron', { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: 'x' }], schedule: { cron: 'every tuesday' } }],
    ['unknown agent',
      { name: 'w',
        steps: [{ id: 'a', type: 'agent', agentId: '00000000-0000-4000-8000-000000000000', message: 'x' }] }],
    ['unknown channel',
      { name: 'w',
        steps: [{ id: 'a', type: 'post_message', channelId: '00000000-0000-4000-8000-000000000000', content: 'x' }] }],
    ['bad artifact type',
      { name: 'w', steps: [{ id: 'a', type: 'create_artifact', artifactType: 'poem', title: 'x' }] }]
  ]
  for (const [why, payload] of bad) {
    const res = await define(app, u, payload)
    t.equal(res.statusCode, 400, why)
  }
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/workflows', headers: u.auth,
    payload: { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: 'x' }] } })).statusCode, 400,
  'workspace context needed')
  // a step is checked against its own type only: the message names what is wrong with it
  const missing = (await define(app, u, { name: 'w', steps: [{ id: 'a', type: 'llm' }] })).json().message
  t.match(missing, /steps\/0 must have required property 'prompt'/)
  t.notMatch(missing, /query|agentId|channelId/)
  t.match((await define(app, u, { name: 'w', steps: [{ id: 'a', type: 'shell' }] })).json().message, /tag "type"/)
})

t.test('a run executes every step, records outputs, creates and posts, and sends workflow.completed', async (t) => {
  const received: Array<{ event: string; data: Record<string, unknown> }> = []
  const rx = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => { raw += c })
    req.on('end', () => { received.push(JSON.parse(raw)); res.writeHead(200); res.end('ok') })
  })
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r))
  t.teardown(() => rx.close())
  const llm = await fakeLlm(t, { answer: (b) => `SUMMARY(${b.messages[b.messages.length - 1].content})` })
  const app = await build(t, { config: { allowPrivateUrls: true, llm: { baseUrl: llm.baseUrl, model: 'fake' } } })
  const u = await signup(app)
  const body = multipart([{ filename: 'tides.txt', content: 'Spring tides follow the new moon.' }])
  await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...body.headers },
    payload: body.payload })
  await app.jobs.idle()
  await app.inject({ method: 'POST', url: '/api/v2/developer/webhooks', headers: h(u), payload: { url: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/`, events: ['workflow.completed'] } })
  const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: h(u),
    payload: { name: 'reports', type: 'private' } })).json().data

  const created = await define(app, u, {
    name: 'Tide report', description: 'weekly',
    inputs: [{ name: 'topic', required: true }, { name: 'tone', default: 'calm' }],
    steps: [
      { id: 'find', type: 'search_knowledge', query: '{{inputs.topic}}' },
      { id: 'write', type: 'llm', prompt: 'Write ({{inputs.tone}}): {{steps.find.output}}' },
      { id: 'file', type: 'create_artifact', artifactType: 'research_summary', title: 'About {{inputs.topic}}',
        content: { kind: 'report' } },
      { id: 'share', type: 'post_message', channelId: channel.id, content: '{{steps.write.output}}' }
    ]
  })
  t.equal(created.statusCode, 201)
  const wf = created.json().workflow
  t.same((await app.inject({ url: '/api/v2/workflows', headers: h(u) })).json().workflows.map((w: { id: string;
    name: string }) => [w.id, w.name]), [[wf.id, 'Tide report']])

  t.equal((await app.inject({ method: 'POST', url: `/api/v2/workflows/${wf.id}/execute`, headers: h(u),
    payload: { inputs: {} } })).statusCode, 400, 'missing required input')
  const exec = await app.inject({ method: 'POST', url: `/api/v2/workflows/${wf.id}/execute`, headers: h(u),
    payload: { inputs: { topic: 'tides' } } })
  t.equal(exec.statusCode, 202)
  const run = await waitRun(app, u, exec.json().run.id)
  t.equal(run.status, 'completed', run.error ?? '')
  t.same(run.steps.map((s: { id: string; status: string }) => [s.id, s.status]),
    [['find', 'completed'], ['write', 'completed'], ['file', 'completed'], ['share', 'completed']])
  t.equal(run.outputs.find, 'Spring tides follow the new moon.')
  t.equal(run.outputs.write, 'SUMMARY(Write (calm): Spring tides follow the new moon.)')
  t.same(run.inputs, { topic: 'tides', tone: 'calm' })
  const artifact = (await app.inject({ url: `/api/v2/artifacts/${run.outputs.file}`, headers: h(u) })).json().data
  t.match(artifact, { type: 'research_summary', title: 'About tides', workflow_id: wf.id, workflow_run_id: run.id })
  const posted = (await app.inject({ url: `/api/v2/channels/${channel.id}/messages`, headers: u.auth })).json().data
  t.equal(posted[0].content, run.outputs.write)
  await app.jobs.idle()
  t.equal(received.length, 1)
  t.equal(received[0].event, 'workflow.completed')
  t.same(Object.keys(received[0].data).sort(),
    ['duration_ms', 'finished_at', 'run_id', 'started_at', 'status', 'workflow_id', 'workflow_name', 'workspace_id'])
  t.match(received[0].data,
    { workspace_id: u.workspaceId, run_id: run.id, workflow_id: wf.id, workflow_name: 'Tide report',
      status: 'completed' })
  t.notOk(JSON.stringify(received[0]).includes('Spring tides'), 'never the inputs or outputs')
  const runs = (await app.inject({ url: `/api/v2/workflows/${wf.id}/runs`, headers: h(u) })).json().runs
  t.same(runs.map((r: { id: string }) => r.id), [run.id])

  const stranger = await signup(app)
  for (const [method, url] of [['GET', `/api/v2/workflows/${wf.id}`], ['POST', `/api/v2/workflows/${wf.id}/execute`],
    ['GET', `/api/v2/workflows/${wf.id}/runs`],
    ['GET', `/api/v2/workflow-runs/${run.id}`], ['DELETE', `/api/v2/workflows/${wf.id}`]] as const) {
    t.equal((await app.inject({ method, url, headers: h(stranger),
      payload: method === 'POST' ? {} : undefined })).statusCode, 404, `${method} ${url}`)
  }
})

t.test('a failing step fails the run and names the step', async (t) => {
  const broken = await fakeLlm(t, { status: 500 })
  const app = await build(t, { config: { llm: { baseUrl: broken.baseUrl, model: 'x' } } })
  const u = await signup(app)
  const wf = (await define(app, u,
    { name: 'w',
      steps: [{ id: 'first', type: 'search_knowledge', query: 'anything' },
        { id: 'think', type: 'llm', prompt: 'x' }] })).json().workflow
  const run = await waitRun(app, u,
    (await app.inject({ method: 'POST', url: `/api/v2/workflows/${wf.id}/execute`, headers: h(u),
      payload: {} })).json().run.id)
  t.equal(run.status, 'failed')
  t.match(run.error, /^Step "think" failed: .*500/)
  t.same(run.steps.map((s: { status: string }) => s.status), ['completed', 'failed'])
  t.type(run.finished_at, 'string')
})

t.test('a cron schedule fires on time', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const wf = (await define(app, u,
    { name: 'tick', steps: [{ id: 'a', type: 'search_knowledge', query: '{{inputs.q}}' }],
      inputs: [{ name: 'q', required: true }],
      schedule: { cron: '* * * * * *', inputs: { q: 'tick' } } })).json().workflow
  t.same(wf.schedule, { cron: '* * * * * *', inputs: { q: 'tick' } })
  let runs: Array<{ trigger: string; status: string; inputs: unknown }> = []
  for (let i = 0; i < 60 && runs.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 100))
    runs = (await app.inject({ url: `/api/v2/workflows/${wf.id}/runs`, headers: h(u) })).json().runs
  }
  t.ok(runs.length >= 1, 'fired within seconds')
  t.equal(runs[0].trigger, 'schedule')
  t.same(runs[0].inputs, { q: 'tick' })
  // removing the schedule stops it
  await app.inject({ method: 'PUT', url: `/api/v2/workflows/${wf.id}`, headers: h(u),
    payload: { name: 'tick', steps: [{ id: 'a', type: 'search_knowledge', query: 'x' }] } })
  await new Promise((r) => setTimeout(r, 1200))
  const count = (await app.inject({ url: `/api/v2/workflows/${wf.id}/runs`, headers: h(u) })).json().runs.length
  await new Promise((r) => setTimeout(r, 1500))
  t.equal((await app.inject({ url: `/api/v2/workflows/${wf.id}/runs`, headers: h(u) })).json().runs.length, count,
    'no more runs once unscheduled')
})

t.test('a workflow acts with the rights of who last saved it; only its creator or a workspace ' +
  'admin may change it', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const addMember = async (role: 'admin' | 'member') => {
    const u = await addUser(app, owner, 'member')
    const res = await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`,
      headers: owner.auth, payload: { userId: u.userId, role } })
    t.equal(res.statusCode, 201)
    return { ...u, workspaceId: owner.workspaceId }
  }
  const member = await addMember('member')
  const admin = await addMember('admin')
  const secret = multipart([{ filename: 'diary.txt', content: 'The vault combination is lighthouse-4471.' }],
    { scope: 'personal' })
  t.equal((await app.inject({ method: 'POST', url: '/api/knowledge/upload',
    headers: { ...owner.auth, ...secret.headers }, payload: secret.payload })).statusCode, 201)
  await app.jobs.idle()
  const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: h(owner),
    payload: { name: 'general', type: 'public' } })).json().data
  const wf = (await define(app, owner,
    { name: 'harmless', steps: [{ id: 'a', type: 'llm', prompt: 'hello' }] })).json().workflow

  // the attack: a plain member rewrites a colleague's workflow to read the creator's documents on a
  // schedule
  const attack = {
    name: 'harmless',
    steps: [{ id: 'steal', type: 'search_knowledge', query: 'vault combination' },
      { id: 'leak', type: 'post_message', channelId: channel.id, content: '{{steps.steal.output}}' }],
    schedule: { cron: '* * * * * *' }
  }
  const put = await app.inject({ method: 'PUT', url: `/api/v2/workflows/${wf.id}`, headers: h(member),
    payload: attack })
  t.equal(put.statusCode, 403, 'a member may not change a colleague\'s workflow')
  t.equal(put.json().code, 'WORKFLOW_FORBIDDEN')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/workflows/${wf.id}`, headers: h(member) })).statusCode,
    403, 'nor delete it')
  t.same((await app.inject({ url: `/api/v2/workflows/${wf.id}`, headers: h(member) })).json().workflow.steps,
    [{ id: 'a', type: 'llm', prompt: 'hello' }], 'unchanged')

  // a workspace admin may change it; the scheduled run then acts as the admin, who cannot read the owner's personal
  // documents
  const saved = await app.inject({ method: 'PUT', url: `/api/v2/workflows/${wf.id}`, headers: h(admin),
    payload: attack })
  t.equal(saved.statusCode, 200)
  t.equal(saved.json().workflow.updated_by, admin.userId)
  t.equal(saved.json().workflow.created_by, owner.userId)
  let runs: Array<{ id: string; trigger: string; started_by: string }> = []
  for (let i = 0; i < 100 && runs.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50))
    runs = (await app.inject({ url: `/api/v2/workflows/${wf.id}/runs`, headers: h(owner) })).json().runs
  }
  t.ok(runs.length >= 1, 'the schedule fired')
  t.match(runs[0], { trigger: 'schedule', started_by: admin.userId })
  await app.inject({ method: 'PUT', url: `/api/v2/workflows/${wf.id}`, headers: h(owner),
    payload: { name: 'harmless', steps: [{ id: 'a', type: 'llm', prompt: 'hello' }] } })
  // the run executes the definition it was created with, and only the admin (its user) sees its outputs
  const run = await waitRun(app, admin, runs[runs.length - 1].id)
  t.equal(run.steps[0].id, 'steal')
  t.equal(run.steps[0].status, 'completed')
  t.notMatch(run.steps[0].output, /lighthouse/, 'the run did not read the creator\'s personal documents')
  // the search found nothing the admin may read, and an empty message is refused as the message route refuses it
  t.equal(run.status, 'failed')
  t.match(run.error, /^Step "leak" failed: content would be empty/)
  const posted = (await app.inject({ url: `/api/v2/channels/${channel.id}/messages`, headers: owner.auth })).json().data
  t.ok(posted.every((m: { sender_id: string; content: string }) => m.sender_id === admin.userId &&
    !m.content.includes('lighthouse')), 'posted as the admin, without the secret')

  // executing acts as the caller: the member's run cannot read the owner's personal documents either
  const mine = (await define(app, owner,
    { name: 'reader', steps: [{ id: 'find', type: 'search_knowledge', query: 'vault combination' }] })).json().workflow
  const asOwner = await waitRun(app, owner,
    (await app.inject({ method: 'POST', url: `/api/v2/workflows/${mine.id}/execute`, headers: h(owner),
      payload: {} })).json().run.id)
  t.match(asOwner.outputs.find, /lighthouse-4471/, 'the owner reads their own document')
  const asMember = await waitRun(app, member,
    (await app.inject({ method: 'POST', url: `/api/v2/workflows/${mine.id}/execute`, headers: h(member),
      payload: {} })).json().run.id)
  t.notMatch(asMember.outputs.find, /lighthouse/, 'a member executing it reads only what the member may read')

  // the creator may change and delete their own workflow; the workspace owner may delete any
  const own = (await define(app, member,
    { name: 'mine', steps: [{ id: 'a', type: 'llm', prompt: 'x' }] })).json().workflow
  t.equal((await app.inject({ method: 'PUT', url: `/api/v2/workflows/${own.id}`, headers: h(member),
    payload: { name: 'mine 2', steps: [{ id: 'a', type: 'llm', prompt: 'y' }] } })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/workflows/${own.id}`, headers: h(member) })).statusCode,
    200, 'the creator deletes their own')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/workflows/${mine.id}`, headers: h(owner) })).statusCode,
    200, 'the workspace owner deletes any')
})

t.test('a scheduled run whose user left the workspace fails instead of acting', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const u = await addUser(app, owner, 'member')
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
    payload: { userId: u.userId, role: 'member' } })
  const member = { ...u, workspaceId: owner.workspaceId }
  const wf = (await define(app, member,
    { name: 'w', steps: [{ id: 'a', type: 'create_artifact', artifactType: 'task_plan', title: 'x' }],
      schedule: { cron: '* * * * * *' } })).json().workflow
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/workspaces/${owner.workspaceId}/members/${member.userId}`,
    headers: owner.auth })).statusCode, 200)
  const removedAt = new Date().toISOString()
  let later: Array<{ id: string; created_at: string }> = []
  for (let i = 0; i < 100 && later.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50))
    later = (await app.inject({ url: `/api/v2/workflows/${wf.id}/runs`,
      headers: h(owner) })).json().runs.filter((r: { created_at: string }) => r.created_at > removedAt)
  }
  t.ok(later.length >= 1, 'the schedule fired after the member left')
  const run = await waitRun(app, owner, later[later.length - 1].id)
  t.equal(run.status, 'failed')
  t.match(run.error, /no longer a member/)
  const made = app.sqlite.prepare(`SELECT COUNT(*) AS n FROM artifacts
    WHERE workflow_run_id = ?`).get(run.id) as { n: number }
  t.equal(made.n, 0, 'nothing created as the member who left')
})

t.test('agents: only the creator or an organization owner/admin deletes one', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const member = await addUser(app, owner, 'member')
  const other = await addUser(app, owner, 'member')
  const admin = await addUser(app, owner, 'admin')
  const make = async (u: TestUser) => (await app.inject({ method: 'POST', url: '/api/v2/agents', headers: u.auth,
    payload: { name: 'a', systemPrompt: 'p' } })).json().agent.id as string
  const a1 = await make(member)
  const del = (u: TestUser, id: string) => app.inject({ method: 'DELETE', url: `/api/v2/agents/${id}`,
    headers: u.auth })
  const refused = await del(other, a1)
  t.equal(refused.statusCode, 403)
  t.equal(refused.json().code, 'AGENT_FORBIDDEN')
  t.equal((await app.inject({ url: `/api/v2/agents/${a1}`, headers: member.auth })).statusCode, 200, 'still there')
  t.equal((await del(member, a1)).statusCode, 200, 'its creator may')
  t.equal((await del(admin, await make(member))).statusCode, 200, 'an org admin may')
  t.equal((await del(owner, await make(member))).statusCode, 200, 'an org owner may')
  const stranger = await signup(app)
  t.equal((await del(stranger, await make(member))).statusCode, 404, 'another organization: 404')
})

t.test('create_artifact fills templates in every string, nested ones included', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const wf = (await define(app, u, {
    name: 'w', inputs: [{ name: 'topic' }],
    steps: [
      { id: 'find', type: 'search_knowledge', query: 'nothing-matches-{{inputs.topic}}' },
      { id: 'file', type: 'create_artifact', artifactType: 'research_summary', title: 'On {{inputs.topic}}',
        content: { summary: 'About {{inputs.topic}}.',
          sections: [{ heading: '{{inputs.topic}}', body: ['[{{steps.find.output}}]'] }], count: 3 } }
    ]
  })).json().workflow
  t.equal((await define(app, u,
    { name: 'bad',
      steps: [{ id: 'a', type: 'create_artifact', artifactType: 'task_plan', title: 'x',
        content: { deep: ['{{steps.zzz.output}}'] } }] })).statusCode, 400, 'nested references are checked too')
  const run = await waitRun(app, u,
    (await app.inject({ method: 'POST', url: `/api/v2/workflows/${wf.id}/execute`, headers: h(u),
      payload: { inputs: { topic: 'tides' } } })).json().run.id)
  t.equal(run.status, 'completed', run.error ?? '')
  const artifact = (await app.inject({ url: `/api/v2/artifacts/${run.outputs.file}`, headers: h(u) })).json().data
  t.equal(artifact.title, 'On tides')
  t.same(artifact.content, { summary: 'About tides.', sections: [{ heading: 'tides', body: ['[]'] }], count: 3 })
})
