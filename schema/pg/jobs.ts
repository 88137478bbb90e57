import { pgTable, text, integer, index } from 'drizzle-orm/pg-core'
import { int64 } from './columns.js'

export const jobs = pgTable('jobs', {
  id: text('id').primaryKey(),
  type: text('type').notNull(),
  payload: text('payload').notNull(),
  status: text('status', { enum: ['queued', 'running', 'done', 'failed'] }).notNull(),
  attempts: integer('attempts').notNull().default(0),
  maxAttempts: integer('max_attempts').notNull(),
  /** epoch milliseconds: not run before */
  runAt: int64('run_at').notNull(),
  lastError: text('last_error'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [
  index('jobs_due_idx').on(t.status, t.type, t.runAt),
  index('jobs_updated_idx').on(t.status, t.updatedAt)
])
