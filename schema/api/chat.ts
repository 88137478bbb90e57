import { Type, type Static } from '@sinclair/typebox'
import { Uuid } from './common.js'

const Message = Type.String({ minLength: 1, maxLength: 20_000 })

export const ChatBody = Type.Object({
  message: Message, channelId: Type.Optional(Uuid), platform: Type.Optional(Type.String({ maxLength: 50 })),
  conversationId: Type.Optional(Uuid)
})
export const ChatResponse = Type.Object({ reply: Type.String(), conversationId: Uuid, model: Type.String() })
export const ChatStreamBody = Type.Object({ message: Message, conversationId: Type.Optional(Uuid) })

export type ChatBody = Static<typeof ChatBody>
export type ChatStreamBody = Static<typeof ChatStreamBody>
