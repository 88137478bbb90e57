import t from 'tap'
import http from 'node:http'
import { build, signup, addUser, createKey, multipart, type TestUser } from '../helper.js'
import type { App } from '../../src/app.js'
import { fakeStt } from '../fake-stt.js'

interface StreamEvent { id?: string; event: string; data: Record<string, unknown> }

/** A Server-Sent Events reader over a real socket: each event in order, comment lines counted. */
function openStream(port: number, query: string, headers: Record<string, string>) {
  const queue: StreamEvent[] = []
  const waiters: (() => void)[] = []
  let comments = 0
  let status = 0
  let contentType = ''
  let body = ''
  let ended = false
  const wake = () => { for (const w of waiters.splice(0)) w() }
  let request: http.ClientRequest | undefined
  const ready = new Promise<void>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: `/api/v2/events/stream${query}`, headers }, (res) => {
      status = res.statusCode ?? 0
      contentType = String(res.headers['content-type'] ?? '')
      res.setEncoding('utf8')
      let buffer = ''
      let first = true
      res.on('data', (chunk: string) => {
        if (status !== 200) { body += chunk; return }
        buffer += chunk
        let end
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const e: { id?: string; event?: string; data: string[] } = { data: [] }
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments++
            else if (line.startsWith('id: ')) e.id = line.slice(4)
            else if (line.startsWith('event: ')) e.event = line.slice(7)
            else if (line.startsWith('data: ')) e.data.push(line.slice(6))
          }
          if (e.event) queue.push({ id: e.id, event: e.event, data: JSON.parse(e.data.join('\n')) })
          wake()
        }
        if (first) { first = false; resolve() }
      })
      res.on('end', () => { ended = true; wake(); resolve() })
    })
    req.on('error', reject)
    request = req
  })
  const stream = {
    ready,
    status: () => status,
    contentType: () => contentType,
    body: () => body,
    comments: () => comments,
    close: () => { request?.destroy() },
    /** the next event (in order) */
    async next(): Promise<StreamEvent> {
      while (queue.length === 0) {
        if (ended) throw new Error('the stream ended')
        await new Promise<void>((resolve) => waiters.push(resolve))
      }
      return queue.shift()!
    },
    /** waits until `n` comment lines have arrived */
    async commentsReach(n: number) {
      while (comments < n) {
        if (ended) throw new Error('the stream ended')
        await new Promise<void>((resolve) => waiters.push(resolve))
      }
    }
  }
  return stream
}

