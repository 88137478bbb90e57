import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, SuccessMessage } from '../../schema/api/common.js'
import {
  AgentListResponse, AgentMessageBody, AgentMessageResponse, AgentParams, AgentResponse, CreateAgentBody
} from '../../schema/api/agents.js'
import { requirePrincipal } from '../../src/auth/plugin.js'
import { badRequest, forbidden, notFound } from '../../src/http/errors.js'
import { modelFailure, TOOL_NAMES } from '../../src/assistant/assistant.js'
import { toAgent, toolsOf } from '../../src/agents/store.js'

/** Agents of the organization (docs/api/assistant.md#agents): a system prompt and tools, sent messages. */
const agentsPlugin: FastifyPluginAsyncTypebox = async (app) => {
  const assistant = app.assistant
  const store = app.agentStore
  const tags = ['agents']

  app.post('', {
    schema: { tags, summary: 'Create an agent', body: CreateAgentBody,
      response: { 201: AgentResponse, ...errors(403) } }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const tools = request.body.capabilities?.tools ?? []
    const unknown = tools.filter((x) => !(TOOL_NAMES as readonly string[]).includes(x))
    if (unknown.length) {
      throw badRequest(`Unknown tool(s): ${unknown.join(', ')}; available: ${TOOL_NAMES.join(', ')}`, 'UNKNOWN_TOOL')
    }
    const row = store.create(p, { name: request.body.name.trim(), systemPrompt: request.body.systemPrompt, tools })
    reply.code(201)
    return { success: true as const, agent: toAgent(row) }
  })

  app.get('', {
    schema: { tags, summary: 'Agents of the organization', response: { 200: AgentListResponse, ...errors(403) } }
  },
  async (request) => ({ success: true as const,
    agents: store.list(requirePrincipal(request).customerId).map(toAgent) }))

  app.get('/:id', {
    schema: { tags, summary: 'One agent', params: AgentParams, response: { 200: AgentResponse, ...errors(403, 404) } }
  }, async (request) => {
    const row = store.find(requirePrincipal(request).customerId, request.params.id)
    if (!row) throw notFound('Agent not found')
    return { success: true as const, agent: toAgent(row) }
  })

  app.delete('/:id', {
    schema: { tags, summary: 'Delete an agent (its creator or an organization owner/admin)', params: AgentParams,
      response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    const p = requirePrincipal(request)
    const row = store.find(p.customerId, request.params.id)
    if (!row) throw notFound('Agent not found')
    // another member's agent is its creator's or an organization owner's/admin's to change
    if (row.createdBy !== p.userId && p.orgRole === 'member') {
      throw forbidden('Only the agent\'s creator or an organization owner/admin may change or delete it',
        'AGENT_FORBIDDEN')
    }
    if (!store.remove(p.customerId, row.id)) throw notFound('Agent not found')
    return { success: true as const, message: 'Agent deleted' }
  })

  app.post('/:id/message', {
    schema: {
      tags, summary: 'Send the agent a message; it may use its tools before answering', params: AgentParams,
      body: AgentMessageBody, response: { 200: AgentMessageResponse, ...errors(403, 404, 502) }
    }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const agent = store.find(p.customerId, request.params.id)
    if (!agent) throw notFound('Agent not found')
    const controller = new AbortController()
    reply.raw.on('close', () => { if (!reply.raw.writableFinished) controller.abort() })
    try {
      const out = await assistant.converse({
        principal: p, reader: assistant.readerOf(request), message: request.body.message,
        conversationId: request.body.conversationId,
        agentId: agent.id, systemPrompt: agent.systemPrompt, tools: toolsOf(agent), signal: controller.signal
      })
      return { response: out.reply, conversationId: out.conversationId, model: out.model, toolCalls: out.toolCalls }
    } catch (err) {
      throw modelFailure(err)
    }
  })
}

export default agentsPlugin
