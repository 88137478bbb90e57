import { Type, type Static } from '@sinclair/typebox'
import { Uuid } from './common.js'

export const AgentSchema = Type.Object({
  id: Uuid, name: Type.String(), systemPrompt: Type.String(),
  capabilities: Type.Object({ tools: Type.Array(Type.String()) }), createdAt: Type.String(), updatedAt: Type.String()
})
export type Agent = Static<typeof AgentSchema>

export const CreateAgentBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  systemPrompt: Type.String({ maxLength: 20_000 }),
  capabilities: Type.Optional(Type.Object({ tools: Type.Array(Type.String({ maxLength: 50 }),
    { maxItems: 10, uniqueItems: true }) }))
})
export type CreateAgentBody = Static<typeof CreateAgentBody>

export const AgentParams = Type.Object({ id: Uuid })
export const AgentMessageBody = Type.Object({ message: Type.String({ minLength: 1, maxLength: 20_000 }),
  conversationId: Type.Optional(Uuid) })
export const AgentMessageResponse = Type.Object({
  response: Type.String(), conversationId: Uuid, model: Type.String(),
  toolCalls: Type.Array(Type.Object({ tool: Type.String(), input: Type.Unknown() }))
})
export const AgentResponse = Type.Object({ success: Type.Literal(true), agent: AgentSchema })
export const AgentListResponse = Type.Object({ success: Type.Literal(true), agents: Type.Array(AgentSchema) })
