import t from 'tap'
import { spawn, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { build, signup, createKey, multipart, tempDir, type TestUser, FIXTURES, TS_CHILD } from '../../helper.js'
import { fakeStt } from '../../fake-stt.js'
import { pocketsphinxStt, parsePocketsphinx } from '../../../src/ai/stt.js'
import { needsPrograms } from '../../system-tools.js'
import type { App } from '../../../src/app.js'

const BASE = '/api/v2/voice-notes'
const NO_LIMITS = { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 }

async function uploadAudio(app: App, u: TestUser, content: Buffer = Buffer.alloc(2048, 7), filename = 'memo.wav',
  contentType = 'audio/wav') {
  const body = multipart([{ filename, content, contentType }])
  return app.inject({ method: 'POST', url: `${BASE}/audio`, headers: { ...u.auth, ...body.headers },
    payload: body.payload })
}
async function note(app: App, u: TestUser, payload: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url: BASE, headers: u.auth, payload })
  if (res.statusCode !== 201) throw new Error(res.body)
  return res.json().voiceNote
}
async function waitFor(app: App, u: TestUser, id: string, status: string) {
  for (let i = 0; i < 200; i++) {
    await app.jobs.idle()
    const n = (await app.inject({ url: `${BASE}/${id}`, headers: u.auth })).json().voiceNote
    if (n.status === status) return n
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`note ${id} never reached ${status}`)
}

