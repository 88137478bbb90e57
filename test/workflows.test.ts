import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { build, signup, multipart, type TestUser } from './helper.js'
import { fakeLlm } from './fake-llm.js'
import type { App } from '../src/app.js'

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
    ['later step', { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: '{{steps.b.output}}' }, { id: 'b', type: 'llm', prompt: 'x' }] }],
    ['not a reference', { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: '{{ process.env }}' }] }],
    ['duplicate id', { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: 'x' }, { id: 'a', type: 'llm', prompt: 'y' }] }],
    ['bad cron', { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: 'x' }], schedule: { cron: 'every tuesday' } }],
    ['unknown agent', { name: 'w', steps: [{ id: 'a', type: 'agent', agentId: '00000000-0000-4000-8000-000000000000', message: 'x' }] }],
    ['unknown channel', { name: 'w', steps: [{ id: 'a', type: 'post_message', channelId: '00000000-0000-4000-8000-000000000000', content: 'x' }] }],
    ['bad artifact type', { name: 'w', steps: [{ id: 'a', type: 'create_artifact', artifactType: 'poem', title: 'x' }] }]
  ]
  for (const [why, payload] of bad) {
    const res = await define(app, u, payload)
    t.equal(res.statusCode, 400, why)
  }
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/workflows', headers: u.auth, payload: { name: 'w', steps: [{ id: 'a', type: 'llm', prompt: 'x' }] } })).statusCode, 400, 'workspace context needed')
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
  await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...body.headers }, payload: body.payload })
  await app.jobs.idle()
  await app.inject({ method: 'POST', url: '/api/v2/developer/webhooks', headers: h(u), payload: { url: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/`, events: ['workflow.completed'] } })
  const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: h(u), payload: { name: 'reports', type: 'private' } })).json().data

  const created = await define(app, u, {
    name: 'Tide report', description: 'weekly',
    inputs: [{ name: 'topic', required: true }, { name: 'tone', default: 'calm' }],
    steps: [
      { id: 'find', type: 'search_knowledge', query: '{{inputs.topic}}' },
      { id: 'write', type: 'llm', prompt: 'Write ({{inputs.tone}}): {{steps.find.output}}' },
      { id: 'file', type: 'create_artifact', artifactType: 'research_summary', title: 'About {{inputs.topic}}', content: { kind: 'report' } },
      { id: 'share', type: 'post_message', channelId: channel.id, content: '{{steps.write.output}}' }
    ]
  })
  t.equal(created.statusCode, 201)
  const wf = created.json().workflow
  t.same((await app.inject({ url: '/api/v2/workflows', headers: h(u) })).json().workflows.map((w: { id: string; name: string }) => [w.id, w.name]), [[wf.id, 'Tide report']])

  t.equal((await app.inject({ method: 'POST', url: `/api/v2/workflows/${wf.id}/execute`, headers: h(u), payload: { inputs: {} } })).statusCode, 400, 'missing required input')
  const exec = await app.inject({ method: 'POST', url: `/api/v2/workflows/${wf.id}/execute`, headers: h(u), payload: { inputs: { topic: 'tides' } } })
  t.equal(exec.statusCode, 202)
  const run = await waitRun(app, u, exec.json().run.id)
  t.equal(run.status, 'completed', run.error ?? '')
  t.same(run.steps.map((s: { id: string; status: string }) => [s.id, s.status]), [['find', 'completed'], ['write', 'completed'], ['file', 'completed'], ['share', 'completed']])
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
  t.same(Object.keys(received[0].data).sort(), ['duration_ms', 'finished_at', 'run_id', 'started_at', 'status', 'workflow_id', 'workflow_name', 'workspace_id'])
  t.match(received[0].data, { workspace_id: u.workspaceId, run_id: run.id, workflow_id: wf.id, workflow_name: 'Tide report', status: 'completed' })
  t.notOk(JSON.stringify(received[0]).includes('Spring tides'), 'never the inputs or outputs')
  const runs = (await app.inject({ url: `/api/v2/workflows/${wf.id}/runs`, headers: h(u) })).json().runs
  t.same(runs.map((r: { id: string }) => r.id), [run.id])

  const stranger = await signup(app)
  for (const [method, url] of [['GET', `/api/v2/workflows/${wf.id}`], ['POST', `/api/v2/workflows/${wf.id}/execute`], ['GET', `/api/v2/workflows/${wf.id}/runs`],
    ['GET', `/api/v2/workflow-runs/${run.id}`], ['DELETE', `/api/v2/workflows/${wf.id}`]] as const) {
    t.equal((await app.inject({ method, url, headers: h(stranger), payload: method === 'POST' ? {} : undefined })).statusCode, 404, `${method} ${url}`)
  }
})

t.test('a failing step fails the run and names the step', async (t) => {
  const broken = await fakeLlm(t, { status: 500 })
  const app = await build(t, { config: { llm: { baseUrl: broken.baseUrl, model: 'x' } } })
  const u = await signup(app)
  const wf = (await define(app, u, { name: 'w', steps: [{ id: 'first', type: 'search_knowledge', query: 'anything' }, { id: 'think', type: 'llm', prompt: 'x' }] })).json().workflow
  const run = await waitRun(app, u, (await app.inject({ method: 'POST', url: `/api/v2/workflows/${wf.id}/execute`, headers: h(u), payload: {} })).json().run.id)
  t.equal(run.status, 'failed')
  t.match(run.error, /^Step "think" failed: .*500/)
  t.same(run.steps.map((s: { status: string }) => s.status), ['completed', 'failed'])
  t.type(run.finished_at, 'string')
})

t.test('a cron schedule fires on time', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const wf = (await define(app, u, { name: 'tick', steps: [{ id: 'a', type: 'search_knowledge', query: '{{inputs.q}}' }], inputs: [{ name: 'q', required: true }], schedule: { cron: '* * * * * *', inputs: { q: 'tick' } } })).json().workflow
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
  await app.inject({ method: 'PUT', url: `/api/v2/workflows/${wf.id}`, headers: h(u), payload: { name: 'tick', steps: [{ id: 'a', type: 'search_knowledge', query: 'x' }] } })
  await new Promise((r) => setTimeout(r, 1200))
  const count = (await app.inject({ url: `/api/v2/workflows/${wf.id}/runs`, headers: h(u) })).json().runs.length
  await new Promise((r) => setTimeout(r, 1500))
  t.equal((await app.inject({ url: `/api/v2/workflows/${wf.id}/runs`, headers: h(u) })).json().runs.length, count, 'no more runs once unscheduled')
})
