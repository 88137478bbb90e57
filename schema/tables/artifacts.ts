import { sqliteTable, text, real, integer, index } from 'drizzle-orm/sqlite-core'
import { organizations, workspaces, users } from './accounts.js'

export const artifacts = sqliteTable('artifacts', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  type: text('type').notNull(),
  subtype: text('subtype'),
  title: text('title').notNull(),
  /** JSON object */
  content: text('content').notNull(),
  status: text('status').notNull(),
  workflowId: text('workflow_id'),
  workflowRunId: text('workflow_run_id'),
  conversationId: text('conversation_id'),
  messageId: text('message_id'),
  /** previous version; kept as is when that version is deleted (its tombstone keeps the chain connected) */
  parentArtifactId: text('parent_artifact_id'),
  /** JSON array of artifact ids */
  relatedArtifacts: text('related_artifacts').notNull(),
  confidenceScore: real('confidence_score'),
  reviewPolicy: text('review_policy').notNull(),
  reviewedBy: text('reviewed_by'),
  /** counts changes of title, content and confidence: 1 at creation */
  revision: integer('revision').notNull().default(1),
  /** who set the current status: `person` (a user session or the service key) or `key` (an API key) */
  statusSetBy: text('status_set_by'),
  /** the revision, and the SHA-256 of the title and content, that the current approval or rejection was made on */
  reviewedRevision: integer('reviewed_revision'),
  reviewedSha256: text('reviewed_sha256'),
  createdBy: text('created_by').notNull().references(() => users.id),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [
  // every list filter has its index, led by the tenant columns so counts are covered by the index alone
  index('artifacts_ws_created_idx').on(t.workspaceId, t.customerId, t.createdAt, t.id),
  index('artifacts_ws_type_idx').on(t.workspaceId, t.customerId, t.type, t.createdAt, t.id),
  index('artifacts_ws_status_idx').on(t.workspaceId, t.customerId, t.status, t.createdAt, t.id),
  index('artifacts_ws_workflow_idx').on(t.workspaceId, t.customerId, t.workflowId, t.createdAt, t.id),
  index('artifacts_ws_run_idx').on(t.workspaceId, t.customerId, t.workflowRunId, t.createdAt, t.id),
  index('artifacts_ws_conversation_idx').on(t.workspaceId, t.customerId, t.conversationId, t.createdAt, t.id),
  index('artifacts_ws_message_idx').on(t.workspaceId, t.customerId, t.messageId, t.createdAt, t.id),
  index('artifacts_parent_idx').on(t.parentArtifactId)
])

export const artifactComments = sqliteTable('artifact_comments', {
  id: text('id').primaryKey(),
  artifactId: text('artifact_id').notNull().references(() => artifacts.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull(),
  content: text('content').notNull(),
  /** JSON object or null: a free-form anchor such as a step reference */
  position: text('position'),
  createdAt: text('created_at').notNull()
}, (t) => [index('artifact_comments_artifact_idx').on(t.artifactId, t.createdAt)])

/** What is left of a deleted artifact: only its place in the version chain. */
export const artifactTombstones = sqliteTable('artifact_tombstones', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  parentArtifactId: text('parent_artifact_id'),
  deletedAt: text('deleted_at').notNull()
}, (t) => [index('artifact_tombstones_parent_idx').on(t.parentArtifactId)])

/** Artifacts per workspace, kept by triggers on `artifacts` (see migration 0002): the unfiltered list total. */
export const artifactCounts = sqliteTable('artifact_counts', {
  workspaceId: text('workspace_id').primaryKey().references(() => workspaces.id, { onDelete: 'cascade' }),
  count: integer('count').notNull()
})
