import { pgTable, text, integer, primaryKey, index, uniqueIndex } from 'drizzle-orm/pg-core'
import { int64 } from './columns.js'

export const organizations = pgTable('organizations', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [index('organizations_created_idx').on(t.createdAt)])

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  name: text('name').notNull(),
  passwordHash: text('password_hash').notNull(),
  orgRole: text('org_role', { enum: ['owner', 'admin', 'member'] }).notNull(),
  createdAt: text('created_at').notNull(),
  removedAt: text('removed_at')
}, (t) => [
  uniqueIndex('users_email_idx').on(t.email),
  index('users_customer_idx').on(t.customerId, t.orgRole, t.createdAt)
])

export const workspaces = pgTable('workspaces', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [index('workspaces_customer_idx').on(t.customerId)])

export const workspaceMembers = pgTable('workspace_members', {
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  role: text('role', { enum: ['owner', 'admin', 'member'] }).notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [
  primaryKey({ columns: [t.workspaceId, t.userId] }),
  index('workspace_members_user_idx').on(t.userId)
])

export const loginFailures = pgTable('login_failures', {
  key: text('key').primaryKey(),
  failures: integer('failures').notNull(),
  lockedUntil: int64('locked_until').notNull(),
  lastFailure: int64('last_failure').notNull()
}, (t) => [index('login_failures_last_idx').on(t.lastFailure)])

export const sessions = pgTable('sessions', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  createdAt: text('created_at').notNull(),
  expiresAt: int64('expires_at').notNull(),
  endedAt: text('ended_at')
}, (t) => [index('sessions_user_idx').on(t.userId), index('sessions_expires_idx').on(t.expiresAt)])

export const invitations = pgTable('invitations', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  role: text('role', { enum: ['admin', 'member'] }).notNull(),
  workspaces: text('workspaces').notNull(),
  tokenHash: text('token_hash').notNull(),
  invitedBy: text('invited_by').notNull(),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at').notNull(),
  acceptedAt: text('accepted_at'),
  revokedAt: text('revoked_at')
}, (t) => [
  uniqueIndex('invitations_token_idx').on(t.tokenHash),
  index('invitations_customer_idx').on(t.customerId, t.createdAt)
])

export const passwordResets = pgTable('password_resets', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  tokenHash: text('token_hash').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at').notNull(),
  usedAt: text('used_at')
}, (t) => [uniqueIndex('password_resets_token_idx').on(t.tokenHash), index('password_resets_user_idx').on(t.userId)])
