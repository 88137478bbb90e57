import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core'
import { organizations, users, workspaces } from './accounts.js'

export const conversations = sqliteTable('conversations', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  agentId: text('agent_id'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [index('conversations_user_idx').on(t.userId, t.updatedAt)])

export const conversationMessages = sqliteTable('conversation_messages', {
  seq: integer('seq').primaryKey({ autoIncrement: true }),
  conversationId: text('conversation_id').notNull().references(() => conversations.id, { onDelete: 'cascade' }),
  role: text('role', { enum: ['system', 'user', 'assistant', 'tool'] }).notNull(),
  content: text('content').notNull(),
  /** JSON array of {id, name, arguments} on assistant messages that call tools */
  toolCalls: text('tool_calls'),
  toolCallId: text('tool_call_id'),
  createdAt: text('created_at').notNull()
}, (t) => [index('conversation_messages_conv_idx').on(t.conversationId, t.seq)])

export const agents = sqliteTable('agents', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  createdBy: text('created_by').notNull(),
  name: text('name').notNull(),
  systemPrompt: text('system_prompt').notNull(),
  /** JSON array of tool names */
  tools: text('tools').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [index('agents_customer_idx').on(t.customerId, t.createdAt)])

export const channels = sqliteTable('channels', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  type: text('type', { enum: ['public', 'announcement', 'text', 'private', 'direct'] }).notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [index('channels_ws_idx').on(t.workspaceId, t.createdAt)])

export const channelMembers = sqliteTable('channel_members', {
  channelId: text('channel_id').notNull().references(() => channels.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' })
}, (t) => [primaryKey({ columns: [t.channelId, t.userId] }), index('channel_members_user_idx').on(t.userId)])

export const channelMessages = sqliteTable('channel_messages', {
  rowid: integer('rowid').primaryKey(),
  id: text('id').notNull().unique(),
  channelId: text('channel_id').notNull().references(() => channels.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull(),
  senderId: text('sender_id').notNull(),
  aiTwinId: text('ai_twin_id'),
  parentMessageId: text('parent_message_id'),
  content: text('content').notNull(),
  contentType: text('content_type').notNull(),
  attachmentCount: integer('attachment_count').notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [index('channel_messages_channel_idx').on(t.channelId, t.createdAt)])

export const workflows = sqliteTable('workflows', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  createdBy: text('created_by').notNull(),
  /** who last saved the definition or schedule: scheduled runs act as this user (docs/api/assistant.md#workflows) */
  updatedBy: text('updated_by').notNull().default(''),
  name: text('name').notNull(),
  description: text('description').notNull(),
  /** JSON: the definition's inputs and steps */
  inputs: text('inputs').notNull(),
  steps: text('steps').notNull(),
  scheduleCron: text('schedule_cron'),
  scheduleInputs: text('schedule_inputs'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [index('workflows_ws_idx').on(t.workspaceId, t.createdAt), index('workflows_cron_idx').on(t.scheduleCron)])

export const workflowRuns = sqliteTable('workflow_runs', {
  id: text('id').primaryKey(),
  workflowId: text('workflow_id').notNull().references(() => workflows.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull(),
  customerId: text('customer_id').notNull(),
  startedBy: text('started_by').notNull(),
  trigger: text('trigger', { enum: ['api', 'schedule'] }).notNull(),
  status: text('status', { enum: ['queued', 'running', 'completed', 'failed'] }).notNull(),
  inputs: text('inputs').notNull(),
  outputs: text('outputs'),
  /** JSON array of {id, type, status, output, error} */
  steps: text('steps').notNull(),
  /**
   * JSON {steps}: the steps as they were when the run was created: a run executes what was authorized, not a
   * later edit. Null only for runs queued before this column existed.
   */
  definition: text('definition'),
  error: text('error'),
  createdAt: text('created_at').notNull(),
  startedAt: text('started_at'),
  finishedAt: text('finished_at')
}, (t) => [index('workflow_runs_wf_idx').on(t.workflowId, t.createdAt),
  index('workflow_runs_trigger_idx').on(t.workflowId, t.trigger, t.createdAt),
  // an organization's runs in flight, and its oldest finished ones (the runs quota: docs/api/assistant.md#workflows)
  index('workflow_runs_customer_idx').on(t.customerId, t.status, t.createdAt)])

/**
 * How many runs an organization keeps, kept exact by triggers on workflow_runs (every insert and delete, a
 * workflow's cascade too): the runs quota is checked without a count scan.
 */
export const workflowRunCounts = sqliteTable('workflow_run_counts', {
  customerId: text('customer_id').primaryKey().references(() => organizations.id, { onDelete: 'cascade' }),
  count: integer('count').notNull()
})
