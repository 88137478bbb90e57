import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum, ClosedString, Uuid } from './common.js'
import { channels } from '../tables/assistant.js'

export const CHANNEL_TYPES = channels.type.enumValues

export const ChannelSchema = Type.Object({
  id: Uuid, workspace_id: Uuid, name: Type.String(), type: ClosedString(CHANNEL_TYPES), created_by: Type.String(),
  created_at: Type.String(), member_ids: Type.Optional(Type.Array(Type.String()))
})
export const MessageSchema = Type.Object({
  id: Uuid, workspace_id: Uuid, channel_id: Uuid, parent_message_id: Nullable(Type.String()), sender_id: Type.String(),
  ai_twin_id: Nullable(Type.String()), content: Type.String(), content_type: Type.String(),
  attachment_count: Type.Integer(), created_at: Type.String()
})
export const WorkspaceIdQuery = Type.Object({ workspaceId: Type.Optional(Type.String()) })

export const CreateChannelBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }), type: StringEnum(CHANNEL_TYPES),
  memberIds: Type.Optional(Type.Array(Uuid, { maxItems: 500 }))
})
export const ChannelResponse = Type.Object({ success: Type.Literal(true), data: ChannelSchema })
export const ListChannelsResponse = Type.Object({ success: Type.Literal(true), data: Type.Array(ChannelSchema) })

export const ListMessagesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  before: Type.Optional(Type.String({ format: 'date-time' }))
})
export const ListMessagesResponse = Type.Object({ success: Type.Literal(true), data: Type.Array(MessageSchema) })

export const PostMessageBody = Type.Object({
  channel_id: Uuid, content: Type.String({ minLength: 1, maxLength: 40_000 }),
  parent_message_id: Type.Optional(Uuid), content_type: Type.Optional(Type.String({ minLength: 1, maxLength: 50 }))
})
export const MessageResponse = Type.Object({ success: Type.Literal(true), data: MessageSchema })

export type CreateChannelBody = Static<typeof CreateChannelBody>
export type PostMessageBody = Static<typeof PostMessageBody>
