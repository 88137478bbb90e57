import t from 'tap'
import { randomUUID } from 'node:crypto'
import { build, signup, addUser, createKey, type TestUser } from '../../helper.js'
import type { App } from '../../../src/app.js'
import { CHAIN_SQL } from '../../../src/artifacts/store.js'

const BASE = '/api/v2/artifacts'

function client(app: App, user: TestUser, workspaceId = user.workspaceId) {
  const headers = { ...user.auth, 'x-workspace-id': workspaceId }
  return {
    create: (payload: object) => app.inject({ method: 'POST', url: BASE, headers, payload }),
    get: (id: string) => app.inject({ url: `${BASE}/${id}`, headers }),
    list: (query = '') => app.inject({ url: `${BASE}${query}`, headers }),
    patch: (id: string, payload: object) => app.inject({ method: 'PATCH', url: `${BASE}/${id}`, headers, payload }),
    del: (id: string) => app.inject({ method: 'DELETE', url: `${BASE}/${id}`, headers }),
    status: (id: string, status: string) => app.inject({ method: 'POST', url: `${BASE}/${id}/status`, headers,
      payload: { status } }),
    comment: (id: string, payload: object) => app.inject({ method: 'POST', url: `${BASE}/${id}/comments`, headers,
      payload }),
    supersede: (id: string, payload: object = {}) => app.inject({ method: 'POST', url: `${BASE}/${id}/supersede`,
      headers, payload }),
    chain: (id: string) => app.inject({ url: `${BASE}/${id}/chain`, headers }),
    byConversation: (id: string) => app.inject({ url: `${BASE}/conversation/${id}`, headers }),
    byRun: (id: string) => app.inject({ url: `${BASE}/workflow/${id}`, headers })
  }
}

async function make(c: ReturnType<typeof client>, payload: object = {}) {
  const res = await c.create({ type: 'task_plan', title: 'Plan', ...payload })
  if (res.statusCode !== 201) throw new Error(res.body)
  return res.json().data
}

t.test('type metadata needs no auth', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: `${BASE}/meta/types` })
  t.equal(res.statusCode, 200)
  t.same(res.json().data, {
    types: {
      TASK_PLAN: 'task_plan', IMPLEMENTATION_PLAN: 'implementation_plan', WALKTHROUGH: 'walkthrough',
      VERIFICATION_PROOF: 'verification_proof', DECISION_RECORD: 'decision_record', PLAN_MODE: 'plan_mode',
      CODE_CHANGE: 'code_change', RESEARCH_SUMMARY: 'research_summary'
    },
    statuses: { DRAFT: 'draft', PENDING_REVIEW: 'pending_review', APPROVED: 'approved', REJECTED: 'rejected',
      SUPERSEDED: 'superseded' }
  })
})

