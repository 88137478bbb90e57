import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import multipart from '@fastify/multipart'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { pipeline } from 'node:stream/promises'
import { errors, IdParams, SuccessMessage } from '../../schema/api/common.js'
import {
  CreateVoiceNoteBody, UpdateVoiceNoteBody, ListVoiceNotesQuery, NoteResponse, NoteDetailResponse,
  ListVoiceNotesResponse,
  TranscribeResponse, TranscriptResponse, AudioUploadResponse
} from '../../schema/api/voice-notes.js'
import { requirePrincipal } from '../../src/auth/plugin.js'
import { badRequest, conflict, HttpError, malformedOr, notFound } from '../../src/http/errors.js'
import { openStored } from '../../src/http/stored-file.js'
import { checkPublicUrl, UrlNotAllowedError } from '../../src/net/address-guard.js'
import { sttFromConfig, type SpeechToText } from '../../src/ai/stt.js'
import { writeTurn } from '../../src/db/write-intent.js'
import { createVoiceNoteStore, toNote } from './store.js'
import { createTranscriber } from './transcriber.js'

const MAX_AUDIO_BYTES = 100 * 1024 * 1024
const AUDIO_EXTENSIONS = new Set(['mp3', 'wav', 'ogg', 'oga', 'opus', 'webm', 'm4a', 'mp4', 'aac', 'flac', 'amr',
  '3gp'])
const tags = ['voice-notes']
const jwtOnly = { auth: 'jwt' as const }

export interface VoiceNotesOptions {
  /** the engine to use instead of the configured one (tests) */
  stt?: SpeechToText
}

function defaultTitle(now = new Date()) {
  return `Voice Note ${now.toISOString().slice(0, 16).replace('T', ' ')}`
}

