import t from 'tap'
import { randomUUID } from 'node:crypto'
import { build, signup, createKey } from '../../helper.js'

const BASE = '/api/v2/artifacts'

t.test('artifacts:read and artifacts:write keys, and the machine-review rule (docs/api/auth.md)', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const other = await signup(app)
  const ws = { 'x-workspace-id': u.workspaceId }
  const person = { ...u.auth, ...ws }
  const writer = await createKey(app, u, ['artifacts:read', 'artifacts:write'])
  const reader = await createKey(app, u, ['artifacts:read'])
  const bound = await createKey(app, u, ['artifacts:read', 'artifacts:write'], { workspaceId: u.workspaceId })
  const w = { 'x-api-key': writer.key, ...ws }
  const r = { 'x-api-key': reader.key, ...ws }

  const created = await app.inject({ method: 'POST', url: BASE, headers: w,
    payload: { type: 'task_plan', title: 'Key plan', review_policy: 'request_review' } })
  t.equal(created.statusCode, 201, 'artifacts:write creates')
  const plan = created.json().data
  t.equal(plan.created_by, u.userId, 'acts as the key owner')
  t.equal((await app.inject({ url: `${BASE}/${plan.id}`, headers: r })).statusCode, 200, 'artifacts:read reads')
  t.equal((await app.inject({ url: `${BASE}/${plan.id}`, headers: { 'x-api-key': bound.key } })).statusCode, 200,
    'a bound key needs no header')
  const refused = await app.inject({ method: 'POST', url: BASE, headers: r,
    payload: { type: 'task_plan', title: 'x' } })
  t.equal(refused.statusCode, 403)
  t.equal(refused.json().code, 'INSUFFICIENT_SCOPE', 'artifacts:read does not write')
  const writeOnly = await createKey(app, u, ['artifacts:write'])
  t.equal((await app.inject({ url: BASE, headers: { 'x-api-key': writeOnly.key, ...ws } })).statusCode, 403,
    'artifacts:write does not read')
  const classic = await createKey(app, u, ['read', 'write', 'execute', 'knowledge:read', 'knowledge:write'])
  t.equal((await app.inject({ url: BASE, headers: { 'x-api-key': classic.key, ...ws } })).statusCode, 403,
    'read and write give no artifact access')
  t.equal((await app.inject({ url: BASE,
    headers: { 'x-api-key': writer.key, 'x-workspace-id': other.workspaceId } })).statusCode, 403, 'foreign workspace')
  t.equal((await app.inject({ url: BASE, headers: { 'x-api-key': writer.key } })).statusCode, 400,
    'workspace context required')
  const otherKey = await createKey(app, other, ['artifacts:read', 'artifacts:write'])
  t.equal((await app.inject({ url: `${BASE}/${plan.id}`,
    headers: { 'x-api-key': otherKey.key, 'x-workspace-id': other.workspaceId } })).statusCode, 404,
  'another tenant: 404')

  // the key may move a request_review artifact along, but not decide on it
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/${plan.id}/status`, headers: w,
    payload: { status: 'pending_review' } })).statusCode, 200)
  for (const status of ['approved', 'rejected']) {
    const res = await app.inject({ method: 'POST', url: `${BASE}/${plan.id}/status`, headers: w, payload: { status } })
    t.equal(res.statusCode, 403, `key ${status}`)
    t.equal(res.json().code, 'HUMAN_REVIEW_REQUIRED')
  }
  const lift = await app.inject({ method: 'PATCH', url: `${BASE}/${plan.id}`, headers: w,
    payload: { review_policy: 'always_proceed' } })
  t.equal(lift.statusCode, 403, 'a key cannot lift the review request')
  t.equal(lift.json().code, 'HUMAN_REVIEW_REQUIRED')
  t.equal((await app.inject({ method: 'PATCH', url: `${BASE}/${plan.id}`, headers: w,
    payload: { title: 'Edited', review_policy: 'request_review' } })).statusCode, 200, 'other edits are fine')
  const superLift = await app.inject({ method: 'POST', url: `${BASE}/${plan.id}/supersede`, headers: w,
    payload: { review_policy: 'agent_decides' } })
  t.equal(superLift.statusCode, 403, 'nor through a new version')
  t.equal(superLift.json().code, 'HUMAN_REVIEW_REQUIRED')
  t.equal((await app.inject({ url: `${BASE}/${plan.id}`, headers: person })).json().data.status, 'pending_review',
    'nothing changed')

  const v2 = await app.inject({ method: 'POST', url: `${BASE}/${plan.id}/supersede`, headers: w,
    payload: { content: { steps: ['a'] } } })
  t.equal(v2.statusCode, 201)
  t.equal(v2.json().data.review_policy, 'request_review', 'a new version inherits the policy')
  const id2 = v2.json().data.id
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/${id2}/status`, headers: w,
    payload: { status: 'approved' } })).statusCode, 403)

  const approved = await app.inject({ method: 'POST', url: `${BASE}/${id2}/status`, headers: person,
    payload: { status: 'approved' } })
  t.equal(approved.statusCode, 200, 'a person decides')
  t.equal(approved.json().data.reviewed_by, u.userId)
  t.equal((await app.inject({ method: 'PATCH', url: `${BASE}/${id2}`, headers: person,
    payload: { review_policy: 'agent_decides' } })).statusCode, 200, 'a person may lift it')
  const self = await app.inject({ method: 'POST', url: `${BASE}/${id2}/status`, headers: w,
    payload: { status: 'rejected' } })
  t.equal(self.statusCode, 200, 'without request_review, a key may decide')

  const personV3 = await app.inject({ method: 'POST', url: `${BASE}/${id2}/supersede`, headers: person,
    payload: { review_policy: 'request_review' } })
  t.equal(personV3.json().data.review_policy, 'request_review', 'supersede may set a policy')
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/${randomUUID()}/status`, headers: w,
    payload: { status: 'approved' } })).statusCode, 404)
})

t.test('rotation keeps the artifact scopes', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const k = await createKey(app, u, ['artifacts:read', 'artifacts:write', 'knowledge:read'])
  t.same(k.scopes, ['artifacts:read', 'artifacts:write', 'knowledge:read'])
  const rotated = await app.inject({ method: 'POST', url: `/api/v2/api-keys/${k.id}/rotate`, headers: u.auth })
  t.equal(rotated.statusCode, 201)
  t.same(rotated.json().data.scopes, ['artifacts:read', 'artifacts:write', 'knowledge:read'])
  const bad = await app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: u.auth,
    payload: { name: 'x', scopes: ['artifacts:admin'] } })
  t.equal(bad.statusCode, 400)
})

t.test('a person\'s decision on a request_review artifact is final to API keys (HTTP)', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const ws = { 'x-workspace-id': u.workspaceId }
  const person = { ...u.auth, ...ws }
  const key = { 'x-api-key': (await createKey(app, u, ['artifacts:read', 'artifacts:write'])).key, ...ws }
  const plan = async () => (await app.inject({ method: 'POST', url: BASE, headers: key,
    payload: { type: 'task_plan', title: 'Deploy plan', content: { steps: [{ title: 'deploy' }] },
      review_policy: 'request_review' } })).json().data as { id: string }
  const read = async (id: string) => (await app.inject({ url: `${BASE}/${id}`, headers: person })).json().data
  const record = (id: string) => app.artifactStore.reviewRecord({ customerId: u.customerId, workspaceId: u.workspaceId,
    userId: u.userId }, id)!

  // before a decision the machine may still revise its proposal
  const a = await plan()
  t.equal((await app.inject({ method: 'PATCH', url: `${BASE}/${a.id}`, headers: key,
    payload: { title: 'Deploy plan v2' } })).statusCode, 200)
  t.equal(record(a.id).revision, 2, 'an edit counts as a revision')

  for (const decision of ['approved', 'rejected'] as const) {
    const art = decision === 'approved' ? a : await plan()
    const decided = await app.inject({ method: 'POST', url: `${BASE}/${art.id}/status`, headers: person,
      payload: { status: decision } })
    t.equal(decided.statusCode, 200, `a person ${decision}`)
    const before = await read(art.id)
    const rec = record(art.id)
    t.equal(rec.statusSetBy, 'person')
    t.equal(rec.reviewedRevision, rec.revision, 'the decided revision is recorded')
    t.match(rec.reviewedSha256, /^[0-9a-f]{64}$/, 'with the fingerprint of what was decided on')

    const attempts: Array<[string, string, object | undefined]> = [
      ['PATCH', `${BASE}/${art.id}`, { title: 'Drop the database' }],
      ['PATCH', `${BASE}/${art.id}`, { content: { steps: [{ title: 'rm -rf /' }] } }],
      ['PATCH', `${BASE}/${art.id}`, { confidence: { score: 1 } }],
      ['PATCH', `${BASE}/${art.id}`, { review_policy: 'request_review' }],
      ['POST', `${BASE}/${art.id}/status`, { status: 'superseded' }],
      ['POST', `${BASE}/${art.id}/status`, { status: 'draft' }],
      ['POST', `${BASE}/${art.id}/status`, { status: 'pending_review' }],
      ['POST', `${BASE}/${art.id}/supersede`, { content: { steps: [{ title: 'other' }] } }],
      ['POST', `${BASE}/${art.id}/supersede`, {}],
      ['DELETE', `${BASE}/${art.id}`, undefined]
    ]
    for (const [method, url, payload] of attempts) {
      const res = await app.inject({ method: method as 'POST', url, headers: key,
        ...(payload === undefined ? {} : { payload }) })
      t.equal(res.statusCode, 409, `key ${method} ${url.slice(BASE.length)} ${JSON.stringify(payload ?? {})}`)
      t.equal(res.json().code, 'ARTIFACT_REVIEWED')
    }
    const flip = await app.inject({ method: 'POST', url: `${BASE}/${art.id}/status`, headers: key,
      payload: { status: decision === 'approved' ? 'rejected' : 'approved' } })
    t.equal(flip.json().code, 'HUMAN_REVIEW_REQUIRED', 'nor does it reverse the decision')
    const after = await read(art.id)
    t.same({ ...after, comments: undefined }, { ...before, comments: undefined }, 'nothing changed')
    t.equal(after.status, decision)
    t.equal(after.reviewed_by, u.userId)
    t.equal((await app.inject({ url: `${BASE}/${art.id}/chain`, headers: key })).json().data.length, 1,
      'no new version')

    // a machine may still comment, and may follow up with a new artifact linked to the decided one
    t.equal((await app.inject({ method: 'POST', url: `${BASE}/${art.id}/comments`, headers: key,
      payload: { content: 'noted' } })).statusCode, 201)
    const next = await app.inject({ method: 'POST', url: BASE, headers: key,
      payload: { type: 'task_plan', title: 'Follow-up', parent_artifact_id: art.id, review_policy: 'request_review' } })
    t.equal(next.statusCode, 201)
    t.equal(next.json().data.status, 'draft')
  }

  // a person may reopen, edit and supersede; after a person reopens it, a machine may revise again
  t.equal((await app.inject({ method: 'PATCH', url: `${BASE}/${a.id}`, headers: person,
    payload: { title: 'Deploy plan (edited by a person)' } })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/${a.id}/status`, headers: person,
    payload: { status: 'pending_review' } })).statusCode, 200)
  t.equal((await app.inject({ method: 'PATCH', url: `${BASE}/${a.id}`, headers: key,
    payload: { title: 'Deploy plan v3' } })).statusCode, 200, 'a reopened review lets the machine revise')
  t.equal(record(a.id).statusSetBy, 'person')

  // a machine's own decision, where the policy lets machines decide, binds nobody
  const own = await app.inject({ method: 'POST', url: BASE, headers: key,
    payload: { type: 'task_plan', title: 'Agent decides' } })
  const ownId = own.json().data.id as string
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/${ownId}/status`, headers: key,
    payload: { status: 'approved' } })).statusCode, 200)
  t.equal(record(ownId).statusSetBy, 'key')
  t.equal((await app.inject({ method: 'PATCH', url: `${BASE}/${ownId}`, headers: key,
    payload: { review_policy: 'request_review', title: 'still the machine\'s' } })).statusCode, 200,
  'turning the policy on afterwards does not make the machine\'s approval a person\'s')
  t.equal((await app.inject({ method: 'PATCH', url: `${BASE}/${ownId}`, headers: key,
    payload: { title: 'again' } })).statusCode, 200)
})
