import { sqliteTable, text, real, integer, index } from 'drizzle-orm/sqlite-core'
import { organizations, users } from './accounts.js'

export const voiceNotes = sqliteTable('voice_notes', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id'),
  title: text('title').notNull(),
  audioUrl: text('audio_url').notNull(),
  duration: real('duration').notNull(),
  mimeType: text('mime_type').notNull(),
  metadata: text('metadata').notNull(),
  tags: text('tags').notNull(),
  status: text('status', { enum: ['created', 'processing', 'completed', 'failed'] }).notNull(),
  transcript: text('transcript'),
  /** JSON array of {start, end, text} */
  transcriptSegments: text('transcript_segments'),
  error: text('error'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
  deletedAt: text('deleted_at')
}, (t) => [
  index('voice_notes_user_idx').on(t.userId, t.createdAt),
  index('voice_notes_status_idx').on(t.status)
])

/** Audio uploaded through POST /api/v2/voice-notes/audio, served back to its owner only. */
export const voiceAudio = sqliteTable('voice_audio', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  mimeType: text('mime_type').notNull(),
  size: integer('size').notNull(),
  path: text('path').notNull(),
  createdAt: text('created_at').notNull()
})
