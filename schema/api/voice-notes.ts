import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum, ClosedString, Timestamp, Uuid } from './common.js'

export const VOICE_STATUSES = ['created', 'processing', 'completed', 'failed'] as const
const FreeObject = Type.Object({}, { additionalProperties: true })
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })

export const SegmentSchema = Type.Object({ start: Type.Number(), end: Type.Number(), text: Type.String() })

const noteFields = {
  id: Uuid,
  user_id: Uuid,
  workspace_id: Nullable(Type.String()),
  title: Type.String(),
  audio_url: Type.String(),
  duration: Type.Number(),
  mime_type: Type.String(),
  metadata: FreeObject,
  tags: Type.Array(Type.String()),
  status: ClosedString(VOICE_STATUSES),
  error: Type.Optional(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp
}
export const VoiceNoteSchema = Type.Object(noteFields)
export const VoiceNoteDetailSchema = Type.Object({
  ...noteFields,
  transcript: Type.Optional(Type.String()),
  transcript_segments: Type.Optional(Type.Array(SegmentSchema))
})

export const CreateVoiceNoteBody = Type.Object({
  audioUrl: Type.String({ minLength: 1, maxLength: 2048 }),
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
  duration: Type.Optional(Type.Number({ minimum: 0, maximum: 86_400 })),
  mimeType: Type.Optional(Type.String({ minLength: 3, maxLength: 100, pattern: '^[\\w.+-]+/[\\w.+-]+' })),
  metadata: Type.Optional(FreeObject),
  tags: Type.Optional(Tags),
  workspaceId: Type.Optional(Uuid)
})
export type CreateVoiceNoteBody = Static<typeof CreateVoiceNoteBody>

export const UpdateVoiceNoteBody = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
  tags: Type.Optional(Tags),
  metadata: Type.Optional(FreeObject)
})

export const ListVoiceNotesQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 300 })),
  tags: Type.Optional(Type.String({ maxLength: 2000 })),
  status: Type.Optional(StringEnum(VOICE_STATUSES)),
  workspaceId: Type.Optional(Uuid),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 })
})
export type ListVoiceNotesQuery = Static<typeof ListVoiceNotesQuery>

export const NoteResponse = Type.Object({ success: Type.Literal(true), voiceNote: VoiceNoteSchema })
export const NoteDetailResponse = Type.Object({ success: Type.Literal(true), voiceNote: VoiceNoteDetailSchema })
export const ListVoiceNotesResponse = Type.Object({
  success: Type.Literal(true), voiceNotes: Type.Array(VoiceNoteSchema), total: Type.Integer(), limit: Type.Integer(),
  offset: Type.Integer()
})
export const TranscribeResponse = Type.Object({
  success: Type.Literal(true), message: Type.String(), status: Type.Literal('processing'), voiceNoteId: Uuid
})
export const TranscriptResponse = Type.Object({
  success: Type.Literal(true), voiceNoteId: Uuid, title: Type.String(), transcript: Type.String(),
  segments: Type.Array(SegmentSchema), status: ClosedString(VOICE_STATUSES)
})
export const AudioUploadResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ audioUrl: Type.String(), mimeType: Type.String(), size: Type.Integer() })
})
