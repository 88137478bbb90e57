import type { FastifyInstance } from 'fastify'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { downloadTo } from '../../src/net/download.js'
import type { SpeechToText } from '../../src/ai/stt.js'
import type { Db } from '../../src/db/index.js'
import { writeTurn } from '../../src/db/write-intent.js'
import { configSecrets, describeError } from '../../src/log/mask.js'
import type { NoteRow, VoiceNoteStore } from './store.js'

export const TRANSCRIBE_JOB = 'voice.transcribe'

/**
 * The `voice.transcribe` job (never throws for a bad note: the note fails with a reason; shutdown re-queues
 * it), and the start of a transcription: the note entering `processing` and its job commit together, so
 * a crash between them cannot leave a note processing with no job to finish it.
 */
export function createTranscriber(app: FastifyInstance, store: VoiceNoteStore, db: Db,
  opts: { engine: SpeechToText | string; audioPrefix: string; workDir: string; maxBytes: number }) {
  const { engine, audioPrefix, workDir } = opts
  /** the workspace event stream's voice_note.updated: a note is its owner's alone */
  const announce = (note: Pick<NoteRow, 'id' | 'customerId' | 'userId' | 'workspaceId'>, status: NoteRow['status'],
    changes = 1) => {
    if (changes > 0) app.workspaceEvents.publish({ customerId: note.customerId, workspaceId: note.workspaceId,
      userId: note.userId, name: 'voice_note.updated', data: { id: note.id, status } })
  }

  const secrets = configSecrets(app.config)
  app.jobs.register(TRANSCRIBE_JOB, async (payload, ctx) => {
    const { noteId } = payload
    const note = store.getForJob(noteId)
    if (!note || note.status !== 'processing') return
    const fetched = path.join(workDir, `${noteId}-${randomUUID()}`)
    try {
      if (typeof engine === 'string') throw new Error(engine)
      let file: string
      if (note.audioUrl.startsWith(audioPrefix)) {
        const audio = store.audio(note.userId, note.audioUrl.slice(audioPrefix.length))
        if (!audio) throw new Error('The uploaded audio no longer exists')
        file = path.join(app.config.dataDir, audio.path)
        await fsp.access(file).catch(() => {
          throw new Error('The uploaded audio file is missing from the server\'s data directory (restored without ' +
            'its files?)')
        })
      } else {
        await downloadTo(note.audioUrl, fetched,
          { allowPrivate: app.config.allowPrivateUrls, allow: app.config.webhookAllow,
            maxBytes: opts.maxBytes, timeoutMs: 60_000, signal: ctx.signal })
        file = fetched
      }
      const result = await engine.transcribe(file, note.mimeType, ctx.signal)
      await writeTurn(app.sqlite)
      announce(note, 'completed', store.complete(noteId, result.text, result.segments).changes)
    } catch (err) {
      if (ctx.signal.aborted) throw err
      // the note keeps the message for its owner; the operator's log says it too, secrets masked
      const error = describeError(err, secrets)
      app.log.warn({ noteId, jobId: ctx.jobId, error }, `voice note transcription failed: ${error.message}`)
      await writeTurn(app.sqlite)
      announce(note, 'failed', store.fail(noteId, (err as Error).message || 'Transcription failed').changes)
    } finally {
      await fsp.rm(fetched, { force: true })
    }
  }, { maxAttempts: 3, concurrency: 2 })

  return {
    /** created/failed → processing with its job, in one transaction; undefined when the note cannot start */
    start: (userId: string, id: string): NoteRow | undefined => db.transaction(() => {
      const started = store.startTranscription(userId, id)
      if (started) {
        app.jobs.enqueue(TRANSCRIBE_JOB, { noteId: started.id })
        announce(started, 'processing')
      }
      return started
    }, { behavior: 'immediate' })
  }
}
