import { sqliteTable, text, integer, primaryKey, index, uniqueIndex } from 'drizzle-orm/sqlite-core'

export const organizations = sqliteTable('organizations', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [index('organizations_created_idx').on(t.createdAt)])

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  name: text('name').notNull(),
  passwordHash: text('password_hash').notNull(),
  orgRole: text('org_role', { enum: ['owner', 'admin', 'member'] }).notNull(),
  createdAt: text('created_at').notNull(),
  /** set when an admin removed the person: their sessions and keys stop working, their documents stay */
  removedAt: text('removed_at')
}, (t) => [
  uniqueIndex('users_email_idx').on(t.email),
  index('users_customer_idx').on(t.customerId, t.orgRole, t.createdAt)
])

export const workspaces = sqliteTable('workspaces', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [index('workspaces_customer_idx').on(t.customerId)])

export const workspaceMembers = sqliteTable('workspace_members', {
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  role: text('role', { enum: ['owner', 'admin', 'member'] }).notNull(),
  createdAt: text('created_at').notNull()
}, (t) => [
  primaryKey({ columns: [t.workspaceId, t.userId] }),
  index('workspace_members_user_idx').on(t.userId)
])

/**
 * The login throttle's failure counters (src/auth/login-throttle.ts), kept across restarts. `key` is a SHA-256
 * digest of the account (and client address): no email or address in clear. Times are epoch ms.
 */
export const loginFailures = sqliteTable('login_failures', {
  key: text('key').primaryKey(),
  failures: integer('failures').notNull(),
  lockedUntil: integer('locked_until').notNull(),
  lastFailure: integer('last_failure').notNull()
}, (t) => [index('login_failures_last_idx').on(t.lastFailure)])

/**
 * Sign-in sessions: every token that login and sign-up hand out names one (`sid`), the console's cookie included.
 * Ending one (logout) refuses its token at once, wherever it was copied. `expires_at` is epoch ms.
 */
export const sessions = sqliteTable('sessions', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  createdAt: text('created_at').notNull(),
  expiresAt: integer('expires_at').notNull(),
  endedAt: text('ended_at')
}, (t) => [index('sessions_user_idx').on(t.userId), index('sessions_expires_idx').on(t.expiresAt)])

/**
 * Invitations of a person into an organization (and some of its workspaces). Only the SHA-256 of the link's token
 * is kept; the token is shown once, to the admin who invited, and e-mailed when SMTP is configured.
 */
export const invitations = sqliteTable('invitations', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  role: text('role', { enum: ['admin', 'member'] }).notNull(),
  /** JSON: [{id, role}] of workspaces of the organization */
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

/** Single-use password-reset links made by an organization's owner or admin; the token's SHA-256 only. */
export const passwordResets = sqliteTable('password_resets', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  tokenHash: text('token_hash').notNull(),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at').notNull(),
  usedAt: text('used_at')
}, (t) => [uniqueIndex('password_resets_token_idx').on(t.tokenHash), index('password_resets_user_idx').on(t.userId)])
