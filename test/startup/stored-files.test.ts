import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { build, multipart, signup, type TestUser } from '../helper.js'
import { loggerOptions, type App } from '../../src/app.js'
import { findMissingStoredFiles, missingFilesWarning } from '../../src/startup/stored-files.js'

async function uploadDocument(app: App, user: TestUser, name: string, text: string): Promise<string> {
  const body = multipart([{ filename: name, content: text, contentType: 'text/plain' }])
  const res = await app.inject({ method: 'POST', url: '/api/knowledge/upload',
    headers: { ...user.auth, ...body.headers }, payload: body.payload })
  if (res.statusCode !== 201) throw new Error(`upload: ${res.statusCode} ${res.body}`)
  return res.json().document.id as string
}

async function uploadAudio(app: App, user: TestUser): Promise<{ id: string; audioUrl: string }> {
  const body = multipart([{ filename: 'memo.wav', content: Buffer.alloc(3000, 9), contentType: 'audio/wav' }])
  const res = await app.inject({ method: 'POST', url: '/api/v2/voice-notes/audio',
    headers: { ...user.auth, ...body.headers }, payload: body.payload })
  if (res.statusCode !== 201) throw new Error(`audio: ${res.statusCode} ${res.body}`)
  const { audioUrl } = res.json().data as { audioUrl: string }
  return { id: audioUrl.slice(audioUrl.lastIndexOf('/') + 1), audioUrl }
}

t.test('stored files lost (a restore of the database alone) are counted at start, and their downloads answer 410',
  async (t) => {
    const app = await build(t)
    const owner = await signup(app)
    const stranger = await signup(app)
    const kept = await uploadDocument(app, owner, 'kept.txt', 'This document keeps its files.')
    const lostOriginal = await uploadDocument(app, owner, 'lost.txt', 'This one loses its original upload.')
    const lostText = await uploadDocument(app, owner, 'text.txt', 'This one loses its extracted text.')
    const audio = await uploadAudio(app, owner)
    const keptAudio = await uploadAudio(app, owner)
    const note = await app.inject({ method: 'POST', url: '/api/v2/voice-notes', headers: owner.auth,
      payload: { audioUrl: audio.audioUrl, title: 'Standup', mimeType: 'audio/wav' } })
    t.equal(note.statusCode, 201, note.body)
    await app.jobs.idle()

    const download = (id: string, user = owner) => app.inject({ method: 'GET',
      url: `/api/knowledge/document/${id}/download`, headers: user.auth })
    const audioOf = (id: string, user = owner) => app.inject({ method: 'GET', url: `/api/v2/voice-notes/audio/${id}`,
      headers: user.auth })
    t.equal((await download(lostOriginal)).body, 'This one loses its original upload.', 'before: the original')
    t.equal((await audioOf(audio.id)).rawPayload.length, 3000)
    t.same(await findMissingStoredFiles(app.db, app.config.dataDir),
      { documents: 0, audio: 0, voiceNotes: 0, examples: { documents: [], audio: [] } }, 'nothing missing yet')

    // what a restore of cairn.db without the folders beside it leaves
    const dataDir = app.config.dataDir
    fs.rmSync(path.join(dataDir, 'knowledge', 'originals', lostOriginal))
    fs.rmSync(path.join(dataDir, 'knowledge', 'text', `${lostText}.txt`))
    fs.rmSync(path.join(dataDir, 'voice', 'audio', audio.id))

    const missing = await findMissingStoredFiles(app.db, dataDir)
    t.same({ ...missing, examples: { ...missing.examples, documents: [...missing.examples.documents].sort() } },
      { documents: 2, audio: 1, voiceNotes: 1,
        examples: { documents: [lostOriginal, lostText].sort(), audio: [audio.id] } })
    t.equal(missingFilesWarning(missing), 'stored files are missing from the data directory: 2 documents and 1 ' +
      'uploaded audio file (of 1 voice note) lack their files. Was the database restored without the knowledge/ and ' +
      'voice/ folders beside it? Their downloads answer 410 STORED_FILE_MISSING until the files are put back (or the ' +
      'documents uploaded again)')

    const gone = await download(lostOriginal)
    t.equal(gone.statusCode, 410, 'no 500, and no extracted text passed off as the original')
    t.match(gone.json(), { success: false, statusCode: 410, error: 'Gone', code: 'STORED_FILE_MISSING',
      message: /^The stored file of this document is missing from the server's data directory/ })
    t.notOk(gone.body.includes(dataDir), 'the message names no server path')
    t.equal((await download(kept)).body, 'This document keeps its files.', 'other documents still download')
    t.equal((await download(lostText)).statusCode, 200, 'a document whose original remains still downloads')
    const audioGone = await audioOf(audio.id)
    t.equal(audioGone.statusCode, 410)
    t.match(audioGone.json(), { code: 'STORED_FILE_MISSING', message: /^The stored file of this audio is missing/ })
    t.equal((await audioOf(keptAudio.id)).statusCode, 200)

    // another tenant learns nothing: the same 404 as for an id that never existed
    t.equal((await download(lostOriginal, stranger)).statusCode, 404)
    t.equal((await audioOf(audio.id, stranger)).statusCode, 404)
  })

t.test('a voice note whose uploaded audio is gone fails its transcription with a clear error, in the log too',
  async (t) => {
    const { fakeStt } = await import('../fake-stt.js')
    const stt = await fakeStt(t)
    const lines: string[] = []
    const app = await build(t, { config: { stt: { mode: 'openai', baseUrl: stt.baseUrl, model: 'whisper-1' } },
      logger: loggerOptions('warn', { write: (line: string) => { lines.push(line) } }) })
    const owner = await signup(app)
    const audio = await uploadAudio(app, owner)
    const note = (await app.inject({ method: 'POST', url: '/api/v2/voice-notes', headers: owner.auth,
      payload: { audioUrl: audio.audioUrl, title: 'Standup', mimeType: 'audio/wav' } })).json().voiceNote
    fs.rmSync(path.join(app.config.dataDir, 'voice', 'audio', audio.id))
    const started = await app.inject({ method: 'POST', url: `/api/v2/voice-notes/${note.id}/transcribe`,
      headers: owner.auth })
    t.equal(started.statusCode, 200)
    await app.jobs.idle()
    const after = (await app.inject({ method: 'GET', url: `/api/v2/voice-notes/${note.id}`, headers: owner.auth }))
      .json().voiceNote
    t.match(after, { status: 'failed',
      error: 'The uploaded audio file is missing from the server\'s data directory (restored without its files?)' })
    t.equal(stt.calls.length, 0, 'the speech server is not asked')
    const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string; noteId?: string })
      .filter((l) => l.noteId === note.id)
    t.match(logged, [{ level: 40, msg: 'voice note transcription failed: The uploaded audio file is missing from the ' +
    'server\'s data directory (restored without its files?)' }])
  })
