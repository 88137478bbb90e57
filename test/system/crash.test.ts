import t from 'tap'
import http from 'node:http'
import fs from 'node:fs'
import path from 'node:path'
import { spawn } from 'node:child_process'
import Database from 'better-sqlite3'
import type { AddressInfo } from 'node:net'
import { build, tempDir, FIXTURES, searching, trigramsCaughtUp, TS_CHILD } from '../helper.js'
import { fakeStt } from '../fake-stt.js'

t.test('SIGKILL during uploads, transcription and webhook fan-out: intact database, nothing ' +
  'half-made, jobs resume', async (t) => {
  const dataDir = tempDir(t)
  const hangingStt = await fakeStt(t, { hang: true })
  // a receiver that holds every delivery open: the fan-out is in flight when the process dies
  let held = 0
  const slowRx = http.createServer(() => { held++ })
  await new Promise<void>((r) => slowRx.listen(0, '127.0.0.1', r))
  t.teardown(() => { slowRx.closeAllConnections(); slowRx.close() })

  const child = spawn(process.execPath,
    [...TS_CHILD, path.join(FIXTURES, 'crash-server.ts'), dataDir, hangingStt.baseUrl],
    { stdio: ['ignore', 'pipe', 'inherit'] })
  const { address } = await new Promise<{ address: string }>((resolve, reject) => {
    let out = ''
    child.stdout.on('data',
      (c: Buffer) => { out += c; if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0])) })
    child.on('exit', (code) => reject(new Error(`server exited early (${code})`)))
  })
  const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(address + url,
      { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined })
    return { status: res.status,
      json: await res.json() as { data?: Record<string, string>; voiceNote?: { id: string } } }
  }
  const s = (await call('POST', '/api/v2/auth/signup',
    { email: 'crash@example.test', password: 'long enough password' })).json.data!
  const auth = { authorization: `Bearer ${s.token}` }
  const ws = { ...auth, 'x-workspace-id': s.workspaceId }

  // finished uploads, whose indexing is queued
  const docs: string[] = []
  for (let i = 0; i < 3; i++) {
    const form = new FormData()
    form.append('file', new Blob([`Document ${i}. ` + 'lorem ipsum dolor sit amet '.repeat(20_000)]), `doc${i}.txt`)
    const res = await fetch(`${address}/api/knowledge/upload`, { method: 'POST', headers: auth, body: form })
    docs.push(((await res.json()) as { document: { id: string } }).document.id)
  }
  // a webhook whose receiver never answers, and messages that fan out to it
  await call('POST', '/api/v2/developer/webhooks', { url: `http://127.0.0.1:${(slowRx.address() as AddressInfo).port}/`, events: ['message.created'] }, ws)
  const channel = (await call('POST', '/api/v2/channels', { name: 'general', type: 'public' }, ws)).json.data!
  for (let i = 0; i < 5; i++) await call('POST', '/api/v2/messages',
    { channel_id: channel.id, content: `message ${i}` }, auth)
  // a transcription stuck at the speech-to-text server
  const audioForm = new FormData()
  audioForm.append('file', new Blob([Buffer.alloc(4000, 3)], { type: 'audio/wav' }), 'memo.wav')
  const audio = ((await (await fetch(`${address}/api/v2/voice-notes/audio`,
    { method: 'POST', headers: auth, body: audioForm })).json()) as { data: { audioUrl: string } }).data
  const note = (await call('POST', '/api/v2/voice-notes', { audioUrl: audio.audioUrl, mimeType: 'audio/wav' },
    auth)).json.voiceNote!
  await call('POST', `/api/v2/voice-notes/${note.id}/transcribe`, undefined, auth)
  // and an upload still streaming in
  const boundary = 'crashboundary'
  const streaming = http.request(`${address}/api/knowledge/upload`,
    { method: 'POST', headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` } })
  streaming.on('error', () => undefined)
  streaming.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.txt"\r\n` +
    'Content-Type: text/plain\r\n\r\n')
  streaming.write('x'.repeat(2 * 1024 * 1024))
  // (the child server takes its jobs on its own schedule: on a busy machine that can take several seconds)
  for (let i = 0; i < 600 &&
    (hangingStt.calls.length === 0 || held === 0); i++) await new Promise((r) => setTimeout(r, 50))
  t.ok(hangingStt.calls.length > 0 && held > 0, 'transcription and deliveries were in flight')

  child.kill('SIGKILL')
  await new Promise((r) => child.once('exit', r))
  streaming.destroy()

  // restart on the same data, with services that answer
  const answeringStt = await fakeStt(t)
  const received: string[] = []
  const rx = http.createServer((req, res) => {
    let b = ''; req.on('data', (c) => { b += c }); req.on('end',
      () => { received.push(b); res.end() })
  })
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r))
  t.teardown(() => rx.close())
  // the interrupted deliveries' webhook now points at a receiver that answers (changed before the restart)
  const db = new Database(path.join(dataDir, 'cairn.db'))
  db.prepare('UPDATE webhooks SET url = ?').run(`http://127.0.0.1:${(rx.address() as AddressInfo).port}/`)
  db.close()
  const app = await build(t,
    { dataDir,
      config: { allowPrivateUrls: true, stt: { mode: 'openai', baseUrl: answeringStt.baseUrl, model: 'whisper-1' } } })
  t.equal(app.sqlite.pragma('integrity_check', { simple: true }), 'ok', 'the database is intact')
  t.equal((app.sqlite.pragma('foreign_key_check') as unknown[]).length, 0)
  // the half-sent upload left no document and no file
  const rows = app.sqlite.prepare('SELECT id, file_name, original_path, text_path FROM ' +
    'knowledge_documents').all() as Array<{ id: string; file_name: string; original_path: string; text_path: string }>
  t.same(rows.map((r) => r.id).sort(), [...docs].sort(), 'exactly the completed uploads')
  for (const r of rows) {
    t.ok(fs.existsSync(path.join(dataDir, r.original_path)) && fs.existsSync(path.join(dataDir, r.text_path)),
      `${r.file_name} has its files`)
  }
  t.same(fs.readdirSync(path.join(dataDir, 'knowledge', 'tmp')), [], 'no partial upload is left')
  t.equal(fs.readdirSync(path.join(dataDir, 'knowledge', 'originals')).length, docs.length, 'no orphan originals')

  for (let i = 0; i < 300; i++) {
    await app.jobs.idle()
    const pending = app.sqlite.prepare(`SELECT
      (SELECT COUNT(*) FROM knowledge_documents WHERE status != 'indexed') + (SELECT COUNT(*) FROM voice_notes
        WHERE status = 'processing') AS n`).get() as { n: number }
    if (pending.n === 0) break
    await new Promise((r) => setTimeout(r, 50))
  }
  for (const r of rows) {
    const doc = app.sqlite.prepare('SELECT status, chunk_count FROM ' +
      'knowledge_documents WHERE id = ?').get(r.id) as { status: string; chunk_count: number }
    const passages = app.sqlite.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT chunk_index) AS d FROM ' +
      'knowledge_passages WHERE document_id = ?').get(r.id) as { n: number; d: number }
    t.equal(doc.status, 'indexed', `${r.file_name} indexed after restart`)
    t.equal(passages.n, doc.chunk_count, `${r.file_name}: every passage once`)
    t.equal(passages.d, doc.chunk_count)
  }
  // the trigram file (its own thread, killed mid-way too) holds every passage once, and nothing else
  await trigramsCaughtUp(t, app)
  const [search] = searching(t, app)
  t.same(search.prepare('SELECT rowid FROM trigrams.knowledge_passages_fts ORDER BY rowid').pluck().all(),
    search.prepare('SELECT rowid FROM main.knowledge_passages ORDER BY rowid').pluck().all(),
    'the trigram index holds exactly the passages')
  const v = app.sqlite.prepare('SELECT status, transcript FROM ' +
    'voice_notes WHERE id = ?').get(note.id) as { status: string; transcript: string }
  t.equal(v.status, 'completed', 'the transcription resumed and finished')
  t.ok(received.length >= 1, `interrupted deliveries were sent after restart (${received.length})`)
  t.ok(received.every((b) => JSON.parse(b).event === 'message.created'))
})

