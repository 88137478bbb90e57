import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { and, asc, eq, gt, inArray, isNull, ne, sql } from 'drizzle-orm'
import type { Db } from '../../src/db/index.js'
import { nowIso } from '../../src/db/index.js'
import {
  invitations, passwordResets, sessions, users, workspaceMembers, workspaces
} from '../../schema/tables/accounts.js'
import { apiKeys } from '../../schema/tables/api-keys.js'
import type { OrgRole } from '../../src/auth/plugin.js'

const INVITATION_TTL_MS = 7 * 86_400_000
const RESET_TTL_MS = 86_400_000

export type AssignableRole = 'admin' | 'member'
export interface InvitedWorkspace { id: string; role: AssignableRole }

/** A link token: 32 random bytes; only its SHA-256 is stored. */
function newToken() {
  const token = randomBytes(32).toString('base64url')
  return { token, hash: tokenHash(token) }
}
const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex')

type UserRow = typeof users.$inferSelect

/**
 * The people of an organization: listing, roles, removal, invitations and password-reset links. Every query is
 * bounded by the caller's organization: another organization's ids are simply not found.
 */
export function createTeammateStore(db: Db) {
  const live = (customerId: string) => and(eq(users.customerId, customerId), isNull(users.removedAt))

  function userOf(customerId: string, id: string): UserRow | undefined {
    return db.select().from(users).where(and(eq(users.id, id), live(customerId))).get()
  }

  function ownerCount(customerId: string) {
    return db.select({ n: sql<number>`count(*)` }).from(users)
      .where(and(live(customerId), eq(users.orgRole, 'owner'))).get()!.n
  }

  /** Ends every live session of the user but `keep`; the auth plugin refuses their tokens from the next request. */
  function endSessions(userId: string, keep?: string) {
    const open = and(eq(sessions.userId, userId), isNull(sessions.endedAt))
    db.update(sessions).set({ endedAt: nowIso() }).where(keep ? and(open, ne(sessions.id, keep)) : open).run()
  }

  const pendingInvitation = (customerId: string) => and(eq(invitations.customerId, customerId),
    isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, nowIso()))

  function invitationView(row: typeof invitations.$inferSelect) {
    return { id: row.id, email: row.email, role: row.role, workspaces: JSON.parse(row.workspaces) as InvitedWorkspace[],
      expires_at: row.expiresAt, created_at: row.createdAt }
  }

  return {
    userOf,
    endSessions,

    listUsers(customerId: string) {
      return db.select({ id: users.id, email: users.email, name: users.name, role: users.orgRole,
        created_at: users.createdAt }).from(users).where(live(customerId)).orderBy(asc(users.createdAt), asc(users.id))
        .all()
    },

    /** 'not-found', 'last-owner' (the only owner would lose the role), or the user as it now is */
    updateUser(customerId: string, id: string, change: { role?: OrgRole; name?: string }) {
      return db.transaction((tx) => {
        const user = tx.select().from(users).where(and(eq(users.id, id), live(customerId))).get()
        if (!user) return 'not-found' as const
        if (change.role && change.role !== 'owner' && user.orgRole === 'owner' && ownerCount(customerId) <= 1) {
          return 'last-owner' as const
        }
        const set: Partial<UserRow> = {}
        if (change.role) set.orgRole = change.role
        if (change.name) set.name = change.name
        if (Object.keys(set).length > 0) tx.update(users).set(set).where(eq(users.id, id)).run()
        return { id, email: user.email, name: change.name ?? user.name, role: change.role ?? user.orgRole,
          created_at: user.createdAt }
      }, { behavior: 'immediate' })
    },

    /**
     * Removes a person from the organization: their sessions end, their API keys are revoked and their workspace
     * memberships go, all at once; the user row stays (marked removed) so their documents and artifacts stay.
     */
    removeUser(customerId: string, id: string) {
      return db.transaction((tx) => {
        const user = tx.select().from(users).where(and(eq(users.id, id), live(customerId))).get()
        if (!user) return 'not-found' as const
        if (user.orgRole === 'owner' && ownerCount(customerId) <= 1) return 'last-owner' as const
        const now = nowIso()
        tx.update(users).set({ removedAt: now }).where(eq(users.id, id)).run()
        tx.update(apiKeys).set({ revokedAt: now }).where(and(eq(apiKeys.userId, id), isNull(apiKeys.revokedAt))).run()
        tx.delete(workspaceMembers).where(eq(workspaceMembers.userId, id)).run()
        tx.update(sessions).set({ endedAt: now }).where(and(eq(sessions.userId, id), isNull(sessions.endedAt))).run()
        return 'ok' as const
      }, { behavior: 'immediate' })
    },

    /** The ids of `ids` that are not workspaces of the organization. */
    foreignWorkspaces(customerId: string, ids: string[]) {
      if (ids.length === 0) return []
      const found = new Set(db.select({ id: workspaces.id }).from(workspaces)
        .where(and(eq(workspaces.customerId, customerId), inArray(workspaces.id, ids))).all().map((r) => r.id))
      return ids.filter((id) => !found.has(id))
    },

    emailTaken(email: string) {
      return db.select({ id: users.id }).from(users).where(eq(users.email, email)).get() !== undefined
    },

    /** A new invitation; an earlier pending one for the same email in the organization is revoked. */
    invite(customerId: string, invitedBy: string, input: { email: string; role: AssignableRole;
      workspaces: InvitedWorkspace[] }) {
      const { token, hash } = newToken()
      const now = new Date()
      const row = {
        id: randomUUID(), customerId, email: input.email, role: input.role,
        workspaces: JSON.stringify(input.workspaces),
        tokenHash: hash, invitedBy, createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + INVITATION_TTL_MS).toISOString(), acceptedAt: null, revokedAt: null
      }
      db.transaction((tx) => {
        tx.update(invitations).set({ revokedAt: row.createdAt })
          .where(and(pendingInvitation(customerId), eq(invitations.email, input.email))).run()
        tx.insert(invitations).values(row).run()
      }, { behavior: 'immediate' })
      return { token, invitation: invitationView(row) }
    },

    pendingInvitations(customerId: string) {
      return db.select().from(invitations).where(pendingInvitation(customerId))
        .orderBy(asc(invitations.createdAt), asc(invitations.id)).all().map(invitationView)
    },

    revokeInvitation(customerId: string, id: string) {
      return db.update(invitations).set({ revokedAt: nowIso() })
        .where(and(pendingInvitation(customerId), eq(invitations.id, id))).run().changes > 0
    },

    /**
     * Turns a pending invitation into a user with the invited roles, in one transaction: 'not-found' for a token
     * that is unknown, used, revoked or expired (one answer for all), 'email-taken' when the address became a user
     * meanwhile.
     */
    acceptInvitation(token: string, account: { passwordHash: string; name?: string }) {
      return db.transaction((tx) => {
        const row = tx.select().from(invitations).where(and(eq(invitations.tokenHash, tokenHash(token)),
          isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, nowIso()))).get()
        if (!row) return 'not-found' as const
        if (tx.select({ id: users.id }).from(users).where(eq(users.email, row.email)).get()) {
          return 'email-taken' as const
        }
        const now = nowIso()
        const id = randomUUID()
        const name = account.name?.trim() || row.email.split('@')[0]
        tx.insert(users).values({ id, customerId: row.customerId, email: row.email, name,
          passwordHash: account.passwordHash, orgRole: row.role, createdAt: now }).run()
        const invited = JSON.parse(row.workspaces) as InvitedWorkspace[]
        // a workspace deleted since the invitation is skipped
        const existing = new Set(invited.length === 0 ? [] : tx.select({ id: workspaces.id }).from(workspaces)
          .where(and(eq(workspaces.customerId, row.customerId), inArray(workspaces.id, invited.map((w) => w.id))))
          .all().map((w) => w.id))
        for (const w of invited) {
          if (existing.has(w.id)) {
            tx.insert(workspaceMembers).values({ workspaceId: w.id, userId: id, role: w.role, createdAt: now }).run()
          }
        }
        tx.update(invitations).set({ acceptedAt: now }).where(eq(invitations.id, row.id)).run()
        return { user: { id, email: row.email, name }, customerId: row.customerId }
      }, { behavior: 'immediate' })
    },

    setPassword(userId: string, passwordHash: string) {
      db.update(users).set({ passwordHash }).where(eq(users.id, userId)).run()
    },

    /** A single-use reset link's token for a user (earlier unused links of the user stop working). */
    createReset(userId: string, createdBy: string) {
      const { token, hash } = newToken()
      const now = new Date()
      const expiresAt = new Date(now.getTime() + RESET_TTL_MS).toISOString()
      db.transaction((tx) => {
        tx.update(passwordResets).set({ usedAt: now.toISOString() })
          .where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt))).run()
        tx.insert(passwordResets).values({ id: randomUUID(), userId, tokenHash: hash, createdBy,
          createdAt: now.toISOString(), expiresAt }).run()
      }, { behavior: 'immediate' })
      return { token, expiresAt }
    },

    /** Sets the password of a reset link's user and ends all their sessions; 'not-found' as for invitations. */
    resetPassword(token: string, passwordHash: string) {
      return db.transaction((tx) => {
        const row = tx.select({ id: passwordResets.id, userId: passwordResets.userId }).from(passwordResets)
          .innerJoin(users, eq(users.id, passwordResets.userId))
          .where(and(eq(passwordResets.tokenHash, tokenHash(token)), isNull(passwordResets.usedAt),
            gt(passwordResets.expiresAt, nowIso()), isNull(users.removedAt))).get()
        if (!row) return 'not-found' as const
        const now = nowIso()
        tx.update(passwordResets).set({ usedAt: now }).where(eq(passwordResets.id, row.id)).run()
        tx.update(users).set({ passwordHash }).where(eq(users.id, row.userId)).run()
        tx.update(sessions).set({ endedAt: now })
          .where(and(eq(sessions.userId, row.userId), isNull(sessions.endedAt))).run()
        return 'ok' as const
      }, { behavior: 'immediate' })
    },

    workspaceMembers(workspaceId: string) {
      return db.select({ user_id: users.id, email: users.email, name: users.name, role: workspaceMembers.role })
        .from(workspaceMembers).innerJoin(users, eq(users.id, workspaceMembers.userId))
        .where(and(eq(workspaceMembers.workspaceId, workspaceId), isNull(users.removedAt)))
        .orderBy(asc(workspaceMembers.createdAt), asc(users.id)).all()
    },

    /**
     * Changes a member's workspace role; 'not-found', 'forbidden' (owners are an owner's to change), or
     * 'last-owner' when the only owner would lose the role.
     */
    setWorkspaceRole(workspaceId: string, userId: string, role: OrgRole, callerIsOwner: boolean) {
      return db.transaction((tx) => {
        const member = tx.select({ role: workspaceMembers.role }).from(workspaceMembers)
          .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.userId, userId))).get()
        if (!member) return 'not-found' as const
        if ((member.role === 'owner' || role === 'owner') && !callerIsOwner) return 'forbidden' as const
        if (member.role === 'owner' && role !== 'owner') {
          const owners = tx.select({ n: sql<number>`count(*)` }).from(workspaceMembers)
            .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.role, 'owner'))).get()!.n
          if (owners <= 1) return 'last-owner' as const
        }
        tx.update(workspaceMembers).set({ role })
          .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.userId, userId))).run()
        return 'ok' as const
      }, { behavior: 'immediate' })
    }
  }
}

export type TeammateStore = ReturnType<typeof createTeammateStore>
