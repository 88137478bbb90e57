import t from 'tap'
import { build, signup, addUser, createKey, multipart } from '../../helper.js'

t.test('one search over knowledge, artifacts, voice transcripts and messages the caller can read', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const ws = { ...u.auth, 'x-workspace-id': u.workspaceId }
  const body = multipart([{ filename: 'lantern.txt', content: 'The brass lantern hangs in the hallway.' }])
  await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...body.headers },
    payload: body.payload })
  const artifact = (await app.inject({ method: 'POST', url: '/api/v2/artifacts', headers: ws,
    payload: { type: 'task_plan', title: 'Polish the lantern', content: { steps: ['buy polish'] } } })).json().data
  const audio = await app.inject({ method: 'POST', url: '/api/v2/voice-notes', headers: u.auth, payload: { audioUrl: 'http://8.8.8.8/memo.mp3', title: 'Memo' } })
  const note = audio.json().voiceNote
  app.sqlite.prepare(`UPDATE voice_notes SET status = 'completed', transcript = 'remember the lantern oil'
    WHERE id = ?`).run(note.id)
  const pub = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: ws,
    payload: { name: 'house', type: 'public' } })).json().data
  const priv = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: ws,
    payload: { name: 'attic', type: 'private' } })).json().data
  const msg = (await app.inject({ method: 'POST', url: '/api/v2/messages', headers: u.auth,
    payload: { channel_id: pub.id, content: 'Who moved the LANTERN?' } })).json().data
  const secret = (await app.inject({ method: 'POST', url: '/api/v2/messages', headers: u.auth,
    payload: { channel_id: priv.id, content: 'lantern in the attic' } })).json().data
  await app.jobs.idle()

  const res = await app.inject({ method: 'POST', url: '/api/v2/search', headers: u.auth,
    payload: { query: 'lantern' } })
  t.equal(res.statusCode, 200)
  const r = res.json()
  t.equal(r.query, 'lantern')
  const kinds = r.results.map((x: { kind: string; id: string }) => `${x.kind}:${x.id}`)
  for (const expected of [`artifact:${artifact.id}`, `voice_note:${note.id}`, `message:${msg.id}`,
    `message:${secret.id}`]) t.ok(kinds.includes(expected), expected)
  t.ok(r.results.some((x: { kind: string }) => x.kind === 'knowledge'))
  t.ok(r.results.every((x: { snippet: string; score: number; title: string }) => typeof x.snippet === 'string' &&
    x.score > 0 && x.title))
  t.equal(r.count, r.results.length)

  // a workspace member who is not in the private channel, and another organization
  const mate = await addUser(app, u)
  await app.inject({ method: 'POST', url: `/api/v2/workspaces/${u.workspaceId}/members`, headers: u.auth,
    payload: { userId: mate.userId, role: 'member' } })
  const mateKinds = (await app.inject({ method: 'POST', url: '/api/v2/search', headers: mate.auth,
    payload: { query: 'lantern' } })).json().results.map((x: { kind: string; id: string }) => `${x.kind}:${x.id}`)
  t.ok(mateKinds.includes(`message:${msg.id}`))
  t.notOk(mateKinds.includes(`message:${secret.id}`), 'private channel hidden')
  t.notOk(mateKinds.includes(`voice_note:${note.id}`), 'voice notes are their owner\'s')
  t.ok(mateKinds.includes(`artifact:${artifact.id}`), 'artifacts of the shared workspace')
  const stranger = await signup(app)
  t.same((await app.inject({ method: 'POST', url: '/api/v2/search', headers: stranger.auth,
    payload: { query: 'lantern' } })).json().results, [])

  // deleted things leave the index
  await app.inject({ method: 'DELETE', url: `/api/v2/artifacts/${artifact.id}`, headers: ws })
  await app.inject({ method: 'DELETE', url: `/api/v2/voice-notes/${note.id}`, headers: u.auth })
  const after = (await app.inject({ method: 'POST', url: '/api/v2/search', headers: u.auth,
    payload: { query: 'lantern' } })).json().results.map((x: { id: string }) => x.id)
  t.notOk(after.includes(artifact.id))
  t.notOk(after.includes(note.id))

  // API keys: read or knowledge:read
  const reader = await createKey(app, u, ['knowledge:read'])
  const writer = await createKey(app, u, ['write'])
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/search', headers: { 'x-api-key': reader.key },
    payload: { query: 'lantern' } })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/search', headers: { 'x-api-key': writer.key },
    payload: { query: 'lantern' } })).statusCode, 403)
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/search', headers: u.auth,
    payload: { query: '' } })).statusCode, 400)
})
