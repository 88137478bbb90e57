// @cairn/client's voice-note and channel methods against a listening Cairn, with an OpenAI-compatible speech-to-text
// server on a real socket that fails until told otherwise.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { build, signup, tempDir } from '../helper.js'
import { fakeStt } from '../fake-stt.js'
import { CairnClient } from '../../clients/typescript/src/client.js'
import { CairnError } from '../../clients/typescript/src/errors.js'

const sttOptions = { fail: true }
const stt = await fakeStt(t, sttOptions)
const app = await build(t, { config: { stt: { mode: 'openai', baseUrl: stt.baseUrl, model: 'whisper-1' } } })
await app.listen({ port: 0, host: '127.0.0.1' })
const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

async function statusOf(err: Promise<unknown>): Promise<number | undefined> {
  try {
    await err
  } catch (e) {
    return e instanceof CairnError ? e.statusCode : -1
  }
  return undefined
}

t.test('voice notes: upload, create, list, get, transcribe, a failure retried, the transcript', async (t) => {
  const u = await signup(app)
  const stranger = await signup(app)
  const person = new CairnClient({ baseUrl, token: u.token, workspaceId: u.workspaceId })
  const other = new CairnClient({ baseUrl, token: stranger.token, workspaceId: stranger.workspaceId })

  const dir = tempDir(t)
  const file = path.join(dir, 'standup.wav')
  fs.writeFileSync(file, Buffer.alloc(2048, 1))
  const fromPath = await person.uploadAudio({ path: file })
  t.match(fromPath, { audioUrl: /\/api\/v2\/voice-notes\/audio\/[0-9a-f-]+$/, mimeType: 'audio/wav', size: 2048 })
  const fromBytes = await person.uploadAudio({ data: new Uint8Array(512), fileName: 'memo.mp3' })
  t.equal(fromBytes.size, 512)
  t.equal(await statusOf(person.uploadAudio({ data: 'not audio', fileName: 'notes.txt' })), 415,
    'a file that is not audio is refused')

  const note = await person.createVoiceNote({ audioUrl: fromPath.audioUrl, mimeType: fromPath.mimeType,
    title: 'Stand-up', tags: ['team'] })
  t.match(note, { title: 'Stand-up', status: 'created', tags: ['team'] })
  await person.createVoiceNote({ audioUrl: fromBytes.audioUrl, mimeType: fromBytes.mimeType, title: 'Memo' })

  const page = await person.listVoiceNotes({ limit: 1 })
  t.equal(page.total, 2)
  t.equal(page.voiceNotes.length, 1)
  t.equal(page.voiceNotes[0].title, 'Memo', 'newest first')
  const titles: string[] = []
  for await (const n of person.voiceNotes({ limit: 1 })) titles.push(n.title)
  t.same(titles, ['Memo', 'Stand-up'], 'the iterator pages through every note')
  t.same((await person.listVoiceNotes({ status: 'completed' })).voiceNotes, [], 'filtered by status')

  t.equal(await statusOf(person.voiceNoteTranscript(note.id)), 404, 'no transcript before one is made')
  await person.transcribeVoiceNote(note.id)
  await app.jobs.idle()
  const failed = await person.getVoiceNote(note.id)
  t.equal(failed.status, 'failed')
  t.ok(failed.error, 'the reason is kept on the note')

  sttOptions.fail = false
  await person.retryVoiceNote(note.id)
  await app.jobs.idle()
  const done = await person.getVoiceNote(note.id)
  t.equal(done.status, 'completed')
  const transcript = await person.voiceNoteTranscript(note.id)
  t.match(transcript, { voiceNoteId: note.id, title: 'Stand-up', status: 'completed',
    transcript: /water the ferns on Tuesday/ })
  t.match(transcript.segments, [{ start: 0, end: 2.1 }, { start: 2.1, end: 4.2 }], 'timed segments')
  t.equal(await statusOf(person.transcribeVoiceNote(note.id)), 409, 'a completed note is not transcribed again')

  t.equal(await statusOf(other.getVoiceNote(note.id)), 404, 'another organization\'s note is not found')
  t.equal(await statusOf(other.voiceNoteTranscript(note.id)), 404)
  t.equal(await statusOf(other.retryVoiceNote(note.id)), 404)
  t.equal((await other.listVoiceNotes()).total, 0, 'nor listed')
})

t.test('channels: create, list, post, messages newest first with paging back', async (t) => {
  const u = await signup(app)
  const stranger = await signup(app)
  const person = new CairnClient({ baseUrl, token: u.token, workspaceId: u.workspaceId })
  const other = new CairnClient({ baseUrl, token: stranger.token, workspaceId: stranger.workspaceId })

  const channel = await person.createChannel({ name: 'releases', type: 'public' })
  t.match(channel, { name: 'releases', type: 'public', workspace_id: u.workspaceId })
  t.ok((await person.listChannels()).some((c) => c.id === channel.id))
  const first = await person.postMessage({ channel_id: channel.id, content: 'v1.2 is out' })
  t.match(first, { channel_id: channel.id, sender_id: u.userId, content: 'v1.2 is out' })
  await person.postMessage({ channel_id: channel.id, content: 'v1.3 is out' })
  const messages = await person.channelMessages(channel.id)
  t.same(messages.map((m) => m.content), ['v1.3 is out', 'v1.2 is out'])
  const older = await person.channelMessages(channel.id, { limit: 1, before: messages[0].created_at })
  t.same(older.map((m) => m.content), ['v1.2 is out'], 'before pages back')

  t.notOk((await other.listChannels()).some((c) => c.id === channel.id), 'not listed to another organization')
  t.equal(await statusOf(other.channelMessages(channel.id)), 404)
  t.equal(await statusOf(other.postMessage({ channel_id: channel.id, content: 'hi' })), 404)
})
