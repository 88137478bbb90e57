import { randomUUID } from 'node:crypto'
import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Db } from '../../src/db/index.js'
import { nowIso } from '../../src/db/index.js'
import { organizations, users, workspaces, workspaceMembers } from '../../schema/tables/accounts.js'
import type { OrgRole } from '../../src/auth/plugin.js'

export interface NewAccount {
  email: string
  passwordHash: string
  name: string
  organizationName: string
}

export function createAccountStore(db: Db) {
  // a removed person cannot sign in (their row stays for what they wrote)
  const userByEmail = db.select().from(users)
    .where(and(eq(users.email, sql.placeholder('email')), isNull(users.removedAt))).prepare()
  // hot path (every /auth/me): prepared once
  const workspacesOf = db.select({ id: workspaces.id, name: workspaces.name, role: workspaceMembers.role })
    .from(workspaceMembers).innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
    .where(eq(workspaceMembers.userId, sql.placeholder('userId'))).orderBy(workspaces.createdAt, workspaces.id)
    .prepare()

  return {
    userByEmail(email: string) {
      return userByEmail.get({ email })
    },

    /**
     * A new organization with its owner and a first workspace, in one transaction.
     * Returns undefined when `onlyIfNoUsers` is set and a user already exists.
     */
    createOrganization(input: NewAccount, onlyIfNoUsers: boolean) {
      return db.transaction((tx) => {
        if (onlyIfNoUsers && tx.select({ id: users.id }).from(users).limit(1).get()) return undefined
        const now = nowIso()
        const customerId = randomUUID()
        const userId = randomUUID()
        const workspaceId = randomUUID()
        tx.insert(organizations).values({ id: customerId, name: input.organizationName, createdAt: now }).run()
        tx.insert(users).values({
          id: userId, customerId, email: input.email, name: input.name,
          passwordHash: input.passwordHash, orgRole: 'owner', createdAt: now
        }).run()
        tx.insert(workspaces).values({ id: workspaceId, customerId, name: 'General', createdBy: userId,
          createdAt: now }).run()
        tx.insert(workspaceMembers).values({ workspaceId, userId, role: 'owner', createdAt: now }).run()
        return { customerId, userId, workspaceId }
      }, { behavior: 'immediate' })
    },

    createUser(customerId: string, input: { email: string; passwordHash: string; name: string; role: OrgRole }) {
      const id = randomUUID()
      db.insert(users).values({
        id, customerId, email: input.email, name: input.name,
        passwordHash: input.passwordHash, orgRole: input.role, createdAt: nowIso()
      }).run()
      return { id, email: input.email, name: input.name, role: input.role }
    },

    workspacesOf(userId: string) {
      return workspacesOf.all({ userId })
    },

    createWorkspace(customerId: string, userId: string, name: string) {
      const id = randomUUID()
      const now = nowIso()
      db.transaction((tx) => {
        tx.insert(workspaces).values({ id, customerId, name, createdBy: userId, createdAt: now }).run()
        tx.insert(workspaceMembers).values({ workspaceId: id, userId, role: 'owner', createdAt: now }).run()
      }, { behavior: 'immediate' })
      return { id, name, customer_id: customerId, role: 'owner' as const }
    },

    /** Adds or changes a member; 'not-found' for a user outside the organization, 'owner' for the owner. */
    setMember(customerId: string, workspaceId: string, userId: string, role: 'admin' | 'member') {
      return db.transaction((tx) => {
        const user = tx.select({ id: users.id }).from(users)
          .where(and(eq(users.id, userId), eq(users.customerId, customerId))).get()
        if (!user) return 'not-found' as const
        const current = tx.select({ role: workspaceMembers.role }).from(workspaceMembers)
          .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.userId, userId))).get()
        if (current?.role === 'owner') return 'owner' as const
        tx.insert(workspaceMembers).values({ workspaceId, userId, role, createdAt: nowIso() })
          .onConflictDoUpdate({ target: [workspaceMembers.workspaceId, workspaceMembers.userId], set: { role } }).run()
        return 'ok' as const
      }, { behavior: 'immediate' })
    },

    removeMember(workspaceId: string, userId: string) {
      return db.transaction((tx) => {
        const current = tx.select({ role: workspaceMembers.role }).from(workspaceMembers)
          .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.userId, userId))).get()
        if (!current) return 'not-found' as const
        if (current.role === 'owner') return 'owner' as const
        tx.delete(workspaceMembers)
          .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.userId, userId))).run()
        return 'ok' as const
      }, { behavior: 'immediate' })
    }
  }
}
