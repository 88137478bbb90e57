import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'

export const jobs = sqliteTable('jobs', {
  id: text('id').primaryKey(),
  type: text('type').notNull(),
  payload: text('payload').notNull(),
  status: text('status', { enum: ['queued', 'running', 'done', 'failed'] }).notNull(),
  attempts: integer('attempts').notNull().default(0),
  maxAttempts: integer('max_attempts').notNull(),
  /** epoch milliseconds: not run before */
  runAt: integer('run_at').notNull(),
  lastError: text('last_error'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [
  // the claim asks per type: with the type in the key, a backlog of one type costs the others' claims nothing
  index('jobs_due_idx').on(t.status, t.type, t.runAt),
  index('jobs_updated_idx').on(t.status, t.updatedAt)
])
