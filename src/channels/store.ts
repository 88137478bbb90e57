import { createHash, randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import { and, desc, eq, getTableColumns, lt, sql } from 'drizzle-orm'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/now.js'
import { boundLimit } from '../db/prepared.js'
import { channels, channelMembers, channelMessages } from '../../schema/tables/assistant.js'
import { workspaceMembers } from '../../schema/tables/accounts.js'
import type { EventBus } from '../events/bus.js'
import type { StreamChange } from '../events/workspace-stream.js'

export type ChannelType = Channel['type']
/** channels every workspace member reads; their messages are the ones that emit message.created */
const OPEN_TYPES = ['public', 'announcement', 'text'] as const
const OPEN_TYPE_SET = new Set<string>(OPEN_TYPES)

/**
 * The one rule of who reads a channel, as SQL over the channel alias `c` and the parameter `@userId`:
 * a member of its workspace (unless the caller's workspace context already established that) reads the
 * open channels, and private and direct channels only when a channel member.
 */
export function readableChannelSql(c: string, opts: { workspaceMember: boolean } = { workspaceMember: true }): string {
  const member = opts.workspaceMember
    ? `EXISTS (SELECT 1 FROM workspace_members wm WHERE wm.workspace_id = ${c}.workspace_id AND wm.user_id = @userId)
      AND `
    : ''
  return `${member}(${c}.type IN (${OPEN_TYPES.map((t) => `'${t}'`).join(', ')})
    OR EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = ${c}.id AND cm.user_id = @userId))`
}

export type Channel = typeof channels.$inferSelect
type MessageRow = typeof channelMessages.$inferSelect

/** The organization's assistant as a stable id, for messages it posts (`ai_twin_id`). */
export function assistantTwinId(customerId: string): string {
  const h = createHash('sha256').update(`cairn-assistant:${customerId}`).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

export const toMessage = (m: MessageRow) => ({
  id: m.id, workspace_id: m.workspaceId, channel_id: m.channelId, parent_message_id: m.parentMessageId,
  sender_id: m.senderId,
  ai_twin_id: m.aiTwinId, content: m.content, content_type: m.contentType, attachment_count: m.attachmentCount,
  created_at: m.createdAt
})

export const toChannel = (c: Channel) => ({
  id: c.id, workspace_id: c.workspaceId, name: c.name, type: c.type, created_by: c.createdBy, created_at: c.createdAt
})

/** `c.customer_id AS "customerId", ...`: the readable-channel statements return rows typed by the table */
const CHANNEL_COLUMNS =
  Object.entries(getTableColumns(channels)).map(([key, col]) => `c.${col.name} AS "${key}"`).join(', ')

/**
 * Channels of workspaces and their messages. A channel is visible to a user who belongs to its workspace,
 * and for private and direct channels only to its members.
 */
export function createChannelStore(db: Db, sqlite: Database.Database, events: EventBus,
  publish: (change: StreamChange) => void = () => {}) {
  // the readable-channel rule is SQL text shared with the FTS5 message search (src/search), which Drizzle cannot
  // build: these two stay plain prepared statements, typed by the table
  type Who = { userId: string; customerId: string }
  const visible = sqlite.prepare<Who & { id: string }, Channel>(`SELECT ${CHANNEL_COLUMNS} FROM channels c
    WHERE c.id = @id AND c.customer_id = @customerId AND ${readableChannelSql('c')}`)
  // the caller's workspace context has checked membership of the workspace
  const listVisible = sqlite.prepare<Who & { workspaceId: string }, Channel>(`SELECT ${CHANNEL_COLUMNS} FROM channels c
    WHERE c.workspace_id = @workspaceId AND c.customer_id = @customerId
      AND ${readableChannelSql('c', { workspaceMember: false })}
    ORDER BY c.created_at, c.id`)
  const isWorkspaceMember = db.select({ one: sql`1` }).from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, sql.placeholder('workspaceId')),
      eq(workspaceMembers.userId, sql.placeholder('userId'))))
    .prepare()
  const membersOf = db.select({ userId: channelMembers.userId }).from(channelMembers)
    .where(eq(channelMembers.channelId, sql.placeholder('channelId'))).orderBy(channelMembers.userId).prepare()
  const insertMessage = db.insert(channelMessages).values({
    id: sql.placeholder('id'), channelId: sql.placeholder('channelId'), workspaceId: sql.placeholder('workspaceId'),
    senderId: sql.placeholder('senderId'), aiTwinId: sql.placeholder('aiTwinId'),
    parentMessageId: sql.placeholder('parentMessageId'),
    content: sql.placeholder('content'), contentType: sql.placeholder('contentType'), attachmentCount: 0,
    createdAt: sql.placeholder('createdAt')
  }).returning().prepare()
  const messageInChannel = db.select({ one: sql`1` }).from(channelMessages)
    .where(and(eq(channelMessages.id, sql.placeholder('id')),
      eq(channelMessages.channelId, sql.placeholder('channelId')))).prepare()
  const pageOf = (before: boolean) => db.select().from(channelMessages)
    .where(and(eq(channelMessages.channelId, sql.placeholder('channelId')),
      before ? lt(channelMessages.createdAt, sql.placeholder('before')) : undefined))
    .orderBy(desc(channelMessages.createdAt), desc(channelMessages.rowid)).limit(boundLimit('limit')).prepare()
  const firstPage = pageOf(false)
  const pageBefore = pageOf(true)

  return {
    find: (who: Who, id: string): Channel | undefined =>
      visible.get({ id, userId: who.userId, customerId: who.customerId }),
    list: (who: Who, workspaceId: string) =>
      listVisible.all({ workspaceId, userId: who.userId, customerId: who.customerId }).map(toChannel),
    members: (channelId: string) => membersOf.all({ channelId }).map((r) => r.userId),

    /** 'not-member' when a named member does not belong to the workspace */
    create(who: { userId: string; customerId: string; workspaceId: string }, name: string, type: ChannelType,
      memberIds: string[]) {
      return db.transaction((tx) => {
        for (const m of memberIds) if (!isWorkspaceMember.get({ workspaceId: who.workspaceId,
          userId: m })) return 'not-member' as const
        const row: Channel = { id: randomUUID(), customerId: who.customerId, workspaceId: who.workspaceId, name, type,
          createdBy: who.userId, createdAt: nowIso() }
        tx.insert(channels).values(row).run()
        tx.insert(channelMembers).values([...new Set([who.userId, ...memberIds])].map((userId) => ({ channelId: row.id,
          userId })))
          .onConflictDoNothing().run()
        return toChannel(row)
      }, { behavior: 'immediate' })
    },

    messages(channelId: string, limit: number, before?: string) {
      return (before ? pageBefore.all({ channelId, before, limit })
        : firstPage.all({ channelId, limit })).map(toMessage)
    },

    parentExists: (channelId: string, parentId: string) => !!messageInChannel.get({ id: parentId, channelId }),

    /**
     * Stores a message and, for channels every member reads, emits message.created: the event's outbox row
     * commits with the message or not at all (delivery happens in the background).
     */
    post: (channel: Channel, m: {
      senderId: string; content: string; contentType?: string; parentMessageId?: string; aiTwinId?: string
    }) => db.transaction(() => {
      const row = insertMessage.get({
        id: randomUUID(), channelId: channel.id, workspaceId: channel.workspaceId, senderId: m.senderId,
        aiTwinId: m.aiTwinId ?? null, parentMessageId: m.parentMessageId ?? null, content: m.content,
        contentType: m.contentType ?? 'text', createdAt: nowIso()
      })!
      const message = toMessage(row)
      const open = OPEN_TYPE_SET.has(channel.type)
      if (open) events.emit(channel.workspaceId, 'message.created', { ...message, channel_name: channel.name })
      // the workspace event stream: every member for an open channel, else its readers only
      publish({ customerId: channel.customerId, workspaceId: channel.workspaceId, channelId: open ? null : channel.id,
        name: 'message.created', data: { ...message, channel_name: channel.name } })
      return message
    })
  }
}

export type ChannelStore = ReturnType<typeof createChannelStore>
