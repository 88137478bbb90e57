import { randomUUID } from 'node:crypto'
import { and, desc, eq, isNull } from 'drizzle-orm'
import type { Db } from '../../src/db/index.js'
import { nowIso } from '../../src/db/index.js'
import { apiKeys } from '../../schema/tables/api-keys.js'
import { generateApiKey, sha256Hex } from '../../src/auth/keys.js'
import { issuableOnly } from '../../src/auth/capabilities.js'

type Row = typeof apiKeys.$inferSelect

function toPublic(row: Row) {
  return {
    id: row.id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as string[],
    workspace_id: row.workspaceId,
    key_prefix: row.keyPrefix,
    created_at: row.createdAt,
    expires_at: row.expiresAt,
    revoked_at: row.revokedAt,
    last_used_at: row.lastUsedAt
  }
}

export interface NewKeyInput {
  userId: string
  customerId: string
  name: string
  scopes: string[]
  workspaceId: string | null
  expiresAt: string | null
  rotatedFrom?: string
}

export function createApiKeyStore(db: Db) {
  function insert(input: NewKeyInput) {
    const { key, hash, prefix } = generateApiKey()
    const row: Row = {
      id: randomUUID(),
      userId: input.userId,
      customerId: input.customerId,
      workspaceId: input.workspaceId,
      name: input.name,
      keyHash: hash,
      keyPrefix: prefix,
      scopes: JSON.stringify(input.scopes),
      rotatedFrom: input.rotatedFrom ?? null,
      createdAt: nowIso(),
      expiresAt: input.expiresAt,
      revokedAt: null,
      lastUsedAt: null
    }
    db.insert(apiKeys).values(row).run()
    const { revoked_at: _r, last_used_at: _l, ...shown } = toPublic(row)
    return { ...shown, key }
  }

  const owned = (userId: string, id: string) => and(eq(apiKeys.id, id), eq(apiKeys.userId, userId))

  return {
    create: insert,

    list(userId: string) {
      return db.select().from(apiKeys).where(eq(apiKeys.userId, userId))
        .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id)).all().map(toPublic)
    },

    get(userId: string, id: string) {
      const row = db.select().from(apiKeys).where(owned(userId, id)).get()
      return row && toPublic(row)
    },

    /** Whether `value` is still the working value of the caller's key `id` (not revoked, rotated or expired). */
    isLive(userId: string, id: string, value: string) {
      const row = db.select().from(apiKeys).where(owned(userId, id)).get()
      return !!row && !row.revokedAt && row.keyHash === sha256Hex(value) && (!row.expiresAt || row.expiresAt > nowIso())
    },

    /** Revokes the key; undefined when it is not the caller's. */
    revoke(userId: string, id: string) {
      const row = db.select().from(apiKeys).where(owned(userId, id)).get()
      if (!row) return undefined
      if (!row.revokedAt) db.update(apiKeys).set({ revokedAt: nowIso() }).where(eq(apiKeys.id, id)).run()
      return true
    },

    /**
     * A new key with the old one's name, binding, expiry and still-issuable scopes; the old one is revoked
     * in the same transaction. 'revoked' for a key that no longer works; undefined when not the caller's.
     */
    rotate(userId: string, id: string) {
      return db.transaction((tx) => {
        const row = tx.select().from(apiKeys).where(owned(userId, id)).get()
        if (!row) return undefined
        if (row.revokedAt) return 'revoked' as const
        const scopes = issuableOnly(JSON.parse(row.scopes) as string[])
        if (scopes.length === 0) return 'no-scopes' as const
        tx.update(apiKeys).set({ revokedAt: nowIso() }).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt))).run()
        return insert({
          userId: row.userId,
          customerId: row.customerId,
          name: row.name,
          scopes,
          workspaceId: row.workspaceId,
          expiresAt: row.expiresAt,
          rotatedFrom: row.id
        })
      }, { behavior: 'immediate' })
    }
  }
}
