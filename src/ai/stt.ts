import { spawn } from 'node:child_process'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import type { Config } from '../config.js'

export interface Segment { start: number; end: number; text: string }
export interface Transcript { text: string; segments: Segment[] }

/** A speech-to-text engine: one audio file in, its text and timed segments out. */
export interface SpeechToText {
  readonly name: string
  transcribe(file: string, mimeType: string, signal: AbortSignal): Promise<Transcript>
}

/** A transcription that cannot succeed as configured; its message is stored on the note. */
export class TranscriptionError extends Error {
  override name = 'TranscriptionError'
}

/** OpenAI-compatible `/audio/transcriptions` (whisper.cpp server, faster-whisper/speaches, LocalAI, OpenAI). */
export function openAiStt(baseUrl: string, apiKey: string | undefined, model: string): SpeechToText {
  return {
    name: 'openai',
    async transcribe(file, mimeType, signal) {
      const form = new FormData()
      form.append('file', await fs.openAsBlob(file, { type: mimeType }), path.basename(file) + extensionFor(mimeType))
      form.append('model', model)
      form.append('response_format', 'verbose_json')
      form.append('timestamp_granularities[]', 'segment')
      const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/audio/transcriptions`, {
        method: 'POST', body: form, signal, headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}
      })
      const body = await res.text()
      if (!res.ok) throw new TranscriptionError(`Transcription service answered ${res.status}: ${body.slice(0, 300)}`)
      let json: { text?: unknown; segments?: Array<{ start?: unknown; end?: unknown; text?: unknown }> }
      try { json = JSON.parse(body) } catch {
        throw new TranscriptionError('Transcription service did not answer JSON')
      }
      if (typeof json.text !== 'string') throw new TranscriptionError('Transcription service answered without text')
      const segments = (json.segments ?? [])
        .filter((s) => typeof s.start === 'number' && typeof s.end === 'number' && typeof s.text === 'string')
        .map((s) => ({ start: s.start as number, end: s.end as number, text: (s.text as string).trim() }))
      return { text: json.text.trim(), segments }
    }
  }
}

function extensionFor(mimeType: string): string {
  const sub = mimeType.split('/')[1]?.split(';')[0] ?? ''
  return ({ mpeg: '.mp3', 'x-wav': '.wav', wav: '.wav', webm: '.webm', ogg: '.ogg', mp4: '.m4a', 'x-m4a': '.m4a',
    flac: '.flac' } as Record<string, string>)[sub] ?? ''
}

function run(cmd: string, args: string[], signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], signal })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => { out += c })
    child.stderr.on('data', (c: Buffer) => { err += c })
    child.on('error',
      (e) => reject((e as NodeJS.ErrnoException).code === 'ENOENT' ? new TranscriptionError(`${cmd} is not installed`)
        : e))
    child.on('close',
      (code) => code === 0 ? resolve(out)
        : reject(new TranscriptionError(`${cmd} failed (exit ${code}): ${err.trim().split('\n').pop() ?? ''}`)))
  })
}

const FILLERS = new Set(['<s>', '</s>', '<sil>', '(NULL)', '[NOISE]', '[SPEECH]', '[BREATH]', '[COUGH]', '[UH]', '[UM]',
  '[SMACK]'])

/**
 * Parses `pocketsphinx_continuous -time yes` output: each utterance is a `<s>`…`</s>` block of
 * `word start end confidence` lines; an utterance becomes a segment.
 */
export function parsePocketsphinx(output: string): Transcript {
  const segments: Segment[] = []
  let words: Array<{ w: string; start: number; end: number }> = []
  const close = () => {
    if (words.length > 0) {
      segments.push({ start: words[0].start, end: words[words.length - 1].end, text: words.map((x) => x.w).join(' ') })
    }
    words = []
  }
  for (const line of output.split('\n')) {
    const m = /^(\S+) (\d+\.\d+) (\d+\.\d+) (\d+(?:\.\d+)?)$/.exec(line.trim())
    if (!m) continue
    if (m[1] === '</s>') { close(); continue }
    if (FILLERS.has(m[1]) || m[1].startsWith('++')) continue
    words.push({ w: m[1].replace(/\(\d+\)$/, ''), start: Number(m[2]), end: Number(m[3]) })
  }
  close()
  return { text: segments.map((s) => s.text).join(' '), segments }
}

/** CMU Sphinx from the operating system's packages; ffmpeg turns any input into 16 kHz mono WAV first. */
export function pocketsphinxStt(): SpeechToText {
  return {
    name: 'pocketsphinx',
    async transcribe(file, _mimeType, signal) {
      const wav = path.join(os.tmpdir(), `cairn-stt-${randomUUID()}.wav`)
      try {
        await run('ffmpeg',
          ['-nostdin', '-loglevel', 'error', '-y', '-i', file, '-ar', '16000', '-ac', '1', '-f', 'wav', wav], signal)
        const out = await run('pocketsphinx_continuous', ['-infile', wav, '-time', 'yes', '-logfn', '/dev/null'],
          signal)
        return parsePocketsphinx(out)
      } finally {
        await fsp.rm(wav, { force: true })
      }
    }
  }
}

export function pocketsphinxInstalled(): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => fs.existsSync(path.join(dir,
    'pocketsphinx_continuous')))
}

/** The engine the configuration names (`CAIRN_STT`, docs/api/voice-notes.md), or a reason why there is none. */
export function sttFromConfig(stt: Config['stt']): SpeechToText | string {
  if (stt.mode === 'none') return 'Speech to text is disabled (CAIRN_STT=none)'
  if (stt.mode === 'openai' || (stt.mode === 'auto' && stt.baseUrl)) {
    if (!stt.baseUrl) return 'CAIRN_STT=openai needs CAIRN_STT_BASE_URL'
    return openAiStt(stt.baseUrl, stt.apiKey, stt.model)
  }
  if (stt.mode === 'pocketsphinx' || pocketsphinxInstalled()) return pocketsphinxStt()
  return 'No speech-to-text engine: set CAIRN_STT_BASE_URL to an OpenAI-compatible server, or install pocketsphinx, ' +
    'pocketsphinx-en-us and ffmpeg'
}