t.test('create: defaults, all fields, validation', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const c = client(app, u)
  const minimal = await c.create({ type: 'decision_record', title: 'Use SQLite' })
  t.equal(minimal.statusCode, 201)
  const a = minimal.json().data
  t.match(a, {
    workspace_id: u.workspaceId, customer_id: u.customerId, type: 'decision_record', subtype: null, title: 'Use SQLite',
    content: {}, status: 'draft', workflow_id: null, workflow_run_id: null, conversation_id: null, message_id: null,
    parent_artifact_id: null, related_artifacts: [], confidence_score: null, review_policy: 'agent_decides',
    created_by: u.userId
  })
  t.match(a.id, /^[0-9a-f-]{36}$/)
  t.equal(a.created_at, a.updated_at)

  const wf = randomUUID(); const run = randomUUID(); const conv = randomUUID()
  const full = await c.create({
    type: 'implementation_plan', title: 'Full', subtype: 'backend', content: { steps: [{ n: 1, text: 'do it' }] },
    workflow_id: wf, workflow_run_id: run, parent_artifact_id: a.id, related_artifacts: [a.id, a.id],
    conversation_id: conv, message_id: 'msg-42', confidence: { score: 0.85, rationale: 'tests pass' },
    review_policy: 'request_review'
  })
  t.equal(full.statusCode, 201)
  t.match(full.json().data, {
    subtype: 'backend', content: { steps: [{ n: 1, text: 'do it' }] }, workflow_id: wf, workflow_run_id: run,
    parent_artifact_id: a.id, related_artifacts: [a.id], conversation_id: conv, message_id: 'msg-42',
    confidence_score: 0.85, review_policy: 'request_review', status: 'draft'
  })

  const bad: Array<[string, object]> = [
    ['invalid type', { type: 'poem', title: 'x' }],
    ['missing type', { title: 'x' }],
    ['missing title', { type: 'task_plan' }],
    ['empty title', { type: 'task_plan', title: '' }],
    ['bad workflow_id', { type: 'task_plan', title: 'x', workflow_id: 'nope' }],
    ['bad workflow_run_id', { type: 'task_plan', title: 'x', workflow_run_id: '123' }],
    ['bad parent', { type: 'task_plan', title: 'x', parent_artifact_id: 'abc' }],
    ['bad related', { type: 'task_plan', title: 'x', related_artifacts: ['abc'] }],
    ['bad conversation', { type: 'task_plan', title: 'x', conversation_id: 'c-1' }],
    ['score above 1', { type: 'task_plan', title: 'x', confidence: { score: 1.5 } }],
    ['score below 0', { type: 'task_plan', title: 'x', confidence: { score: -0.1 } }],
    ['confidence without score', { type: 'task_plan', title: 'x', confidence: {} }],
    ['bad policy', { type: 'task_plan', title: 'x', review_policy: 'yolo' }],
    ['content not an object', { type: 'task_plan', title: 'x', content: 'text' }]
  ]
  for (const [name, payload] of bad) {
    const res = await c.create(payload)
    t.equal(res.statusCode, 400, name)
    t.equal(res.json().success, false)
  }
  const unknownParent = await c.create({ type: 'task_plan', title: 'x', parent_artifact_id: randomUUID() })
  t.equal(unknownParent.statusCode, 400)
  t.equal(unknownParent.json().code, 'INVALID_REFERENCE')
  t.equal((await c.list()).json().meta.count, 2, 'refused creations left nothing behind')
})

