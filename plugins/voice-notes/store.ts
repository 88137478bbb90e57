import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import { nowIso } from '../../src/db/index.js'
import type { ListVoiceNotesQuery } from '../../schema/api/voice-notes.js'

export interface NoteRow {
  id: string; customer_id: string; user_id: string; workspace_id: string | null; title: string; audio_url: string
  duration: number; mime_type: string; metadata: string; tags: string; status: 'created' | 'processing' | 'completed' | 'failed'
  transcript: string | null; transcript_segments: string | null; error: string | null
  created_at: string; updated_at: string; deleted_at: string | null
}

export function toNote(r: NoteRow, withTranscript = false) {
  return {
    id: r.id, user_id: r.user_id, workspace_id: r.workspace_id, title: r.title, audio_url: r.audio_url, duration: r.duration,
    mime_type: r.mime_type, metadata: JSON.parse(r.metadata) as Record<string, unknown>, tags: JSON.parse(r.tags) as string[],
    status: r.status, ...(r.error ? { error: r.error } : {}), created_at: r.created_at, updated_at: r.updated_at,
    ...(withTranscript && r.status === 'completed' && r.transcript !== null
      ? { transcript: r.transcript, transcript_segments: JSON.parse(r.transcript_segments ?? '[]') as Array<{ start: number; end: number; text: string }> }
      : {})
  }
}

/** Voice notes of their owner; soft-deleted notes are invisible to every query. */
export function createVoiceNoteStore(sqlite: Database.Database) {
  // Unicode-aware case folding for the title search (SQLite's lower() folds ASCII only)
  sqlite.function('cairn_fold', { deterministic: true }, (s: unknown) => typeof s === 'string' ? s.toLowerCase() : null)
  const insert = sqlite.prepare(`INSERT INTO voice_notes (id, customer_id, user_id, workspace_id, title, audio_url, duration, mime_type,
    metadata, tags, status, created_at, updated_at) VALUES (@id, @customerId, @userId, @workspaceId, @title, @audioUrl, @duration,
    @mimeType, @metadata, @tags, 'created', @now, @now) RETURNING *`)
  const own = sqlite.prepare(`SELECT * FROM voice_notes WHERE id = ? AND user_id = ? AND deleted_at IS NULL`)
  const byId = sqlite.prepare(`SELECT * FROM voice_notes WHERE id = ? AND deleted_at IS NULL`)
  const softDelete = sqlite.prepare(`UPDATE voice_notes SET deleted_at = ?, updated_at = ? WHERE id = ? AND user_id = ? AND deleted_at IS NULL`)
  const startTranscription = sqlite.prepare(`UPDATE voice_notes SET status = 'processing', error = NULL, updated_at = ?
    WHERE id = ? AND user_id = ? AND deleted_at IS NULL AND status IN ('created', 'failed') RETURNING *`)
  const complete = sqlite.prepare(`UPDATE voice_notes SET status = 'completed', transcript = ?, transcript_segments = ?, error = NULL, updated_at = ?
    WHERE id = ? AND status = 'processing'`)
  const fail = sqlite.prepare(`UPDATE voice_notes SET status = 'failed', error = ?, updated_at = ? WHERE id = ? AND status = 'processing'`)

  return {
    create(input: { customerId: string; userId: string; workspaceId: string | null; title: string; audioUrl: string; duration: number;
      mimeType: string; metadata: object; tags: string[] }) {
      return insert.get({ ...input, id: randomUUID(), metadata: JSON.stringify(input.metadata), tags: JSON.stringify(input.tags), now: nowIso() }) as NoteRow
    },
    get: (userId: string, id: string) => own.get(id, userId) as NoteRow | undefined,
    getForJob: (id: string) => byId.get(id) as NoteRow | undefined,
    list(userId: string, q: ListVoiceNotesQuery) {
      const where = ['user_id = @userId', 'deleted_at IS NULL']
      const tags = (q.tags ?? '').split(',').map((t) => t.trim()).filter(Boolean)
      if (q.search) where.push(`instr(cairn_fold(title), cairn_fold(@search)) > 0`)
      if (q.status) where.push('status = @status')
      if (q.workspaceId) where.push('workspace_id = @workspaceId')
      tags.forEach((_, i) => where.push(`EXISTS (SELECT 1 FROM json_each(voice_notes.tags) j WHERE j.value = @tag${i})`))
      const params: Record<string, unknown> = { userId, search: q.search, status: q.status, workspaceId: q.workspaceId, limit: q.limit, offset: q.offset }
      tags.forEach((tag, i) => { params[`tag${i}`] = tag })
      const rows = sqlite.prepare(`SELECT * FROM voice_notes WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset`).all(params) as NoteRow[]
      const { n } = sqlite.prepare(`SELECT COUNT(*) AS n FROM voice_notes WHERE ${where.join(' AND ')}`).get(params) as { n: number }
      return { rows, total: n }
    },
    update(userId: string, id: string, patch: { title?: string; tags?: string[]; metadata?: object }) {
      const sets: string[] = []
      const values: unknown[] = []
      if (patch.title !== undefined) { sets.push('title = ?'); values.push(patch.title) }
      if (patch.tags !== undefined) { sets.push('tags = ?'); values.push(JSON.stringify(patch.tags)) }
      if (patch.metadata !== undefined) { sets.push('metadata = ?'); values.push(JSON.stringify(patch.metadata)) }
      return sqlite.prepare(`UPDATE voice_notes SET ${sets.join(', ')}, updated_at = ? WHERE id = ? AND user_id = ? AND deleted_at IS NULL RETURNING *`)
        .get(...values, nowIso(), id, userId) as NoteRow | undefined
    },
    remove: (userId: string, id: string) => softDelete.run(nowIso(), nowIso(), id, userId).changes > 0,
    /** created/failed → processing; undefined when the note is in another state (or not the user's) */
    startTranscription: (userId: string, id: string) => startTranscription.get(nowIso(), id, userId) as NoteRow | undefined,
    complete: (id: string, text: string, segments: object[]) => complete.run(text, JSON.stringify(segments), nowIso(), id),
    fail: (id: string, error: string) => fail.run(error.slice(0, 1000), nowIso(), id)
  }
}

export type VoiceNoteStore = ReturnType<typeof createVoiceNoteStore>