t.test('create, defaults, list filters, update rules, soft delete, other users', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS } })
  const u = await signup(app)
  const audio = (await uploadAudio(app, u)).json().data
  const n = await note(app, u, { audioUrl: audio.audioUrl })
  t.match(n,
    { user_id: u.userId, workspace_id: null, audio_url: audio.audioUrl, duration: 0, mime_type: 'audio/webm',
      metadata: {}, tags: [], status: 'created' })
  t.match(n.title, /^Voice Note \d{4}-\d\d-\d\d \d\d:\d\d$/)
  t.notOk('transcript' in n)
  const a = await note(app, u,
    { audioUrl: audio.audioUrl, title: 'Standup Notes', tags: ['work', 'daily'], duration: 61.5, mimeType: 'audio/ogg',
      metadata: { device: 'phone' }, workspaceId: u.workspaceId })
  t.match(a,
    { title: 'Standup Notes', tags: ['work', 'daily'], duration: 61.5, mime_type: 'audio/ogg',
      metadata: { device: 'phone' }, workspace_id: u.workspaceId })
  const b = await note(app, u, { audioUrl: audio.audioUrl, title: 'Grocery list', tags: ['home', 'daily'] })

  const list = (q = '') => app.inject({ url: `${BASE}${q}`, headers: u.auth }).then((r) => r.json())
  const all = await list()
  t.same(all.voiceNotes.map((x: { id: string }) => x.id), [b.id, a.id, n.id], 'newest first')
  t.same([all.total, all.limit, all.offset], [3, 50, 0])
  t.same((await list('?search=STANDUP')).voiceNotes.map((x: { id: string }) => x.id), [a.id],
    'title search ignores case')
  t.same((await list('?search=list')).voiceNotes.map((x: { id: string }) => x.id), [b.id])
  t.same((await list('?tags=daily')).total, 2)
  t.same((await list('?tags=daily,work')).voiceNotes.map((x: { id: string }) => x.id), [a.id], 'must contain all tags')
  t.same((await list('?status=created')).total, 3)
  t.same((await list('?status=completed')).total, 0)
  t.same((await list(`?workspaceId=${u.workspaceId}`)).total, 1)
  const page = await list('?limit=1&offset=1')
  t.same([page.voiceNotes.length, page.total, page.voiceNotes[0].id], [1, 3, a.id])
  for (const q of ['?limit=101', '?status=done',
    '?offset=-1']) t.equal((await app.inject({ url: `${BASE}${q}`, headers: u.auth })).statusCode, 400, q)

  const put = await app.inject({ method: 'PUT', url: `${BASE}/${a.id}`, headers: u.auth, payload: { title: 'Renamed', tags: ['x'], metadata: { k: 1 }, status: 'completed', audioUrl: 'http://x' } })
  t.equal(put.statusCode, 200)
  t.match(put.json().voiceNote,
    { title: 'Renamed', tags: ['x'], metadata: { k: 1 }, status: 'created', audio_url: audio.audioUrl })
  const none = await app.inject({ method: 'PUT', url: `${BASE}/${a.id}`, headers: u.auth,
    payload: { status: 'completed', duration: 3 } })
  t.equal(none.statusCode, 400, 'no valid field')

  for (const payload of [{}, { audioUrl: 'ftp://example.com/a.mp3' }, { audioUrl: 'http://127.0.0.1/a.mp3' }, { audioUrl: 'x', duration: -1 },
    { audioUrl: 'http://169.254.169.254/' }, { audioUrl: audio.audioUrl, tags: [''] }]) {
    t.equal((await app.inject({ method: 'POST', url: BASE, headers: u.auth, payload })).statusCode, 400,
      JSON.stringify(payload))
  }
  const stranger = await signup(app)
  t.equal((await app.inject({ method: 'POST', url: BASE, headers: u.auth,
    payload: { audioUrl: audio.audioUrl, workspaceId: stranger.workspaceId } })).statusCode, 403)
  t.equal((await app.inject({ method: 'POST', url: BASE, headers: stranger.auth,
    payload: { audioUrl: audio.audioUrl } })).statusCode, 400, 'another user\'s uploaded audio')

  // another user: 404 on every route, nothing listed
  for (const [method, url] of [['GET', `${BASE}/${a.id}`], ['PUT', `${BASE}/${a.id}`], ['DELETE', `${BASE}/${a.id}`],
    ['POST', `${BASE}/${a.id}/transcribe`], ['GET', `${BASE}/${a.id}/transcript`],
    ['GET', audio.audioUrl.replace(/^https?:\/\/[^/]+/, '')]] as const) {
    t.equal((await app.inject({ method, url, headers: stranger.auth,
      payload: method === 'PUT' ? { title: 'x' } : undefined })).statusCode, 404, `${method} ${url}`)
  }
  t.equal((await app.inject({ url: BASE, headers: stranger.auth })).json().total, 0)

  // JWT only: API keys are refused
  const key = await createKey(app, u, ['read', 'write', 'execute', 'knowledge:read', 'knowledge:write'])
  t.equal((await app.inject({ url: BASE, headers: { 'x-api-key': key.key } })).statusCode, 403)

  // soft delete hides the note everywhere
  t.same((await app.inject({ method: 'DELETE', url: `${BASE}/${b.id}`, headers: u.auth })).json(),
    { success: true, message: 'Voice note deleted' })
  t.equal((await app.inject({ url: `${BASE}/${b.id}`, headers: u.auth })).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url: `${BASE}/${b.id}`, headers: u.auth })).statusCode, 404)
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/${b.id}/transcribe`, headers: u.auth })).statusCode, 404)
  t.equal((await list()).total, 2)
  t.equal((await list('?search=grocery')).total, 0)
  const row = app.sqlite.prepare('SELECT deleted_at FROM voice_notes WHERE id = ?').get(b.id) as { deleted_at: string }
  t.type(row.deleted_at, 'string', 'kept, marked deleted')
})

t.test('audio upload: stored, owner-only download, audio only', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251))
  const up = await uploadAudio(app, u, bytes, 'clip.webm', 'audio/webm')
  t.equal(up.statusCode, 201)
  t.match(up.json().data, { mimeType: 'audio/webm', size: 5000 })
  t.match(up.json().data.audioUrl, /^http:\/\/127\.0\.0\.1:3000\/api\/v2\/voice-notes\/audio\/[0-9a-f-]{36}$/)
  const got = await app.inject({ url: new URL(up.json().data.audioUrl).pathname, headers: u.auth })
  t.equal(got.statusCode, 200)
  t.ok(Buffer.compare(got.rawPayload, bytes) === 0)
  t.equal(got.headers['content-type'], 'audio/webm')
  t.equal((await uploadAudio(app, u, Buffer.from('not audio'), 'notes.txt', 'text/plain')).statusCode, 415)
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/audio`, headers: u.auth, payload: { x: 1 } })).statusCode,
    400)
})