/** Voice notes (docs/api/voice-notes.md): JWT only, the owner's notes only. */
const voiceNotes: FastifyPluginAsyncTypebox<VoiceNotesOptions> = async (app, opts) => {
  await app.register(multipart, { limits: { fileSize: MAX_AUDIO_BYTES, files: 1, fields: 5 } })
  const store = createVoiceNoteStore(app.db, app.sqlite)
  const audioDir = path.join(app.config.dataDir, 'voice', 'audio')
  const workDir = path.join(app.config.dataDir, 'voice', 'tmp')
  fs.mkdirSync(audioDir, { recursive: true })
  fs.mkdirSync(workDir, { recursive: true })
  const audioPrefix = `${app.config.publicUrl}/api/v2/voice-notes/audio/`
  const transcriber = createTranscriber(app, store, app.db, {
    engine: opts.stt ?? sttFromConfig(app.config.stt), audioPrefix, workDir, maxBytes: MAX_AUDIO_BYTES
  })

  app.post('/audio', {
    config: { ...jwtOnly, action: 'voice_notes.upload_audio' },
    schema: { tags, summary: 'Store an audio file (multipart field "file", at most 100 MB)',
      consumes: ['multipart/form-data'], response: { 201: AudioUploadResponse, ...errors(403, 413, 415) } }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    if (!request.isMultipart()) throw badRequest('No file uploaded', 'NO_FILE')
    let part
    try {
      part = await request.file()
    } catch (err) {
      throw malformedOr(err)
    }
    if (!part) throw badRequest('No file uploaded', 'NO_FILE')
    const ext = path.extname(part.filename).slice(1).toLowerCase()
    if (!part.mimetype.startsWith('audio/') && !AUDIO_EXTENSIONS.has(ext)) {
      part.file.resume()
      throw new HttpError(415, 'Only audio files can be uploaded', 'UNSUPPORTED_MEDIA_TYPE')
    }
    const id = randomUUID()
    const rel = path.join('voice', 'audio', id)
    const target = path.join(app.config.dataDir, rel)
    try {
      await pipeline(part.file, fs.createWriteStream(target))
      if (part.file.truncated) throw new HttpError(413, 'Audio too large: at most 100 MB', 'PAYLOAD_TOO_LARGE')
    } catch (err) {
      await fsp.rm(target, { force: true })
      if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
        throw new HttpError(413, 'Audio too large: at most 100 MB', 'PAYLOAD_TOO_LARGE')
      }
      throw malformedOr(err)
    }
    const size = (await fsp.stat(target)).size
    const mimeType = part.mimetype.startsWith('audio/') ? part.mimetype : `audio/${ext === 'm4a' ? 'mp4' : ext}`
    // after the upload's body: a write turn of its own (src/db/write-intent.ts)
    await writeTurn(app.sqlite)
    store.addAudio({ id, userId: p.userId, mimeType, size, path: rel })
    reply.code(201)
    return { success: true as const, data: { audioUrl: `${audioPrefix}${id}`, mimeType, size } }
  })

  app.get('/audio/:id', {
    config: { ...jwtOnly, action: 'voice_notes.get_audio' },
    schema: { tags, summary: 'The stored audio, to its owner', params: IdParams,
      response: { ...errors(403, 404, 410) } }
  }, async (request, reply) => {
    const audio = store.audio(requirePrincipal(request).userId, request.params.id)
    if (!audio) throw notFound('Audio not found')
    const { handle, size } = await openStored(path.join(app.config.dataDir, audio.path), 'audio')
    reply.type(audio.mimeType).header('content-length', size)
    return reply.send(handle.createReadStream())
  })

  app.post('', {
    config: { ...jwtOnly, action: 'voice_notes.create' },
    schema: { tags, summary: 'Create a voice note for an audio URL (status created)', body: CreateVoiceNoteBody,
      response: { 201: NoteResponse, ...errors(403) } }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const b = request.body
    if (b.audioUrl.startsWith(audioPrefix)) {
      if (!store.audio(p.userId, b.audioUrl.slice(audioPrefix.length))) {
        throw badRequest('audioUrl names audio that is not yours', 'VALIDATION_ERROR')
      }
    } else {
      try {
        await checkPublicUrl(b.audioUrl, { allowPrivate: app.config.allowPrivateUrls,
          allow: app.config.webhookAllow })
      } catch (err) {
        if (err instanceof UrlNotAllowedError) throw badRequest(`audioUrl refused: ${err.message}`, 'URL_NOT_ALLOWED')
        throw err
      }
    }
    if (b.workspaceId) app.workspaceFor(p, b.workspaceId)
    // after the address's check (a DNS look-up)
    await writeTurn(app.sqlite)
    const note = store.create({
      customerId: p.customerId, userId: p.userId, workspaceId: b.workspaceId ?? null,
      title: b.title?.trim() || defaultTitle(),
      audioUrl: b.audioUrl, duration: b.duration ?? 0, mimeType: b.mimeType ?? 'audio/webm', metadata: b.metadata ?? {},
      tags: b.tags ?? []
    })
    reply.code(201)
    return { success: true as const, voiceNote: toNote(note) }
  })

  app.get('', {
    config: { ...jwtOnly, action: 'voice_notes.list' },
    schema: { tags, summary: 'The caller\'s voice notes, newest first', querystring: ListVoiceNotesQuery,
      response: { 200: ListVoiceNotesResponse, ...errors(403) } }
  }, async (request) => {
    const q = request.query
    const p = requirePrincipal(request)
    if (q.workspaceId) app.workspaceFor(p, q.workspaceId)
    const { rows, total } = store.list(p.userId, q)
    return { success: true as const, voiceNotes: rows.map((r) => toNote(r)), total, limit: q.limit, offset: q.offset }
  })

  app.get('/:id', {
    config: { ...jwtOnly, action: 'voice_notes.get' },
    schema: { tags, summary: 'One voice note, with its transcript once completed', params: IdParams,
      response: { 200: NoteDetailResponse, ...errors(403, 404) } }
  }, async (request) => {
    const note = store.get(requirePrincipal(request).userId, request.params.id)
    if (!note) throw notFound('Voice note not found')
    return { success: true as const, voiceNote: toNote(note, true) }
  })

  app.put('/:id', {
    config: { ...jwtOnly, action: 'voice_notes.update' },
    schema: { tags, summary: 'Change title, tags (replaced) or metadata (replaced)', params: IdParams,
      body: UpdateVoiceNoteBody, response: { 200: NoteResponse, ...errors(403, 404) } }
  }, async (request) => {
    const b = request.body
    if (b.title === undefined && b.tags === undefined && b.metadata === undefined) {
      throw badRequest('No valid field to update: send title, tags or metadata', 'VALIDATION_ERROR')
    }
    const note = store.update(requirePrincipal(request).userId, request.params.id,
      { ...b, title: b.title?.trim() || b.title })
    if (!note) throw notFound('Voice note not found')
    return { success: true as const, voiceNote: toNote(note) }
  })

  app.delete('/:id', {
    config: { ...jwtOnly, action: 'voice_notes.delete' },
    schema: { tags, summary: 'Delete a voice note (soft delete)', params: IdParams,
      response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    if (!store.remove(requirePrincipal(request).userId, request.params.id)) throw notFound('Voice note not found')
    return { success: true as const, message: 'Voice note deleted' }
  })

  app.post('/:id/transcribe', {
    config: { ...jwtOnly, action: 'voice_notes.transcribe' },
    schema: { tags, summary: 'Start transcription (from created or failed)', params: IdParams,
      response: { 200: TranscribeResponse, ...errors(403, 404, 409) } }
  }, async (request) => {
    const userId = requirePrincipal(request).userId
    const started = transcriber.start(userId, request.params.id)
    if (!started) {
      const note = store.get(userId, request.params.id)
      if (!note) throw notFound('Voice note not found')
      throw conflict(`The voice note is ${note.status}: transcription can start only from created or failed`,
        'INVALID_STATE')
    }
    return { success: true as const, message: 'Transcription started', status: 'processing' as const,
      voiceNoteId: started.id }
  })

  app.get('/:id/transcript', {
    config: { ...jwtOnly, action: 'voice_notes.transcript' },
    schema: { tags, summary: 'The transcript; 404 until the note is completed', params: IdParams,
      response: { 200: TranscriptResponse, ...errors(403, 404) } }
  }, async (request) => {
    const note = store.get(requirePrincipal(request).userId, request.params.id)
    if (!note) throw notFound('Voice note not found')
    if (note.status !== 'completed') throw notFound(`No transcript yet: the voice note is ${note.status}`)
    return {
      success: true as const, voiceNoteId: note.id, title: note.title, transcript: note.transcript ?? '',
      segments: JSON.parse(note.transcriptSegments ?? '[]') as Array<{ start: number; end: number; text: string }>,
      status: note.status
    }
  })
}

export default voiceNotes
