import t from 'tap'
import { build, signup } from '../../helper.js'

t.test('awaiting=person: pending_review and request_review drafts, newest first, with type and status', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
  const u = await signup(app)
  const headers = { ...u.auth, 'x-workspace-id': u.workspaceId }
  const make = async (title: string, type: string, policy: string, status?: string) => {
    const res = await app.inject({ method: 'POST', url: '/api/v2/artifacts', headers,
      payload: { type, title, content: { steps: [{ title: 'a' }] }, review_policy: policy } })
    const id = res.json().data.id as string
    if (status) {
      const s = await app.inject({ method: 'POST', url: `/api/v2/artifacts/${id}/status`, headers,
        payload: { status } })
      t.equal(s.statusCode, 200, `${title} → ${status}`)
    }
    return id
  }
  await make('agent draft', 'task_plan', 'agent_decides')
  const asked = await make('asks a person', 'task_plan', 'request_review')
  const pending = await make('pending', 'verification_proof', 'agent_decides', 'pending_review')
  await make('decided', 'task_plan', 'request_review', 'approved')
  const list = async (query: string) => {
    const res = await app.inject({ url: `/api/v2/artifacts?${query}`, headers })
    t.equal(res.statusCode, 200, query)
    return res.json() as { data: Array<{ id: string }>; meta: { count: number } }
  }
  const queue = await list('awaiting=person')
  t.same(queue.data.map((a) => a.id), [pending, asked], 'newest first')
  t.equal(queue.meta.count, 2)
  t.same((await list('awaiting=person&type=task_plan')).data.map((a) => a.id), [asked])
  t.same((await list('awaiting=person&status=pending_review')).data.map((a) => a.id), [pending])
  t.same((await list('awaiting=person&status=approved')).data, [])
  t.equal((await list('review_policy=request_review')).meta.count, 2, 'review_policy filters alone too')
  t.equal((await app.inject({ url: '/api/v2/artifacts?awaiting=anyone', headers })).statusCode, 400)

  // the queue's query reads the status index, not the whole table
  const plan = app.sqlite.prepare(`EXPLAIN QUERY PLAN SELECT * FROM artifacts WHERE workspace_id = ? AND
    customer_id = ? AND (status = 'pending_review' OR (status = 'draft' AND review_policy = 'request_review'))
    ORDER BY created_at DESC, id DESC LIMIT 20`).all(u.workspaceId, u.customerId) as Array<{ detail: string }>
  t.notOk(plan.some((row) => /^SCAN artifacts\b(?! USING)/.test(row.detail)), plan.map((r) => r.detail).join('; '))
})
