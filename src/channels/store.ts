import { createHash, randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import { nowIso } from '../db/index.js'
import type { EventBus } from '../events/bus.js'

export const CHANNEL_TYPES = ['public', 'announcement', 'text', 'private', 'direct'] as const
export type ChannelType = (typeof CHANNEL_TYPES)[number]
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
    ? `EXISTS (SELECT 1 FROM workspace_members wm WHERE wm.workspace_id = ${c}.workspace_id AND wm.user_id = @userId) AND `
    : ''
  return `${member}(${c}.type IN (${OPEN_TYPES.map((t) => `'${t}'`).join(', ')})
    OR EXISTS (SELECT 1 FROM channel_members cm WHERE cm.channel_id = ${c}.id AND cm.user_id = @userId))`
}

export interface ChannelRow { id: string; customer_id: string; workspace_id: string; name: string; type: ChannelType; created_by: string; created_at: string }
interface MessageRow {
  id: string; channel_id: string; workspace_id: string; sender_id: string; ai_twin_id: string | null; parent_message_id: string | null
  content: string; content_type: string; attachment_count: number; created_at: string
}

/** The organization's assistant as a stable id, for messages it posts (`ai_twin_id`). */
export function assistantTwinId(customerId: string): string {
  const h = createHash('sha256').update(`cairn-assistant:${customerId}`).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

export const toMessage = (m: MessageRow) => ({
  id: m.id, workspace_id: m.workspace_id, channel_id: m.channel_id, parent_message_id: m.parent_message_id, sender_id: m.sender_id,
  ai_twin_id: m.ai_twin_id, content: m.content, content_type: m.content_type, attachment_count: m.attachment_count, created_at: m.created_at
})

/**
 * Channels of workspaces and their messages. A channel is visible to a user who belongs to its workspace,
 * and for private and direct channels only to its members.
 */
export function createChannelStore(sqlite: Database.Database, events: EventBus) {
  const visible = sqlite.prepare(`SELECT c.* FROM channels c
    WHERE c.id = @id AND c.customer_id = @customerId AND ${readableChannelSql('c')}`)
  // the caller's workspace context has checked membership of the workspace
  const listVisible = sqlite.prepare(`SELECT c.* FROM channels c WHERE c.workspace_id = @workspaceId AND c.customer_id = @customerId
      AND ${readableChannelSql('c', { workspaceMember: false })}
    ORDER BY c.created_at, c.id`)
  const insertChannel = sqlite.prepare(`INSERT INTO channels (id, customer_id, workspace_id, name, type, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`)
  const insertMember = sqlite.prepare(`INSERT OR IGNORE INTO channel_members (channel_id, user_id) VALUES (?, ?)`)
  const isWorkspaceMember = sqlite.prepare(`SELECT 1 FROM workspace_members WHERE workspace_id = ? AND user_id = ?`)
  const membersOf = sqlite.prepare(`SELECT user_id FROM channel_members WHERE channel_id = ? ORDER BY user_id`)
  const insertMessage = sqlite.prepare(`INSERT INTO channel_messages (id, channel_id, workspace_id, sender_id, ai_twin_id, parent_message_id,
    content, content_type, attachment_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?) RETURNING *`)
  const messageInChannel = sqlite.prepare(`SELECT 1 FROM channel_messages WHERE id = ? AND channel_id = ?`)

  return {
    find: (who: { userId: string; customerId: string }, id: string) => visible.get({ id, ...who }) as ChannelRow | undefined,
    list: (who: { userId: string; customerId: string }, workspaceId: string) => listVisible.all({ workspaceId, ...who }) as ChannelRow[],
    members: (channelId: string) => (membersOf.all(channelId) as Array<{ user_id: string }>).map((r) => r.user_id),

    /** 'not-member' when a named member does not belong to the workspace */
    create(who: { userId: string; customerId: string; workspaceId: string }, name: string, type: ChannelType, memberIds: string[]) {
      return sqlite.transaction(() => {
        for (const m of memberIds) if (!isWorkspaceMember.get(who.workspaceId, m)) return 'not-member' as const
        const id = randomUUID()
        const now = nowIso()
        insertChannel.run(id, who.customerId, who.workspaceId, name, type, who.userId, now)
        for (const m of new Set([who.userId, ...memberIds])) insertMember.run(id, m)
        return { id, customer_id: who.customerId, workspace_id: who.workspaceId, name, type, created_by: who.userId, created_at: now } as ChannelRow
      }).immediate()
    },

    messages(channelId: string, limit: number, before?: string) {
      return (sqlite.prepare(`SELECT * FROM channel_messages WHERE channel_id = ? ${before ? 'AND created_at < ?' : ''}
        ORDER BY created_at DESC, rowid DESC LIMIT ?`).all(...(before ? [channelId, before, limit] : [channelId, limit])) as MessageRow[]).map(toMessage)
    },

    parentExists: (channelId: string, parentId: string) => !!messageInChannel.get(parentId, channelId),

    /** Stores a message and, for channels every member reads, emits message.created (off the request's path). */
    post(channel: ChannelRow, m: { senderId: string; content: string; contentType?: string; parentMessageId?: string; aiTwinId?: string }) {
      const row = insertMessage.get(randomUUID(), channel.id, channel.workspace_id, m.senderId, m.aiTwinId ?? null,
        m.parentMessageId ?? null, m.content, m.contentType ?? 'text', nowIso()) as MessageRow
      const message = toMessage(row)
      if (OPEN_TYPE_SET.has(channel.type)) events.emit(channel.workspace_id, 'message.created', { ...message, channel_name: channel.name })
      return message
    }
  }
}

export type ChannelStore = ReturnType<typeof createChannelStore>
