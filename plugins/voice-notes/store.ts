import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import { and, count, desc, eq, inArray, isNull, sql } from 'drizzle-orm'
import { nowIso, type Db } from '../../src/db/index.js'
import { voiceAudio, voiceNotes } from '../../schema/tables/voice-notes.js'
import type { ListVoiceNotesQuery } from '../../schema/api/voice-notes.js'

export type NoteRow = typeof voiceNotes.$inferSelect
export type AudioRow = typeof voiceAudio.$inferSelect
type Segment = { start: number; end: number; text: string }

export function toNote(r: NoteRow, withTranscript = false) {
  return {
    id: r.id, user_id: r.userId, workspace_id: r.workspaceId, title: r.title, audio_url: r.audioUrl,
    duration: r.duration,
    mime_type: r.mimeType, metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    tags: JSON.parse(r.tags) as string[],
    status: r.status, ...(r.error ? { error: r.error } : {}), created_at: r.createdAt, updated_at: r.updatedAt,
    ...(withTranscript && r.status === 'completed' && r.transcript !== null
      ? { transcript: r.transcript, transcript_segments: JSON.parse(r.transcriptSegments ?? '[]') as Segment[] }
      : {})
  }
}

/** Voice notes of their owner and their uploaded audio; soft-deleted notes are invisible to every query. */
export function createVoiceNoteStore(db: Db, sqlite: Database.Database) {
  // Unicode-aware case folding for the title search (SQLite's lower() folds ASCII only)
  sqlite.function('cairn_fold', { deterministic: true }, (s: unknown) => typeof s === 'string' ? s.toLowerCase() : null)
  const live = (id: string) => and(eq(voiceNotes.id, id), isNull(voiceNotes.deletedAt))
  const owned = (userId: string, id: string) => and(live(id), eq(voiceNotes.userId, userId))
  const own = db.select().from(voiceNotes).where(and(eq(voiceNotes.id, sql.placeholder('id')),
    eq(voiceNotes.userId, sql.placeholder('userId')),
    isNull(voiceNotes.deletedAt))).prepare()
  const audioOf = db.select().from(voiceAudio).where(and(eq(voiceAudio.id, sql.placeholder('id')),
    eq(voiceAudio.userId, sql.placeholder('userId'))))
    .prepare()

  return {
    create(input: { customerId: string; userId: string; workspaceId: string | null; title: string; audioUrl: string;
      duration: number;
      mimeType: string; metadata: object; tags: string[] }): NoteRow {
      const now = nowIso()
      return db.insert(voiceNotes).values({
        ...input, id: randomUUID(), metadata: JSON.stringify(input.metadata), tags: JSON.stringify(input.tags),
        status: 'created',
        createdAt: now, updatedAt: now
      }).returning().get()
    },
    get: (userId: string, id: string): NoteRow | undefined => own.get({ id, userId }),
    getForJob: (id: string): NoteRow | undefined => db.select().from(voiceNotes).where(live(id)).get(),
    list(userId: string, q: ListVoiceNotesQuery) {
      const tags = (q.tags ?? '').split(',').map((t) => t.trim()).filter(Boolean)
      const where = and(eq(voiceNotes.userId, userId), isNull(voiceNotes.deletedAt),
        // the folding function and json_each have no Drizzle operator: SQL fragments over the table's columns
        q.search ? sql`instr(cairn_fold(${voiceNotes.title}), cairn_fold(${q.search})) > 0` : undefined,
        q.status ? eq(voiceNotes.status, q.status) : undefined,
        q.workspaceId ? eq(voiceNotes.workspaceId, q.workspaceId) : undefined,
        ...tags.map((tag) => sql`EXISTS (SELECT 1 FROM json_each(${voiceNotes.tags}) j WHERE j.value = ${tag})`))
      const rows = db.select().from(voiceNotes).where(where)
        .orderBy(desc(voiceNotes.createdAt), desc(voiceNotes.id)).limit(q.limit).offset(q.offset).all()
      const total = db.select({ n: count() }).from(voiceNotes).where(where).get()!.n
      return { rows, total }
    },
    update(userId: string, id: string,
      patch: { title?: string; tags?: string[]; metadata?: object }): NoteRow | undefined {
      return db.update(voiceNotes).set({
        ...(patch.title !== undefined ? { title: patch.title } : {}),
        ...(patch.tags !== undefined ? { tags: JSON.stringify(patch.tags) } : {}),
        ...(patch.metadata !== undefined ? { metadata: JSON.stringify(patch.metadata) } : {}),
        updatedAt: nowIso()
      }).where(owned(userId, id)).returning().get()
    },
    remove: (userId: string, id: string) => {
      const now = nowIso()
      return db.update(voiceNotes).set({ deletedAt: now, updatedAt: now }).where(owned(userId, id)).run().changes > 0
    },
    /** created/failed → processing; undefined when the note is in another state (or not the user's) */
    startTranscription: (userId: string, id: string): NoteRow | undefined =>
      db.update(voiceNotes).set({ status: 'processing', error: null, updatedAt: nowIso() })
        .where(and(owned(userId, id), inArray(voiceNotes.status, ['created', 'failed']))).returning().get(),
    complete: (id: string, text: string, segments: object[]) => db.update(voiceNotes)
      .set({ status: 'completed', transcript: text, transcriptSegments: JSON.stringify(segments), error: null,
        updatedAt: nowIso() })
      .where(and(eq(voiceNotes.id, id), eq(voiceNotes.status, 'processing'))).run(),
    fail: (id: string,
      error: string) => db.update(voiceNotes).set({ status: 'failed', error: error.slice(0, 1000),
      updatedAt: nowIso() })
      .where(and(eq(voiceNotes.id, id), eq(voiceNotes.status, 'processing'))).run(),

    audio: (userId: string, id: string): AudioRow | undefined => audioOf.get({ id, userId }),
    addAudio: (row: Omit<AudioRow,
      'createdAt'>) => { db.insert(voiceAudio).values({ ...row, createdAt: nowIso() }).run() }
  }
}

export type VoiceNoteStore = ReturnType<typeof createVoiceNoteStore>
