import { pgTable, text, doublePrecision, index } from 'drizzle-orm/pg-core'
import { organizations, users } from './accounts.js'
import { int64 } from './columns.js'

export const voiceNotes = pgTable('voice_notes', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id'),
  title: text('title').notNull(),
  audioUrl: text('audio_url').notNull(),
  duration: doublePrecision('duration').notNull(),
  mimeType: text('mime_type').notNull(),
  metadata: text('metadata').notNull(),
  tags: text('tags').notNull(),
  status: text('status', { enum: ['created', 'processing', 'completed', 'failed'] }).notNull(),
  transcript: text('transcript'),
  transcriptSegments: text('transcript_segments'),
  error: text('error'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
  deletedAt: text('deleted_at')
}, (t) => [
  index('voice_notes_user_idx').on(t.userId, t.createdAt),
  index('voice_notes_status_idx').on(t.status)
])

export const voiceAudio = pgTable('voice_audio', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  mimeType: text('mime_type').notNull(),
  size: int64('size').notNull(),
  path: text('path').notNull(),
  createdAt: text('created_at').notNull()
})
