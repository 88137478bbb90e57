import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { randomUUID } from 'node:crypto'
import { errors, SuccessMessage, Uuid } from '../../schema/api/common.js'
import { requirePrincipal } from '../../src/auth/plugin.js'
import { badRequest, notFound } from '../../src/http/errors.js'
import { nowIso } from '../../src/db/index.js'
import { modelFailure, TOOL_NAMES, type ToolName } from '../../src/ai/assistant.js'

const AgentSchema = Type.Object({
  id: Uuid, name: Type.String(), systemPrompt: Type.String(),
  capabilities: Type.Object({ tools: Type.Array(Type.String()) }), createdAt: Type.String(), updatedAt: Type.String()
})
interface AgentRow { id: string; name: string; system_prompt: string; tools: string; created_at: string; updated_at: string }
const toAgent = (r: AgentRow) => ({
  id: r.id, name: r.name, systemPrompt: r.system_prompt, capabilities: { tools: JSON.parse(r.tools) as string[] }, createdAt: r.created_at, updatedAt: r.updated_at
})

/** Agents of the organization (SPEC.md, CONTRACT.md §9): a system prompt and tools, sent messages. */
const agentsPlugin: FastifyPluginAsyncTypebox = async (app) => {
  const assistant = app.assistant
  const sqlite = app.sqlite
  const insert = sqlite.prepare(`INSERT INTO agents (id, customer_id, created_by, name, system_prompt, tools, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
  const list = sqlite.prepare(`SELECT * FROM agents WHERE customer_id = ? ORDER BY created_at DESC, id DESC`)
  const one = sqlite.prepare(`SELECT * FROM agents WHERE id = ? AND customer_id = ?`)
  const remove = sqlite.prepare(`DELETE FROM agents WHERE id = ? AND customer_id = ?`)
  const tags = ['agents']
  const Params = Type.Object({ id: Uuid })

  app.post('', {
    schema: {
      tags, summary: 'Create an agent',
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 100 }),
        systemPrompt: Type.String({ maxLength: 20_000 }),
        capabilities: Type.Optional(Type.Object({ tools: Type.Array(Type.String({ maxLength: 50 }), { maxItems: 10, uniqueItems: true }) }))
      }),
      response: { 201: Type.Object({ success: Type.Literal(true), agent: AgentSchema }), ...errors(403) }
    }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const tools = request.body.capabilities?.tools ?? []
    const unknown = tools.filter((x) => !(TOOL_NAMES as readonly string[]).includes(x))
    if (unknown.length) throw badRequest(`Unknown tool(s): ${unknown.join(', ')}; available: ${TOOL_NAMES.join(', ')}`, 'UNKNOWN_TOOL')
    const id = randomUUID()
    const now = nowIso()
    insert.run(id, p.customerId, p.userId, request.body.name.trim(), request.body.systemPrompt, JSON.stringify(tools), now, now)
    reply.code(201)
    return { success: true as const, agent: toAgent(one.get(id, p.customerId) as AgentRow) }
  })

  app.get('', {
    schema: { tags, summary: 'Agents of the organization', response: { 200: Type.Object({ success: Type.Literal(true), agents: Type.Array(AgentSchema) }), ...errors(403) } }
  }, async (request) => ({ success: true as const, agents: (list.all(requirePrincipal(request).customerId) as AgentRow[]).map(toAgent) }))

  app.get('/:id', {
    schema: { tags, summary: 'One agent', params: Params, response: { 200: Type.Object({ success: Type.Literal(true), agent: AgentSchema }), ...errors(403, 404) } }
  }, async (request) => {
    const row = one.get(request.params.id, requirePrincipal(request).customerId) as AgentRow | undefined
    if (!row) throw notFound('Agent not found')
    return { success: true as const, agent: toAgent(row) }
  })

  app.delete('/:id', {
    schema: { tags, summary: 'Delete an agent', params: Params, response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    if (remove.run(request.params.id, requirePrincipal(request).customerId).changes === 0) throw notFound('Agent not found')
    return { success: true as const, message: 'Agent deleted' }
  })

  app.post('/:id/message', {
    schema: {
      tags, summary: 'Send the agent a message; it may use its tools before answering', params: Params,
      body: Type.Object({ message: Type.String({ minLength: 1, maxLength: 20_000 }), conversationId: Type.Optional(Uuid) }),
      response: {
        200: Type.Object({ response: Type.String(), conversationId: Uuid, model: Type.String(), toolCalls: Type.Array(Type.Object({ tool: Type.String(), input: Type.Unknown() })) }),
        ...errors(403, 404, 502)
      }
    }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const agent = one.get(request.params.id, p.customerId) as AgentRow | undefined
    if (!agent) throw notFound('Agent not found')
    const controller = new AbortController()
    reply.raw.on('close', () => { if (!reply.raw.writableFinished) controller.abort() })
    try {
      const out = await assistant.converse({
        principal: p, reader: assistant.readerOf(request), message: request.body.message, conversationId: request.body.conversationId,
        agentId: agent.id, systemPrompt: agent.system_prompt, tools: JSON.parse(agent.tools) as ToolName[], signal: controller.signal
      })
      return { response: out.reply, conversationId: out.conversationId, model: out.model, toolCalls: out.toolCalls }
    } catch (err) {
      throw modelFailure(err)
    }
  })
}

export default agentsPlugin
