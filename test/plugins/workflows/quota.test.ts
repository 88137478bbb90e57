// The runs quota (docs/api/assistant.md#workflows): an organization keeps at most CAIRN_QUOTA_RUNS runs; past it its
// oldest finished runs go, and a new run is refused only when its runs in flight alone reach it. Another
// organization's runs never count.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { build, signup, type TestUser } from '../../helper.js'
import type { App } from '../../../src/app.js'

const h = (u: TestUser) => ({ ...u.auth, 'x-workspace-id': u.workspaceId })
const quotas = (runs: number) => ({ storedBytes: 0, passages: 0, developerLogBytes: 0, runs })
const body = { name: 'plan', steps: [{ id: 'a', type: 'create_artifact', artifactType: 'task_plan', title: 't' }] }

async function defineWorkflow(app: App, u: TestUser): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v2/workflows', headers: h(u), payload: body })
  if (res.statusCode !== 201) throw new Error(`define: ${res.statusCode} ${res.body}`)
  return res.json().workflow.id as string
}
const execute = (app: App, u: TestUser, id: string) =>
  app.inject({ method: 'POST', url: `/api/v2/workflows/${id}/execute`, headers: h(u), payload: { inputs: {} } })

/** runs written straight into the table, `n` of them a second apart from `start` (seconds into 2026) */
function insertRuns(app: App, u: TestUser, workflowId: string, status: string, n: number, start = 0): string[] {
  const insert = app.sqlite.prepare(`INSERT INTO workflow_runs (id, workflow_id, workspace_id, customer_id,
    started_by, trigger, status, inputs, steps, created_at) VALUES (?, ?, ?, ?, ?, 'api', ?, '{}', '[]', ?)`)
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const id = randomUUID()
    insert.run(id, workflowId, u.workspaceId, u.customerId, u.userId, status,
      new Date(Date.UTC(2026, 0, 1, 0, 0, start + i)).toISOString())
    ids.push(id)
  }
  return ids
}
const runIds = (app: App, u: TestUser) => (app.sqlite.prepare(
  'SELECT id FROM workflow_runs WHERE customer_id = ? ORDER BY created_at').all(u.customerId) as Array<{ id: string }>)
  .map((r) => r.id)
const counted = (app: App, u: TestUser) => (app.sqlite.prepare(
  'SELECT count FROM workflow_run_counts WHERE customer_id = ?').get(u.customerId) as { count: number } | undefined)
  ?.count ?? 0
const runJobs = (app: App) => (app.sqlite.prepare(
  'SELECT COUNT(*) AS n FROM jobs WHERE type = \'workflow.run\'').get() as { n: number }).n