t.test('a crash between a document row and its indexing job leaves neither', async (t) => {
  const dataDir = tempDir(t)
  const child = spawn(process.execPath,
    [...TS_CHILD, path.join(FIXTURES, 'crash-at-enqueue.ts'), dataDir],
    { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise((r) => child.once('exit', r))
  const { address } = await new Promise<{ address: string }>((resolve, reject) => {
    let out = ''
    child.stdout.on('data',
      (c: Buffer) => { out += c; if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0])) })
    child.on('exit', (code) => reject(new Error(`server exited early (${code})`)))
  })
  const signup = await fetch(`${address}/api/v2/auth/signup`,
    { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'enqueue@example.test', password: 'long enough password' }) })
  const { token } = ((await signup.json()) as { data: { token: string } }).data
  const uploads = ['small.txt', 'large.txt'].map(async (name) => {
    const form = new FormData()
    // one document indexed at upload (under 1 MB), one in the background (over 1 MB)
    form.append('file',
      new Blob([(name === 'small.txt' ? 'a short note about herons. ' : 'lorem ipsum dolor sit amet '.repeat(50_000))]),
      name)
    return fetch(`${address}/api/knowledge/upload`,
      { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form }).then((r) => r.status,
      () => 'no answer')
  })
  t.same(await Promise.all(uploads), ['no answer', 'no answer'], 'the server died before answering')
  await exited

  const app = await build(t, { dataDir })
  t.equal(app.sqlite.pragma('integrity_check', { simple: true }), 'ok')
  await app.jobs.idle()
  const left = app.sqlite.prepare(`SELECT file_name, status FROM knowledge_documents`).all()
  t.same(left, [], 'no document row without its job (none is pending forever)')
  t.same(fs.readdirSync(path.join(dataDir, 'knowledge', 'originals')), [], 'its files were swept at start')
})