t.test('workspace context: missing 400, non-member 403, foreign ids 404, query parameter works', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const other = await signup(app)
  const mine = await make(client(app, u))
  const theirs = await make(client(app, other))

  const noContext = await app.inject({ url: BASE, headers: u.auth })
  t.equal(noContext.statusCode, 400)
  t.equal(noContext.json().code, 'WORKSPACE_REQUIRED')
  t.equal((await app.inject({ method: 'POST', url: BASE, headers: u.auth,
    payload: { type: 'task_plan', title: 'x' } })).statusCode, 400)
  t.equal((await app.inject({ url: `${BASE}/${mine.id}`, headers: u.auth })).statusCode, 400)

  t.equal((await app.inject({ url: `${BASE}?workspace_id=${u.workspaceId}`, headers: u.auth })).statusCode, 200)
  t.equal((await app.inject({ url: `${BASE}/${mine.id}?workspace_id=${u.workspaceId}`, headers: u.auth })).statusCode,
    200)

  const foreign = client(app, u, other.workspaceId)
  t.equal((await foreign.list()).statusCode, 403)
  t.equal((await foreign.get(theirs.id)).statusCode, 403)
  t.equal((await app.inject({ url: `${BASE}?workspace_id=${other.workspaceId}`, headers: u.auth })).statusCode, 403)

  // another workspace's artifact through my own workspace: 404 on every route
  const c = client(app, u)
  for (const res of [
    await c.get(theirs.id), await c.patch(theirs.id, { title: 'x' }), await c.del(theirs.id),
    await c.status(theirs.id, 'approved'),
    await c.comment(theirs.id, { content: 'x' }), await c.supersede(theirs.id), await c.chain(theirs.id)
  ]) t.equal(res.statusCode, 404)
  t.equal((await c.create({ type: 'task_plan', title: 'x', parent_artifact_id: theirs.id })).statusCode, 400,
    'cannot link to a foreign artifact')
  t.equal((await c.create({ type: 'task_plan', title: 'x', related_artifacts: [theirs.id] })).json().code,
    'INVALID_REFERENCE')
  t.same((await c.list()).json().data.map((a: { id: string }) => a.id), [mine.id])
  const still = await client(app, other).get(theirs.id)
  t.equal(still.json().data.status, 'draft', 'untouched')

  // a second workspace of the same organization is separate too
  const member = await addUser(app, u)
  const ws2 = (await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: u.auth,
    payload: { name: 'Two' } })).json().data
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws2.id}/members`, headers: u.auth,
    payload: { userId: member.userId, role: 'member' } })
  const inTwo = client(app, member, ws2.id)
  t.equal((await inTwo.get(mine.id)).statusCode, 404, 'another workspace of the same org')
  t.equal((await client(app, member, u.workspaceId).list()).statusCode, 403, 'member of Two only')

  // API keys have no capability for artifacts
  const key = await createKey(app, u, ['read', 'write', 'execute'])
  t.equal((await app.inject({ url: BASE,
    headers: { 'x-api-key': key.key, 'x-workspace-id': u.workspaceId } })).statusCode, 403)
})

t.test('get, patch, delete', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const c = client(app, u)
  const a = await make(c, { content: { a: 1 } })
  const got = await c.get(a.id)
  t.equal(got.statusCode, 200)
  t.same(got.json().data.content, { a: 1 })
  t.same(got.json().data.comments, [])
  t.same(got.json().data.related_artifacts, [])

  const patched = await c.patch(a.id,
    { title: 'Renamed', content: { b: 2 }, confidence: { score: 0.5 }, review_policy: 'always_proceed' })
  t.equal(patched.statusCode, 200)
  t.match(patched.json().data,
    { title: 'Renamed', content: { b: 2 }, confidence_score: 0.5, review_policy: 'always_proceed', status: 'draft' })
  t.ok(patched.json().data.updated_at > a.updated_at, 'updated_at moves')
  t.equal((await c.patch(a.id, {})).statusCode, 400, 'nothing to update')
  t.equal((await c.patch(a.id, { status: 'approved' })).statusCode, 400, 'status is not patched')
  t.equal((await c.patch(a.id, { confidence: { score: 2 } })).statusCode, 400)
  t.equal((await c.patch(randomUUID(), { title: 'x' })).statusCode, 404)
  t.equal((await c.get('not-a-uuid')).statusCode, 400)

  const del = await c.del(a.id)
  t.equal(del.statusCode, 200)
  t.same(del.json(), { success: true, message: 'Artifact deleted' })
  t.equal((await c.get(a.id)).statusCode, 404)
  t.equal((await c.del(a.id)).statusCode, 404)
})

t.test('every status move records the reviewer', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const reviewer = await addUser(app, owner)
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
    payload: { userId: reviewer.userId, role: 'member' } })
  const a = await make(client(app, owner))
  const r = client(app, reviewer, owner.workspaceId)
  const statuses = ['draft', 'pending_review', 'approved', 'rejected', 'superseded']
  for (const from of statuses) {
    for (const to of statuses) {
      await app.sqlite.prepare('UPDATE artifacts SET status = ? WHERE id = ?').run(from, a.id)
      const res = await r.status(a.id, to)
      t.equal(res.statusCode, 200, `${from} → ${to}`)
      t.same(Object.keys(res.json().data).sort(), ['id', 'reviewed_by', 'status', 'title', 'type', 'updated_at'])
      t.equal(res.json().data.status, to)
      t.equal(res.json().data.reviewed_by, reviewer.userId)
    }
  }
  const after = await r.get(a.id)
  t.equal(after.json().data.reviewed_by, reviewer.userId)
  t.equal((await r.status(a.id, 'done')).statusCode, 400)
  t.equal((await r.status(a.id, '')).statusCode, 400)
  t.equal((await r.status(randomUUID(), 'approved')).statusCode, 404)
})

t.test('comments with and without position, in order', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const c = client(app, u)
  const a = await make(c)
  const first = await c.comment(a.id, { content: 'Looks good' })
  t.equal(first.statusCode, 201)
  const d1 = first.json().data
  t.same(Object.keys(d1).sort(), ['comments', 'id', 'title', 'type', 'updated_at'])
  t.equal(d1.comments.length, 1)
  t.match(d1.comments[0], { user_id: u.userId, content: 'Looks good' })
  t.notOk('position' in d1.comments[0], 'no position when none was given')
  const second = await c.comment(a.id, { content: 'Step 2 is risky', position: { step: 2, line: { from: 3, to: 5 } } })
  const d2 = second.json().data
  t.same(d2.comments.map((x: { content: string }) => x.content), ['Looks good', 'Step 2 is risky'])
  t.same(d2.comments[1].position, { step: 2, line: { from: 3, to: 5 } })
  t.ok(d2.updated_at > a.updated_at)
  t.same((await c.get(a.id)).json().data.comments, d2.comments, 'stored with the artifact')
  t.equal((await c.comment(a.id, {})).statusCode, 400)
  t.equal((await c.comment(a.id, { content: '' })).statusCode, 400)
  t.equal((await c.comment(a.id, { content: 'x', position: 'top' })).statusCode, 400)
  t.equal((await c.comment(randomUUID(), { content: 'x' })).statusCode, 404)
})

t.test('supersede: inherits, defaults, branches, chains from every member, deleted middle link', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const c = client(app, u)
  const wf = randomUUID()
  const a = await make(c,
    { type: 'walkthrough', subtype: 'ui', workflow_id: wf, content: { v: 1 }, confidence: { score: 0.4 },
      review_policy: 'request_review' })

  const b = (await c.supersede(a.id, { title: 'Plan v2', content: { v: 2 }, confidence: { score: 0.9 } })).json().data
  t.match(b,
    { type: 'walkthrough', subtype: 'ui', workflow_id: wf, title: 'Plan v2', content: { v: 2 }, confidence_score: 0.9,
      status: 'draft', parent_artifact_id: a.id })
  t.equal((await c.get(a.id)).json().data.status, 'superseded')

  const defaulted = await c.supersede(b.id)
  t.equal(defaulted.statusCode, 201)
  const cc = defaulted.json().data
  t.match(cc, { title: 'Plan v2', content: { v: 2 }, confidence_score: 0.9, parent_artifact_id: b.id, status: 'draft' })

  // a branch: a second successor of b
  const branch = (await c.supersede(b.id, { title: 'Alternative' })).json().data
  t.equal(branch.parent_artifact_id, b.id)
  const d = (await c.supersede(cc.id)).json().data
  const unrelated = await make(c, { title: 'Other' })

  const expected = [a.id, b.id, cc.id, branch.id, d.id]
  for (const member of expected) {
    const res = await c.chain(member)
    t.equal(res.statusCode, 200)
    t.same(res.json().data.map((x: { id: string }) => x.id), expected,
      `chain from ${member === a.id ? 'root' : member === d.id ? 'leaf' : 'middle'}`)
  }
  const links = (await c.chain(a.id)).json().data
  t.same(Object.keys(links[0]).sort(), ['created_at', 'id', 'parent_artifact_id', 'status', 'title', 'type'])
  t.same((await c.chain(unrelated.id)).json().data.map((x: { id: string }) => x.id), [unrelated.id])

  // delete the middle link b: the chain still connects a with b's successors
  t.equal((await c.del(b.id)).statusCode, 200)
  t.equal((await c.get(cc.id)).json().data.parent_artifact_id, b.id, 'children keep their parent id')
  for (const member of [a.id, cc.id, branch.id, d.id]) {
    t.same((await c.chain(member)).json().data.map((x: { id: string }) => x.id), [a.id, cc.id, branch.id, d.id])
  }
  t.equal((await c.chain(b.id)).statusCode, 404)
  // and deleting the root, too
  await c.del(a.id)
  t.same((await c.chain(d.id)).json().data.map((x: { id: string }) => x.id), [cc.id, branch.id, d.id])
  t.equal((await c.supersede(randomUUID())).statusCode, 404)
})

t.test('list: filters, pagination, total count, newest first', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const c = client(app, u)
  const wf = randomUUID(); const run = randomUUID(); const conv = randomUUID()
  const made = []
  for (let i = 0; i < 7; i++) {
    made.push(await make(c, {
      type: i % 2 ? 'code_change' : 'task_plan', title: `A${i}`,
      ...(i < 3 ? { workflow_id: wf, workflow_run_id: run } : {}),
      ...(i >= 5 ? { conversation_id: conv, message_id: `m${i}` } : {})
    }))
  }
  await c.status(made[1].id, 'approved')
  const all = (await c.list()).json()
  t.same(all.data.map((a: { title: string }) => a.title), ['A6', 'A5', 'A4', 'A3', 'A2', 'A1', 'A0'])
  t.same(all.meta, { count: 7, limit: 50, offset: 0 })
  t.notOk('comments' in all.data[0])

  const page = (await c.list('?limit=2&offset=2')).json()
  t.same(page.data.map((a: { title: string }) => a.title), ['A4', 'A3'])
  t.same(page.meta, { count: 7, limit: 2, offset: 2 })
  t.same((await c.list('?type=code_change')).json().meta.count, 3)
  t.same((await c.list('?type=code_change&limit=1')).json().meta, { count: 3, limit: 1, offset: 0 })
  t.same((await c.list('?status=approved')).json().data.map((a: { title: string }) => a.title), ['A1'])
  t.same((await c.list(`?workflow_id=${wf}`)).json().meta.count, 3)
  t.same((await c.list(`?workflow_run_id=${run}&type=task_plan`)).json().data.map((a: { title: string }) => a.title),
    ['A2', 'A0'])
  t.same((await c.list(`?conversation_id=${conv}`)).json().meta.count, 2)
  t.same((await c.list('?message_id=m6')).json().data.map((a: { title: string }) => a.title), ['A6'])
  for (const q of ['?limit=101', '?limit=0', '?offset=-1', '?type=poem', '?status=done', '?workflow_id=x']) {
    t.equal((await c.list(q)).statusCode, 400, q)
  }

  const byConv = (await c.byConversation(conv)).json().data
  t.same(byConv.map((a: { title: string }) => a.title), ['A6', 'A5'])
  t.same(Object.keys(byConv[0]).sort(), ['created_at', 'id', 'status', 'subtype', 'title', 'type', 'updated_at'])
  t.same((await c.byRun(run)).json().data.map((a: { title: string }) => a.title), ['A2', 'A1', 'A0'])
  t.same((await c.byRun(randomUUID())).json().data, [])
  t.equal((await c.byRun('nope')).statusCode, 400)
})

t.test('a chain of 1,000 versions comes back in one query path', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 30, voiceNotes: 100, artifacts: 0, default: 600 } } })
  const u = await signup(app)
  const c = client(app, u)
  let last = await make(c, { title: 'v0' })
  const first = last
  for (let i = 1; i < 1000; i++) last = (await c.supersede(last.id, { title: `v${i}` })).json().data
  const plan = (app.sqlite.prepare(`EXPLAIN QUERY PLAN ${CHAIN_SQL}`).all({ id: first.id, workspaceId: u.workspaceId,
    customerId: u.customerId }) as Array<{ detail: string }>)
    .map((p) => p.detail)
  t.ok(plan.some((d) => /SEARCH a USING INDEX artifacts_parent_idx/.test(d)), 'children found through the parent index')
  t.notOk(plan.some((d) => /^SCAN (a|t|artifacts|artifact_tombstones)\b/.test(d)), `no table scan: ${plan.join(' | ')}`)
  t.notOk(plan.some((d) => /artifacts_ws_/.test(d)), `no walk over the workspace's artifacts: ${plan.join(' | ')}`)
  for (const from of [first.id, last.id]) {
    const res = await c.chain(from)
    t.equal(res.statusCode, 200)
    const ids = res.json().data
    t.equal(ids.length, 1000)
    t.equal(ids[0].title, 'v0')
    t.equal(ids[999].title, 'v999')
  }
  const counted = (app.sqlite.prepare(`SELECT COUNT(*) AS n FROM artifacts
    WHERE status = 'superseded'`).get() as { n: number }).n
  t.equal(counted, 999)
})