async function setup(t: Parameters<typeof build>[0]) {
  const app = await build(t, { config: { eventStreamHeartbeatMs: 40,
    rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return { app, port }
}

async function createArtifact(app: App, u: TestUser, title: string, headers: Record<string, string> = u.auth) {
  const res = await app.inject({ method: 'POST', url: `/api/v2/artifacts?workspace_id=${u.workspaceId}`, headers,
    payload: { type: 'task_plan', title, content: { steps: ['one'] } } })
  if (res.statusCode !== 201) throw new Error(`create artifact: ${res.statusCode} ${res.body}`)
  return res.json().data as { id: string }
}

async function addMember(app: App, owner: TestUser) {
  const member = await addUser(app, owner)
  const res = await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`,
    headers: owner.auth, payload: { userId: member.userId, role: 'member' } })
  if (res.statusCode !== 201) throw new Error(`add member: ${res.body}`)
  return { ...member, workspaceId: owner.workspaceId }
}

t.test('a member receives the workspace\'s artifact changes as they happen, each with an id', async (t) => {
  const { app, port } = await setup(t)
  const u = await signup(app)
  const s = openStream(port, `?workspace_id=${u.workspaceId}`, u.auth)
  t.teardown(() => s.close())
  await s.ready
  t.equal(s.status(), 200)
  t.match(s.contentType(), /^text\/event-stream/)

  const a = await createArtifact(app, u, 'Plan A')
  const created = await s.next()
  t.equal(created.event, 'artifact.created')
  t.match(created.data, { id: a.id, workspace_id: u.workspaceId, title: 'Plan A', status: 'draft' })
  t.type(created.data.at, 'string')
  t.match(created.id, /^\d+$/)

  await app.inject({ method: 'POST', url: `/api/v2/artifacts/${a.id}/comments?workspace_id=${u.workspaceId}`,
    headers: u.auth, payload: { content: 'Looks right' } })
  const commented = await s.next()
  t.equal(commented.event, 'artifact.commented')
  t.match(commented.data, { id: a.id, comment: { content: 'Looks right', user_id: u.userId } })

  const approved = await app.inject({ method: 'POST', url: `/api/v2/artifacts/${a.id}/status?workspace_id=${
    u.workspaceId}`, headers: u.auth, payload: { status: 'approved' } })
  t.equal(approved.statusCode, 200)
  const changed = await s.next()
  t.equal(changed.event, 'artifact.status_changed')
  t.match(changed.data, { id: a.id, status: 'approved', reviewed_by: u.userId })
  t.ok(Number(changed.id) > Number(created.id), 'ids increase')

  await app.inject({ method: 'PATCH', url: `/api/v2/artifacts/${a.id}?workspace_id=${u.workspaceId}`,
    headers: u.auth, payload: { title: 'Plan A, revised' } })
  t.match(await s.next(), { event: 'artifact.updated', data: { id: a.id, title: 'Plan A, revised' } })
  await app.inject({ method: 'DELETE', url: `/api/v2/artifacts/${a.id}?workspace_id=${u.workspaceId}`,
    headers: u.auth })
  t.match(await s.next(), { event: 'artifact.deleted', data: { id: a.id } })

  // comment lines keep the connection alive
  await s.commentsReach(3)
})

t.test('another organization\'s member receives nothing of it, and cannot open the stream of a foreign workspace',
  async (t) => {
    const { app, port } = await setup(t)
    const u = await signup(app)
    const stranger = await signup(app)
    const foreign = await app.inject({ method: 'GET', url: `/api/v2/events/stream?workspace_id=${u.workspaceId}`,
      headers: stranger.auth })
    t.equal(foreign.statusCode, 403)
    t.match(foreign.json(), { success: false })

    const s = openStream(port, `?workspace_id=${stranger.workspaceId}`, stranger.auth)
    t.teardown(() => s.close())
    await s.ready
    await createArtifact(app, u, 'Secret plan of u')
    const doc = multipart([{ filename: 'org.txt', content: 'Organization-wide notes of u.' }])
    t.equal((await app.inject({ method: 'POST', url: '/api/knowledge/upload',
      headers: { ...u.auth, ...doc.headers }, payload: doc.payload })).statusCode, 201)
    // the stranger's own change comes first: nothing of u's came before it
    const own = await createArtifact(app, stranger, 'Stranger plan')
    const first = await s.next()
    t.match(first, { event: 'artifact.created', data: { id: own.id, workspace_id: stranger.workspaceId } })
  })

t.test('a personal document is announced to its owner only; a workspace document to every member', async (t) => {
  const { app, port } = await setup(t)
  const owner = await signup(app)
  const member = await addMember(app, owner)
  const so = openStream(port, `?workspace_id=${owner.workspaceId}`, owner.auth)
  const sm = openStream(port, `?workspace_id=${owner.workspaceId}`, { ...member.auth })
  t.teardown(() => { so.close(); sm.close() })
  await Promise.all([so.ready, sm.ready])

  const upload = async (filename: string, fields: Record<string, string>) => {
    const body = multipart([{ filename, content: `Notes in ${filename} about the copper heron.` }], fields)
    const res = await app.inject({ method: 'POST', url: '/api/knowledge/upload',
      headers: { ...owner.auth, ...body.headers }, payload: body.payload })
    t.equal(res.statusCode, 201, res.body)
    return res.json().document as { id: string }
  }
  const personal = await upload('mine.txt', { scope: 'personal' })
  const shared = await upload('ours.txt', { scope: 'workspace', workspaceId: owner.workspaceId })

  const seen = async (s: ReturnType<typeof openStream>, until: string) => {
    const ids: string[] = []
    for (;;) {
      const e = await s.next()
      if (e.event !== 'document.indexed') continue
      ids.push(String(e.data.id))
      if (e.data.id === until) return ids
    }
  }
  t.same(await seen(so, shared.id), [personal.id, shared.id], 'the owner hears of both')
  t.same(await seen(sm, shared.id), [shared.id], 'the member hears of the workspace document only')
})

t.test('an API key with artifacts:read receives artifact events only; a member also the messages', async (t) => {
  const { app, port } = await setup(t)
  const u = await signup(app)
  const key = await createKey(app, u, ['artifacts:read', 'artifacts:write'])
  const keyAuth = { authorization: `Bearer ${key.key}` }
  const sk = openStream(port, `?workspace_id=${u.workspaceId}`, keyAuth)
  const su = openStream(port, '', { ...u.auth, 'x-workspace-id': u.workspaceId })
  t.teardown(() => { sk.close(); su.close() })
  await Promise.all([sk.ready, su.ready])
  t.equal(sk.status(), 200)

  const channel = await app.inject({ method: 'POST', url: `/api/v2/channels?workspaceId=${u.workspaceId}`,
    headers: u.auth, payload: { name: 'general-talk', type: 'public' } })
  t.equal(channel.statusCode, 201)
  const posted = await app.inject({ method: 'POST', url: '/api/v2/messages', headers: u.auth,
    payload: { channel_id: channel.json().data.id, content: 'hello everyone' } })
  t.equal(posted.statusCode, 201)
  const a = await createArtifact(app, u, 'Keyed plan', keyAuth)

  t.match(await su.next(), { event: 'message.created', data: { id: posted.json().data.id } })
  t.match(await su.next(), { event: 'artifact.created', data: { id: a.id } })
  t.match(await sk.next(), { event: 'artifact.created', data: { id: a.id } }, 'the key skipped the message')

  const noScope = await createKey(app, u, ['knowledge:read'])
  const refused = await app.inject({ method: 'GET', url: `/api/v2/events/stream?workspace_id=${u.workspaceId}`,
    headers: { authorization: `Bearer ${noScope.key}` } })
  t.equal(refused.statusCode, 403)
})

t.test('a reconnect with Last-Event-ID receives what it missed; an unknown or pruned id receives reset', async (t) => {
  const { app, port } = await setup(t)
  const u = await signup(app)
  const s1 = openStream(port, `?workspace_id=${u.workspaceId}`, u.auth)
  await s1.ready
  await createArtifact(app, u, 'First')
  const first = await s1.next()
  s1.close()

  const missed = [await createArtifact(app, u, 'Second'), await createArtifact(app, u, 'Third')]
  const s2 = openStream(port, `?workspace_id=${u.workspaceId}`, { ...u.auth, 'last-event-id': first.id! })
  t.teardown(() => s2.close())
  await s2.ready
  const again = [await s2.next(), await s2.next()]
  t.same(again.map((e) => e.data.id), missed.map((m) => m.id))
  const live = await createArtifact(app, u, 'Fourth')
  t.match(await s2.next(), { event: 'artifact.created', data: { id: live.id } }, 'then live')

  const unknown = openStream(port, `?workspace_id=${u.workspaceId}`, { ...u.auth, 'last-event-id': '99999999' })
  t.teardown(() => unknown.close())
  await unknown.ready
  const reset = await unknown.next()
  t.equal(reset.event, 'reset')
  t.equal(reset.data.workspace_id, u.workspaceId)

  // the events after `first` are pruned (as the retention job does after a day or two)
  app.sqlite.prepare('DELETE FROM workspace_events WHERE id <= ?').run(Number(again[0].id))
  const old = openStream(port, `?workspace_id=${u.workspaceId}`, { ...u.auth, 'last-event-id': first.id! })
  t.teardown(() => old.close())
  await old.ready
  const r2 = await old.next()
  t.equal(r2.event, 'reset', 'what it missed is no longer kept')
  const after = await createArtifact(app, u, 'Fifth')
  t.match(await old.next(), { event: 'artifact.created', data: { id: after.id } }, 'and it continues live')
})

t.test('signing out ends an open stream, and it cannot be opened again with that session', async (t) => {
  const { app, port } = await setup(t)
  const u = await signup(app)
  const s = openStream(port, `?workspace_id=${u.workspaceId}`, u.auth)
  t.teardown(() => s.close())
  await s.ready
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/auth/logout', headers: u.auth })).statusCode, 200)
  await t.rejects(s.next(), /the stream ended/)
  const again = openStream(port, `?workspace_id=${u.workspaceId}`, u.auth)
  t.teardown(() => again.close())
  await again.ready
  t.equal(again.status(), 401)
})

t.test('a workflow run\'s progress reaches the other members as its id, workflow and status only', async (t) => {
  const { app, port } = await setup(t)
  const owner = await signup(app)
  const member = await addMember(app, owner)
  const s = openStream(port, `?workspace_id=${owner.workspaceId}`, member.auth)
  t.teardown(() => s.close())
  await s.ready
  const headers = { ...owner.auth, 'x-workspace-id': owner.workspaceId }
  const wf = (await app.inject({ method: 'POST', url: '/api/v2/workflows', headers, payload: { name: 'weekly plan',
    steps: [{ id: 'plan', type: 'create_artifact', artifactType: 'task_plan', title: 'Weekly plan' }] } }))
    .json().workflow as { id: string }
  const run = await app.inject({ method: 'POST', url: `/api/v2/workflows/${wf.id}/execute`, headers,
    payload: { inputs: {} } })
  t.equal(run.statusCode, 202)
  const runId = run.json().run.id as string
  const statuses: string[] = []
  for (;;) {
    const e = await s.next()
    if (e.event !== 'workflow_run.updated') continue
    t.same(Object.keys(e.data).sort(), ['at', 'id', 'status', 'workflow_id', 'workspace_id'], 'nothing of its outputs')
    t.match(e.data, { id: runId, workflow_id: wf.id })
    statuses.push(String(e.data.status))
    if (e.data.status === 'completed' || e.data.status === 'failed') break
  }
  t.same(statuses, ['running', 'completed'])
})

t.test('a member removed from the workspace: the stream ends', async (t) => {
  const { app, port } = await setup(t)
  const owner = await signup(app)
  const member = await addMember(app, owner)
  const s = openStream(port, `?workspace_id=${owner.workspaceId}`, member.auth)
  t.teardown(() => s.close())
  await s.ready
  const removed = await app.inject({ method: 'DELETE',
    url: `/api/v2/workspaces/${owner.workspaceId}/members/${member.userId}`, headers: owner.auth })
  t.ok(removed.statusCode < 300, removed.body)
  await t.rejects(s.next(), /the stream ended/)
})

t.test('a private channel\'s message reaches its members only', async (t) => {
  const { app, port } = await setup(t)
  const owner = await signup(app)
  const inside = await addMember(app, owner)
  const outside = await addMember(app, owner)
  const si = openStream(port, `?workspace_id=${owner.workspaceId}`, inside.auth)
  const so = openStream(port, `?workspace_id=${owner.workspaceId}`, outside.auth)
  t.teardown(() => { si.close(); so.close() })
  await Promise.all([si.ready, so.ready])
  const channel = await app.inject({ method: 'POST', url: `/api/v2/channels?workspaceId=${owner.workspaceId}`,
    headers: owner.auth, payload: { name: 'small-room', type: 'private', memberIds: [inside.userId] } })
  t.equal(channel.statusCode, 201, channel.body)
  const posted = await app.inject({ method: 'POST', url: '/api/v2/messages', headers: owner.auth,
    payload: { channel_id: channel.json().data.id, content: 'only for the room' } })
  t.equal(posted.statusCode, 201)
  const marker = await createArtifact(app, owner, 'After the message')
  t.match(await si.next(), { event: 'message.created', data: { id: posted.json().data.id,
    content: 'only for the room' } })
  t.match(await so.next(), { event: 'artifact.created', data: { id: marker.id } }, 'the outsider: nothing before')
})

t.test('the maintenance job prunes events older than two days and keeps the recent ones', async (t) => {
  const { app } = await setup(t)
  const u = await signup(app)
  const recent = await createArtifact(app, u, 'Recent')
  const old = await createArtifact(app, u, 'Old')
  app.sqlite.prepare(`UPDATE workspace_events SET created_at = ? WHERE data LIKE ?`)
    .run(new Date(Date.now() - 3 * 24 * 3600_000).toISOString(), `%${old.id}%`)
  await app.runMaintenance()
  const left = app.sqlite.prepare('SELECT data FROM workspace_events').pluck().all() as string[]
  t.ok(left.some((d) => d.includes(recent.id)), 'the recent event is kept')
  t.notOk(left.some((d) => d.includes(old.id)), 'the old one is gone')
})

t.test('a voice note\'s transcription reaches its owner only', async (t) => {
  const stt = await fakeStt(t)
  const app = await build(t, { config: { eventStreamHeartbeatMs: 40,
    stt: { mode: 'openai', baseUrl: stt.baseUrl, apiKey: 'sk-test', model: 'whisper-large' },
    rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const owner = await signup(app)
  const member = await addMember(app, owner)
  const so = openStream(port, `?workspace_id=${owner.workspaceId}`, owner.auth)
  const sm = openStream(port, `?workspace_id=${owner.workspaceId}`, member.auth)
  t.teardown(() => { so.close(); sm.close() })
  await Promise.all([so.ready, sm.ready])
  const body = multipart([{ filename: 'memo.wav', content: Buffer.alloc(3000, 9), contentType: 'audio/wav' }])
  const audio = (await app.inject({ method: 'POST', url: '/api/v2/voice-notes/audio',
    headers: { ...owner.auth, ...body.headers }, payload: body.payload })).json().data
  const created = await app.inject({ method: 'POST', url: '/api/v2/voice-notes', headers: owner.auth,
    payload: { audioUrl: audio.audioUrl, title: 'Garden', mimeType: 'audio/wav', workspaceId: owner.workspaceId } })
  t.equal(created.statusCode, 201, created.body)
  const id = created.json().voiceNote.id as string
  t.equal((await app.inject({ method: 'POST', url: `/api/v2/voice-notes/${id}/transcribe`, headers: owner.auth }))
    .statusCode, 200)
  t.match(await so.next(), { event: 'voice_note.updated', data: { id, status: 'processing' } })
  t.match(await so.next(), { event: 'voice_note.updated', data: { id, status: 'completed' } })
  const marker = await createArtifact(app, owner, 'After the note')
  t.match(await sm.next(), { event: 'artifact.created', data: { id: marker.id } }, 'the member: nothing of the note')
})

t.test('HEAD answers as GET would, without opening a stream', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  let subscribed = 0
  const subscribe = app.workspaceEvents.subscribe
  app.workspaceEvents.subscribe = (listener) => { subscribed++; return subscribe(listener) }
  const head = await app.inject({ method: 'HEAD', url: `/api/v2/events/stream?workspace_id=${u.workspaceId}`,
    headers: u.auth })
  t.equal(head.statusCode, 200)
  t.match(head.headers['content-type'], /^text\/event-stream/)
  t.equal(head.body, '')
  t.equal(subscribed, 0, 'no stream was opened')
  const anonymous = await app.inject({ method: 'HEAD', url: `/api/v2/events/stream?workspace_id=${u.workspaceId}` })
  t.equal(anonymous.statusCode, 401, 'the same refusal as GET')
  const stranger = await signup(app)
  const foreign = await app.inject({ method: 'HEAD', url: `/api/v2/events/stream?workspace_id=${u.workspaceId}`,
    headers: stranger.auth })
  t.equal(foreign.statusCode, 403)
})

/** A stream whose client reads nothing until `resume()`, then collects every event id and whether it ended. */
function pausedStream(port: number, query: string, headers: Record<string, string>) {
  const ids: number[] = []
  let ended = false
  let buffer = ''
  const waiters: (() => void)[] = []
  const wake = () => { for (const w of waiters.splice(0)) w() }
  let response: http.IncomingMessage | undefined
  const req = http.get({ host: '127.0.0.1', port, path: `/api/v2/events/stream${query}`, headers }, (res) => {
    response = res
    res.pause()
    res.setEncoding('utf8')
    res.on('data', (chunk: string) => {
      buffer += chunk
      let end
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const id = /^id: (\d+)$/m.exec(buffer.slice(0, end))?.[1]
        if (id) ids.push(Number(id))
        buffer = buffer.slice(end + 2)
      }
      wake()
    })
    res.on('end', () => { ended = true; wake() })
    wake()
  })
  return {
    ids, ended: () => ended, close: () => req.destroy(),
    async opened() { while (!response) await new Promise<void>((resolve) => waiters.push(resolve)) },
    resume() { response?.resume() },
    async until(done: () => boolean) {
      while (!done()) {
        if (ended) return
        await new Promise<void>((resolve) => waiters.push(resolve))
      }
    }
  }
}

/** `n` events of about 8 KB each in the workspace's log (16 MB for 2,000: more than the sockets hold) */
function publishMany(app: App, u: TestUser, n: number) {
  const pad = 'x'.repeat(8000)
  for (let i = 0; i < n; i++) {
    app.workspaceEvents.publish({ customerId: u.customerId, workspaceId: u.workspaceId, name: 'artifact.updated',
      data: { id: `artifact-${i}`, pad } })
  }
}

const turns = async (n: number) => { for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve)) }

t.test('a client that does not read: the stream stops reading the log at its buffer, then catches up with ' +
  'nothing lost', async (t) => {
  const app = await build(t, { config: { eventStreamBuffer: { bytes: 64 * 1024, stallMs: 60_000 } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const u = await signup(app)
  let read = 0
  const after = app.workspaceEvents.after
  app.workspaceEvents.after = (...args) => {
    const rows = after(...args)
    read += rows.length
    return rows
  }
  const s = pausedStream(port, `?workspace_id=${u.workspaceId}`, u.auth)
  t.teardown(() => s.close())
  await s.opened()
  const total = 2000
  publishMany(app, u, total)
  // the stream's wake-up runs after the publishing: it writes until its client is a buffer behind, then waits
  await turns(5)
  t.ok(read > 0 && read < total, `the log was read only as far as the client can hold (${read} of ${total})`)
  const held = read
  await turns(5)
  t.equal(read, held, 'and no further while the client reads nothing')

  s.resume()
  await s.until(() => s.ids.length >= total)
  t.equal(s.ids.length, total, 'every event arrives once the client reads')
  t.ok(s.ids.every((id, i) => i === 0 || id === s.ids[i - 1] + 1), 'in order, none missing')
  t.notOk(s.ended(), 'the stream stays open')
})

t.test('a client that stays behind longer than the wait: the stream ends, and a reconnect resumes where it stopped',
  async (t) => {
    const app = await build(t, { config: { eventStreamBuffer: { bytes: 16 * 1024, stallMs: 200 } } })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const port = (app.server.address() as { port: number }).port
    const u = await signup(app)
    const s = pausedStream(port, `?workspace_id=${u.workspaceId}`, u.auth)
    t.teardown(() => s.close())
    await s.opened()
    const total = 2000
    publishMany(app, u, total)
    await turns(5)
    // the stream's wait began within those turns: a timer set now, longer than it, fires after it
    await new Promise((resolve) => setTimeout(resolve, 600))
    s.resume()
    await s.until(() => false)
    t.ok(s.ended(), 'the stream ended')
    t.ok(s.ids.length > 0 && s.ids.length < total, `the client had ${s.ids.length} of ${total} events`)
    t.ok(s.ids.every((id, i) => i === 0 || id === s.ids[i - 1] + 1), 'in order, none missing')

    const last = s.ids[s.ids.length - 1]
    // the reconnect reads as fast as it can, but a busy machine may not run this process for 200 ms: it gets the
    // default wait, so that it is not ended as well
    app.config.eventStreamBuffer.stallMs = 60_000
    const again = pausedStream(port, `?workspace_id=${u.workspaceId}`, { ...u.auth, 'last-event-id': String(last) })
    t.teardown(() => again.close())
    await again.opened()
    again.resume()
    await again.until(() => s.ids.length + again.ids.length >= total)
    t.equal(again.ids[0], last + 1, 'the reconnect resumes after the last event received')
    t.equal(s.ids.length + again.ids.length, total, 'together: every event, once')
  })
