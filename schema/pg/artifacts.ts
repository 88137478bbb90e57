import { pgTable, text, doublePrecision, integer, index } from 'drizzle-orm/pg-core'
import { organizations, workspaces, users } from './accounts.js'

export const artifacts = pgTable('artifacts', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  type: text('type').notNull(),
  subtype: text('subtype'),
  title: text('title').notNull(),
  content: text('content').notNull(),
  status: text('status').notNull(),
  workflowId: text('workflow_id'),
  workflowRunId: text('workflow_run_id'),
  conversationId: text('conversation_id'),
  messageId: text('message_id'),
  parentArtifactId: text('parent_artifact_id'),
  relatedArtifacts: text('related_artifacts').notNull(),
  confidenceScore: doublePrecision('confidence_score'),
  reviewPolicy: text('review_policy').notNull(),
  reviewedBy: text('reviewed_by'),
  revision: integer('revision').notNull().default(1),
  statusSetBy: text('status_set_by'),
  reviewedRevision: integer('reviewed_revision'),
  reviewedSha256: text('reviewed_sha256'),
  createdBy: text('created_by').notNull().references(() => users.id),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [
  index('artifacts_ws_created_idx').on(t.workspaceId, t.customerId, t.createdAt, t.id),
  index('artifacts_ws_type_idx').on(t.workspaceId, t.customerId, t.type, t.createdAt, t.id),
  index('artifacts_ws_status_idx').on(t.workspaceId, t.customerId, t.status, t.createdAt, t.id),
  index('artifacts_ws_workflow_idx').on(t.workspaceId, t.customerId, t.workflowId, t.createdAt, t.id),
  index('artifacts_ws_run_idx').on(t.workspaceId, t.customerId, t.workflowRunId, t.createdAt, t.id),
  index('artifacts_ws_conversation_idx').on(t.workspaceId, t.customerId, t.conversationId, t.createdAt, t.id),
  index('artifacts_ws_message_idx').on(t.workspaceId, t.customerId, t.messageId, t.createdAt, t.id),
  index('artifacts_parent_idx').on(t.parentArtifactId)
])

export const artifactComments = pgTable('artifact_comments', {
  id: text('id').primaryKey(),
  artifactId: text('artifact_id').notNull().references(() => artifacts.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull(),
  content: text('content').notNull(),
  position: text('position'),
  createdAt: text('created_at').notNull()
}, (t) => [index('artifact_comments_artifact_idx').on(t.artifactId, t.createdAt)])

export const artifactTombstones = pgTable('artifact_tombstones', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  parentArtifactId: text('parent_artifact_id'),
  deletedAt: text('deleted_at').notNull()
}, (t) => [index('artifact_tombstones_parent_idx').on(t.parentArtifactId)])

/** Artifacts per workspace, kept by triggers on `artifacts` (the custom migration after the tables), as in SQLite. */
export const artifactCounts = pgTable('artifact_counts', {
  workspaceId: text('workspace_id').primaryKey().references(() => workspaces.id, { onDelete: 'cascade' }),
  count: integer('count').notNull()
})
