import { pgTable, text, integer, index, primaryKey } from 'drizzle-orm/pg-core'
import { organizations, users, workspaces } from './accounts.js'
import { int64 } from './columns.js'

export const conversations = pgTable('conversations', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  agentId: text('agent_id'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [index('conversations_user_idx').on(t.userId, t.updatedAt)])

export const conversationMessages = pgTable('conversation_messages', {
  seq: int64('seq').primaryKey().generatedByDefaultAsIdentity(),
  conversationId: text('conversation_id').notNull().references(() => conversations.id, { onDelete: 'cascade' }),
  role: text('role', { enum: ['system', 'user', 'assistant', 'tool'] }).notNull(),
  content: text('content').notNull(),
  toolCalls: text('tool_calls'),
  toolCallId: text('tool_call_id'),
  createdAt: text('created_at').notNull()
}, (t) => [index('conversation_messages_conv_idx').on(t.conversationId, t.seq)])

export const agents = pgTable('agents', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  createdBy: text('created_by').notNull(),
  name: text('name').notNull(),
  systemPrompt: text('system_prompt').notNull(),
  tools: text('tools').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [index('agents_customer_idx').on(t.customerId, t.createdAt)])

export const channels = pgTable('channels', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  type: text('type', { enum: ['public', 'announcement', 'text', 'private', 'direct'] }).notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [index('channels_ws_idx').on(t.workspaceId, t.createdAt)])

export const channelMembers = pgTable('channel_members', {
  channelId: text('channel_id').notNull().references(() => channels.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' })
}, (t) => [primaryKey({ columns: [t.channelId, t.userId] }), index('channel_members_user_idx').on(t.userId)])

export const channelMessages = pgTable('channel_messages', {
  /** SQLite's rowid, named: the order of messages made in the same millisecond */
  rowid: int64('rowid').primaryKey().generatedByDefaultAsIdentity(),
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

export const workflows = pgTable('workflows', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  createdBy: text('created_by').notNull(),
  updatedBy: text('updated_by').notNull().default(''),
  name: text('name').notNull(),
  description: text('description').notNull(),
  inputs: text('inputs').notNull(),
  steps: text('steps').notNull(),
  scheduleCron: text('schedule_cron'),
  scheduleInputs: text('schedule_inputs'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [index('workflows_ws_idx').on(t.workspaceId, t.createdAt), index('workflows_cron_idx').on(t.scheduleCron)])

export const workflowRuns = pgTable('workflow_runs', {
  id: text('id').primaryKey(),
  workflowId: text('workflow_id').notNull().references(() => workflows.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull(),
  customerId: text('customer_id').notNull(),
  startedBy: text('started_by').notNull(),
  trigger: text('trigger', { enum: ['api', 'schedule'] }).notNull(),
  status: text('status', { enum: ['queued', 'running', 'completed', 'failed'] }).notNull(),
  inputs: text('inputs').notNull(),
  outputs: text('outputs'),
  steps: text('steps').notNull(),
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
export const workflowRunCounts = pgTable('workflow_run_counts', {
  customerId: text('customer_id').primaryKey().references(() => organizations.id, { onDelete: 'cascade' }),
  count: integer('count').notNull()
})