t.test('openai engine: multipart to a compatible server, verbose_json segments; 409 rules; failures', async (t) => {
  const stt = await fakeStt(t)
  const app = await build(t,
    { config: { stt: { mode: 'openai', baseUrl: stt.baseUrl, apiKey: 'sk-test', model: 'whisper-large' } } })
  const u = await signup(app)
  const audio = (await uploadAudio(app, u, Buffer.alloc(3000, 9))).json().data
  const n = await note(app, u, { audioUrl: audio.audioUrl, title: 'Garden', mimeType: 'audio/wav' })
  t.equal((await app.inject({ url: `${BASE}/${n.id}/transcript`, headers: u.auth })).statusCode, 404,
    'no transcript before completion')
  const start = await app.inject({ method: 'POST', url: `${BASE}/${n.id}/transcribe`, headers: u.auth })
  t.equal(start.statusCode, 200)
  t.same(start.json(), { success: true, message: 'Transcription started', status: 'processing', voiceNoteId: n.id })
  const done = await waitFor(app, u, n.id, 'completed')
  t.equal(done.transcript, 'Remember to water the ferns on Tuesday.')
  t.same(done.transcript_segments,
    [{ start: 0, end: 2.1, text: 'Remember to water the ferns' }, { start: 2.1, end: 4.2, text: 'on Tuesday.' }])
  t.same(stt.calls[0],
    { bytes: 3000, auth: 'Bearer sk-test', fileName: stt.calls[0].fileName, mimeType: 'audio/wav',
      model: 'whisper-large', responseFormat: 'verbose_json' })
  const tr = (await app.inject({ url: `${BASE}/${n.id}/transcript`, headers: u.auth })).json()
  t.same(tr,
    { success: true, voiceNoteId: n.id, title: 'Garden', transcript: 'Remember to water the ferns on Tuesday.',
      segments: done.transcript_segments, status: 'completed' })
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/${n.id}/transcribe`, headers: u.auth })).statusCode, 409,
    'completed: 409')

  const failing = await fakeStt(t, { fail: true })
  const app2 = await build(t, { config: { stt: { mode: 'openai', baseUrl: failing.baseUrl, model: 'whisper-1' } } })
  const u2 = await signup(app2)
  const a2 = (await uploadAudio(app2, u2)).json().data
  const n2 = await note(app2, u2, { audioUrl: a2.audioUrl })
  await app2.inject({ method: 'POST', url: `${BASE}/${n2.id}/transcribe`, headers: u2.auth })
  const failed = await waitFor(app2, u2, n2.id, 'failed')
  t.match(failed.error, /answered 500/)
  t.notOk('transcript' in failed)
  t.equal((await app2.inject({ method: 'POST', url: `${BASE}/${n2.id}/transcribe`, headers: u2.auth })).statusCode, 200,
    'failed notes may be transcribed again')

  const off = await build(t, { config: { stt: { mode: 'none', model: 'whisper-1' } } })
  const u3 = await signup(off)
  const n3 = await note(off, u3, { audioUrl: (await uploadAudio(off, u3)).json().data.audioUrl })
  await off.inject({ method: 'POST', url: `${BASE}/${n3.id}/transcribe`, headers: u3.auth })
  t.match((await waitFor(off, u3, n3.id, 'failed')).error, /disabled/)
})

t.test('pocketsphinx engine on real speech made with espeak-ng', async (t) => {
  if (!needsPrograms(t, ['espeak-ng', 'ffmpeg', 'ffprobe', 'pocketsphinx_continuous'],
    'apt-get install pocketsphinx pocketsphinx-en-us espeak-ng ffmpeg')) return
  const dir = tempDir(t)
  const wav = path.join(dir, 'speech.wav')
  execFileSync('espeak-ng',
    ['-v', 'en-us+klatt', '-s', '120', '-w', wav, 'hello world this is a test of speech recognition'])
  const duration = Number(execFileSync('ffprobe',
    ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', wav]).toString())
  const result = await pocketsphinxStt().transcribe(wav, 'audio/wav', new AbortController().signal)
  const expected = ['hello', 'world', 'this', 'is', 'a', 'test', 'of', 'speech', 'recognition']
  const heard = new Set(result.text.toLowerCase().split(/\s+/))
  const recognised = expected.filter((w) => heard.has(w))
  t.ok(recognised.length > expected.length / 2,
    `most words recognised (${recognised.length}/${expected.length}): "${result.text}"`)
  t.ok(result.segments.length >= 1)
  let last = 0
  for (const s of result.segments) {
    t.ok(s.start >= last && s.end >= s.start, 'segments are ordered')
    t.ok(s.end <= duration + 0.1, 'within the audio')
    last = s.end
  }
  t.same(parsePocketsphinx('x\n<s> 0.000 0.100 1.0\nthe(2) 0.100 0.300 0.9\n<sil> 0.300 0.400 1\ncat 0.400 0.700 ' +
    '0.5\n</s> 0.700 0.800 1\n'),
  { text: 'the cat', segments: [{ start: 0.1, end: 0.7, text: 'the cat' }] })
})

t.test('a note left processing by a killed process is completed after restart', async (t) => {
  const hanging = await fakeStt(t, { hang: true })
  const dataDir = tempDir(t)
  const child = spawn(process.execPath,
    [...TS_CHILD, path.join(FIXTURES, 'voice-worker.ts'), dataDir, hanging.baseUrl],
    { stdio: ['ignore', 'pipe', 'inherit'] })
  const { noteId } = await new Promise<{ noteId: string }>((resolve, reject) => {
    let out = ''
    child.stdout.on('data',
      (c: Buffer) => { out += c; if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0])) })
    child.on('exit', (code) => reject(new Error(`worker exited early (${code})`)))
  })
  while (hanging.calls.length === 0) await new Promise((r) => setTimeout(r, 20))
  child.kill('SIGKILL')
  await new Promise((r) => child.once('exit', r))

  const answering = await fakeStt(t)
  const app = await build(t,
    { dataDir,
      config: { allowPrivateUrls: true, stt: { mode: 'openai', baseUrl: answering.baseUrl, model: 'whisper-1' } } })
  const before = app.sqlite.prepare('SELECT status FROM voice_notes WHERE id = ?').get(noteId) as { status: string }
  t.equal(before.status, 'processing', 'left processing by the killed process')
  for (let i = 0; i < 100; i++) {
    await app.jobs.idle()
    const row = app.sqlite.prepare('SELECT status, transcript FROM ' +
      'voice_notes WHERE id = ?').get(noteId) as { status: string; transcript: string }
    if (row.status === 'completed') {
      t.equal(row.transcript, 'Remember to water the ferns on Tuesday.')
      t.equal(answering.calls.length, 1)
      return
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  t.fail('the note was not completed after restart')
})

t.test('rate limit of the group', async (t) => {
  const app = await build(t, { config: { rateLimits: { knowledge: 30, voiceNotes: 2, artifacts: 120, default: 600 } } })
  const u = await signup(app)
  t.equal((await app.inject({ url: BASE, headers: u.auth })).statusCode, 200)
  t.equal((await app.inject({ url: BASE, headers: u.auth })).statusCode, 200)
  t.equal((await app.inject({ url: BASE, headers: u.auth })).statusCode, 429)
  t.ok(fs.existsSync(app.config.dataDir))
})

t.test('a note enters processing only together with its transcription job', async (t) => {
  const app = await build(t, { config: { rateLimits: NO_LIMITS, stt: { mode: 'none', model: 'x' } } })
  const u = await signup(app)
  const audio = (await uploadAudio(app, u)).json().data
  const n = await note(app, u, { audioUrl: audio.audioUrl })
  // the job cannot be written (as when the process dies between the two writes): the note stays as it was
  const enqueue = app.jobs.enqueue
  app.jobs.enqueue = () => { throw new Error('disk full') }
  const res = await app.inject({ method: 'POST', url: `${BASE}/${n.id}/transcribe`, headers: u.auth })
  app.jobs.enqueue = enqueue
  t.equal(res.statusCode, 500)
  const after = (await app.inject({ url: `${BASE}/${n.id}`, headers: u.auth })).json().voiceNote
  t.equal(after.status, 'created', 'not left processing without a job')
  t.equal((app.sqlite.prepare(`SELECT COUNT(*) AS n FROM jobs
    WHERE type = 'voice.transcribe'`).get() as { n: number }).n, 0)
  // and with the job written, both are there
  t.equal((await app.inject({ method: 'POST', url: `${BASE}/${n.id}/transcribe`, headers: u.auth })).statusCode, 200)
  const failed = await waitFor(app, u, n.id, 'failed')
  t.ok(failed.error, 'the job ran (and failed for want of an engine)')
})
