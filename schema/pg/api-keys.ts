import { pgTable, text, index, uniqueIndex } from 'drizzle-orm/pg-core'
import { users, organizations, workspaces } from './accounts.js'

export const apiKeys = pgTable('api_keys', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').references(() => workspaces.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  keyHash: text('key_hash').notNull(),
  keyPrefix: text('key_prefix').notNull(),
  scopes: text('scopes').notNull(),
  rotatedFrom: text('rotated_from'),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at'),
  revokedAt: text('revoked_at'),
  lastUsedAt: text('last_used_at')
}, (t) => [
  uniqueIndex('api_keys_hash_idx').on(t.keyHash),
  index('api_keys_user_idx').on(t.userId, t.createdAt)
])