t.test('past the runs quota the organization\'s oldest finished runs go; another organization\'s stay', async (t) => {
  const app = await build(t, { config: { quotas: quotas(5) } })
  const [a, b] = [await signup(app), await signup(app)]
  const [wfA, wfB] = [await defineWorkflow(app, a), await defineWorkflow(app, b)]
  // A: a run in flight older than all, then completed and failed runs; B: many more finished runs than A's quota
  const [flying] = insertRuns(app, a, wfA, 'running', 1, 0)
  const completed = insertRuns(app, a, wfA, 'completed', 2, 10)
  const failed = insertRuns(app, a, wfA, 'failed', 1, 20)
  const newest = insertRuns(app, a, wfA, 'completed', 1, 30)
  const others = insertRuns(app, b, wfB, 'completed', 20, 5)
  t.equal(counted(app, a), 5, 'the counter follows inserts')

  const first = await execute(app, a, wfA)
  t.equal(first.statusCode, 202, first.body)
  const run1 = first.json().run.id as string
  t.same(runIds(app, a), [flying, completed[1], ...failed, ...newest, run1],
    'the oldest finished run went; the older run in flight stays')
  t.equal((await execute(app, a, wfA)).statusCode, 202)
  const kept = runIds(app, a)
  t.equal(kept.length, 5)
  t.same(kept.slice(0, 3), [flying, ...failed, ...newest], 'then the next oldest, completed or failed')
  t.equal(counted(app, a), 5, 'the counter follows deletes')
  t.same(runIds(app, b).sort(), [...others].sort(), 'another organization\'s runs are not touched')
  t.equal(counted(app, b), 20)

  // B is over A's quota of runs, but its own count is its own: B's executes prune only B's runs
  t.equal((await execute(app, b, wfB)).statusCode, 202)
  t.equal(runIds(app, b).length, 5)
  t.equal(runIds(app, a).length, 5)

  // deleting a workflow removes its runs and their count
  await app.jobs.idle()
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v2/workflows/${wfA}`, headers: h(a) })).statusCode, 200)
  t.equal(counted(app, a), 0)
})

t.test('when the runs in flight alone reach the quota, execute answers 413 QUOTA_EXCEEDED and writes nothing',
  async (t) => {
    const app = await build(t, { config: { quotas: quotas(3) } })
    const [a, b] = [await signup(app), await signup(app)]
    const [wfA, wfB] = [await defineWorkflow(app, a), await defineWorkflow(app, b)]
    insertRuns(app, a, wfA, 'completed', 1, 0)
    const flying = [...insertRuns(app, a, wfA, 'queued', 2, 10), ...insertRuns(app, a, wfA, 'running', 1, 20)]
    // B's runs in flight fill A's quota too: they count for B only
    insertRuns(app, b, wfB, 'queued', 3, 30)
    const before = { runs: runIds(app, a), jobs: runJobs(app) }

    const res = await execute(app, a, wfA)
    t.equal(res.statusCode, 413)
    t.same(res.json(), { success: false, statusCode: 413, error: 'Payload Too Large', code: 'QUOTA_EXCEEDED',
      message: res.json().message, requestId: res.json().requestId, quota: 'runs', limit: 3, used: 3 })
    t.match(res.json().message, /3 workflow runs queued or running/)
    t.same(runIds(app, a), before.runs, 'no run written, and none of the finished ones removed')
    t.equal(runJobs(app), before.jobs, 'no job queued')
    t.same(runIds(app, a).filter((id) => flying.includes(id)), flying, 'runs in flight are never removed')

    // one run finishes: there is room again, and the finished run makes way for the new one
    app.sqlite.prepare('UPDATE workflow_runs SET status = \'completed\' WHERE id = ?').run(flying[0])
    const again = await execute(app, a, wfA)
    t.equal(again.statusCode, 202, again.body)
    t.equal(runIds(app, a).length, 3)
    t.ok(runIds(app, a).includes(again.json().run.id))

    // B, with its own runs in flight at the quota, is refused too, whatever A does
    t.equal((await execute(app, b, wfB)).statusCode, 413)
  })

t.test('a schedule\'s tick is skipped while the runs in flight fill the quota, and runs again after', async (t) => {
  const app = await build(t, { config: { quotas: quotas(2) } })
  const u = await signup(app)
  const wf = await defineWorkflow(app, u)
  const flying = insertRuns(app, u, wf, 'running', 2)
  const scheduled = () => (app.sqlite.prepare(`SELECT COUNT(*) AS n FROM workflow_runs
    WHERE workflow_id = ? AND trigger = 'schedule'`).get(wf) as { n: number }).n
  t.equal((await app.inject({ method: 'PUT', url: `/api/v2/workflows/${wf}`, headers: h(u),
    payload: { ...body, schedule: { cron: '* * * * * *' } } })).statusCode, 200)
  await new Promise((r) => setTimeout(r, 2500))
  t.equal(scheduled(), 0, 'no scheduled run while the runs in flight fill the quota')
  t.same(runIds(app, u), flying)

  app.sqlite.prepare('UPDATE workflow_runs SET status = \'failed\' WHERE customer_id = ?').run(u.customerId)
  for (let i = 0; i < 400 && scheduled() === 0; i++) await new Promise((r) => setTimeout(r, 25))
  t.ok(scheduled() > 0, 'a tick starts a run once there is room')
  await app.inject({ method: 'PUT', url: `/api/v2/workflows/${wf}`, headers: h(u), payload: body })
  await app.jobs.idle()
  t.ok(runIds(app, u).length <= 2, 'the quota holds')
})

t.test('CAIRN_QUOTA_RUNS: 0 keeps every run', async (t) => {
  const app = await build(t, { config: { quotas: quotas(0) } })
  const u = await signup(app)
  const wf = await defineWorkflow(app, u)
  insertRuns(app, u, wf, 'running', 5)
  insertRuns(app, u, wf, 'completed', 5, 10)
  t.equal((await execute(app, u, wf)).statusCode, 202)
  t.equal(runIds(app, u).length, 11)
})