t.test('rate limit of the group', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 30, voiceNotes: 100, artifacts: 3, default: 600 } } })
  const u = await signup(app)
  const c = client(app, u)
  for (let i = 0; i < 3; i++) t.equal((await c.list()).statusCode, 200)
  t.equal((await c.list()).statusCode, 429)
  t.equal((await app.inject({ url: `${BASE}/meta/types` })).statusCode, 200,
    'an anonymous caller has its own (per IP) budget')
  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: u.auth })).statusCode, 200, 'other groups unaffected')
})

t.test('the unfiltered total stays exact through creates, supersedes and deletes', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 30, voiceNotes: 100, artifacts: 0, default: 600 } } })
  const u = await signup(app)
  const other = await signup(app)
  const c = client(app, u)
  const a = await make(c)
  const b = await make(c)
  await make(client(app, other))
  await c.supersede(a.id)
  t.equal((await c.list()).json().meta.count, 3)
  await c.del(b.id)
  await c.del(a.id)
  const listed = (await c.list()).json()
  t.equal(listed.meta.count, 1)
  t.equal(listed.data.length, 1)
  t.equal((await client(app, other).list()).json().meta.count, 1)
  const direct = app.sqlite.prepare('SELECT COUNT(*) AS n FROM artifacts WHERE ' +
    'workspace_id = ?').get(u.workspaceId) as { n: number }
  t.equal(direct.n, 1)
})
