import { Type, type Static } from '@sinclair/typebox'
import { Uuid } from './common.js'

const Message = Type.String({ minLength: 1, maxLength: 20_000 })

export const ChatBody = Type.Object({
  message: Message, channelId: Type.Optional(Uuid), platform: Type.Optional(Type.String({ maxLength: 50 })),
  conversationId: Type.Optional(Uuid)
})
export const CitationSchema = Type.Object({
  documentId: Uuid, fileName: Type.String(), chunkId: Uuid, chunkIndex: Type.Integer(),
  excerpt: Type.String({ description: 'the passage\'s first 300 characters' })
}, { description: 'a passage of the knowledge base the answer was made from' })
export const ChatResponse = Type.Object({ reply: Type.String(), conversationId: Uuid, model: Type.String(),
  citations: Type.Array(CitationSchema) })
export const ChatStreamBody = Type.Object({ message: Message, conversationId: Type.Optional(Uuid) })

export type ChatBody = Static<typeof ChatBody>
export type ChatStreamBody = Static<typeof ChatStreamBody>
