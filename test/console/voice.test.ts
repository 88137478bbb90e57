// The console's voice notes in a real browser, transcribed by an OpenAI-compatible speech-to-text server on a real
// socket: a recording uploaded, its status followed live, its transcript's timed segments, its audio played.
import t from 'tap'
import { multipart, signup } from '../helper.js'
import { fakeStt } from '../fake-stt.js'
import { fitsWidth, harness, PHONE } from './harness.js'

/** `seconds` of silence as a WAV file (8 kHz, 8-bit, mono): real audio the browser can play. */
function silence(seconds: number): Buffer {
  const samples = 8000 * seconds
  const header = Buffer.alloc(44)
  header.write('RIFF', 0)
  header.writeUInt32LE(36 + samples, 4)
  header.write('WAVEfmt ', 8)
  header.writeUInt32LE(16, 16)
  header.writeUInt16LE(1, 20)
  header.writeUInt16LE(1, 22)
  header.writeUInt32LE(8000, 24)
  header.writeUInt32LE(8000, 28)
  header.writeUInt16LE(1, 32)
  header.writeUInt16LE(8, 34)
  header.write('data', 36)
  header.writeUInt32LE(samples, 40)
  return Buffer.concat([header, Buffer.alloc(samples, 128)])
}

/** The page's audio element, typed here without the DOM library. */
type AudioGlobals = { document: { querySelector(s: string): { readyState: number; duration: number;
  currentTime: number } | null } }

const stt = await fakeStt(t)
const h = await harness(t, { config: { stt: { mode: 'openai', baseUrl: stt.baseUrl, model: 'whisper-1' } } })
if (h) {
  const { app, base, open, signIn, shot } = h

  await t.test('a recording uploaded, transcribed live, its timed segments play the audio from there', async (t) => {
    const u = await signup(app)
    const page = await open(t, '/voice-notes')
    await signIn(page, u)
    await page.getByRole('heading', { level: 1, name: 'Voice notes' }).waitFor()
    await page.getByText('No voice notes yet.').waitFor()
    await page.getByRole('button', { name: 'Upload and transcribe' }).click()
    await page.getByRole('alert').filter({ hasText: 'Choose a recording first.' }).waitFor()
    t.pass('a missing file is said beside the form')

    await page.getByLabel('Recording').setInputFiles({ name: 'standup.wav', mimeType: 'audio/wav', buffer: silence(5) })
    await page.getByLabel('Title', { exact: true }).fill('Monday standup')
    await page.getByRole('button', { name: 'Upload and transcribe' }).click()
    const row = page.locator('.doc-list li').filter({ hasText: 'Monday standup' })
    await row.getByText('Transcribed').waitFor({ timeout: 30_000 })
    t.pass('the list follows the transcription to its end without a reload')
    t.equal(stt.calls.length, 1, 'the speech-to-text server heard it once')
    await shot(page, 'voice-notes')

    await row.getByRole('link', { name: 'Monday standup' }).click()
    await page.getByRole('heading', { level: 1, name: 'Monday standup' }).waitFor()
    const segments = page.locator('.segments li')
    await segments.first().waitFor()
    t.equal(await segments.count(), 2, 'the transcript\'s two segments')
    t.match(await segments.nth(0).textContent(), /0:00–0:02\s*Remember to water the ferns/)
    t.match(await segments.nth(1).textContent(), /0:02–0:04\s*on Tuesday\./)

    const audioReady = () => page.evaluate(() => {
      const a = (globalThis as unknown as AudioGlobals).document.querySelector('audio')
      return a ? { readyState: a.readyState, duration: a.duration, at: a.currentTime } : null
    })
    await page.waitForFunction(() =>
      ((globalThis as unknown as AudioGlobals).document.querySelector('audio')?.readyState ?? 0) >= 1)
    t.match(await audioReady(), { duration: 5 }, 'the audio player has the recording')
    await page.getByRole('button', { name: 'Play from 0:02' }).click()
    await page.waitForFunction(() =>
      ((globalThis as unknown as AudioGlobals).document.querySelector('audio')?.currentTime ?? 0) >= 2)
    t.pass('a segment plays the recording from its time')
    await shot(page, 'voice-note')
  })

  await t.test('another person\'s voice note is not found; a phone-sized window', async (t) => {
    const u = await signup(app)
    const other = await signup(app)
    const body = multipart([{ filename: 'theirs.wav', content: silence(1), contentType: 'audio/wav' }])
    const stored = await app.inject({ method: 'POST', url: '/api/v2/voice-notes/audio',
      headers: { ...other.auth, ...body.headers }, payload: body.payload })
    const audio = await app.inject({ method: 'POST', url: '/api/v2/voice-notes', headers: other.auth,
      payload: { audioUrl: stored.json().data.audioUrl, title: 'Their private thoughts' } })
    t.equal(audio.statusCode, 201)
    const page = await open(t, '/voice-notes', PHONE)
    await signIn(page, u)
    await page.getByText('No voice notes yet.').waitFor()
    t.ok(await fitsWidth(page), 'nothing wider than a 390-pixel screen')
    await page.goto(`${base}/voice-notes/${audio.json().voiceNote.id}`)
    await page.getByRole('heading', { level: 1, name: 'Voice note not found' }).waitFor()
    t.equal(await page.getByText('Their private thoughts').count(), 0, 'nothing of it is shown')
  })
}
