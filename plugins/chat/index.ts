import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { FastifySSEPlugin } from 'fastify-sse-v2'
import { errors } from '../../schema/api/common.js'
import { ChatBody, ChatResponse, ChatStreamBody } from '../../schema/api/chat.js'
import { requirePrincipal } from '../../src/auth/plugin.js'
import { HttpError, notFound } from '../../src/http/errors.js'
import { MAX_CHATS_PER_USER, modelFailure } from '../../src/assistant/assistant.js'
import { ModelError } from '../../src/ai/llm.js'
import { assistantTwinId } from '../../src/channels/store.js'

const HEARTBEAT_MS = 15_000
/** Retry-After of a chat refused for the slots in use: model answers take seconds */
const BUSY_RETRY_SECONDS = 5

/** Chat with the assistant (docs/api/assistant.md#chat): a JSON answer, or a Server-Sent Events stream. */
const chat: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(FastifySSEPlugin, { retryDelay: false })
  const assistant = app.assistant
  const channels = app.channelStore
  const tags = ['chat']

  /** one of the caller's chat slots, else 429 CHAT_BUSY: no person holds more than a few model calls at once */
  function slotOf(userId: string, reply: FastifyReply): () => void {
    const release = assistant.chatSlot(userId)
    if (release) return release
    reply.header('retry-after', String(BUSY_RETRY_SECONDS))
    throw new HttpError(429, `At most ${MAX_CHATS_PER_USER} chat answers at once per person: wait for one to ` +
      'finish, or cancel it', 'CHAT_BUSY')
  }

  app.post('', {
    schema: {
      tags, summary: 'Ask the assistant; with channelId the reply is also posted there',
      body: ChatBody,
      response: { 200: ChatResponse, ...errors(403, 404, 429, 502) }
    }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const channel = request.body.channelId ? channels.find(p, request.body.channelId) : undefined
    if (request.body.channelId && !channel) throw notFound('Channel not found')
    const release = slotOf(p.userId, reply)
    const controller = new AbortController()
    // a client that goes away before the answer cancels the model call
    reply.raw.on('close', () => { if (!reply.raw.writableFinished) controller.abort() })
    try {
      const out = await assistant.converse({
        principal: p, reader: assistant.readerOf(request), message: request.body.message,
        conversationId: request.body.conversationId, tools: ['search_knowledge'], signal: controller.signal
      })
      if (channel) {
        channels.post(channel, { senderId: p.userId, content: out.reply, aiTwinId: assistantTwinId(p.customerId) })
      }
      return { reply: out.reply, conversationId: out.conversationId, model: out.model, citations: out.citations }
    } catch (err) {
      throw modelFailure(err)
    } finally {
      release()
    }
  })

  app.post('/stream', {
    config: { idempotency: false },
    schema: {
      tags, summary: 'Ask the assistant and receive the answer as Server-Sent Events (text_delta, then done or error)',
      body: ChatStreamBody,
      response: { ...errors(403, 404, 429) }
    }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const reader = assistant.readerOf(request)
    if (request.body.conversationId && !assistant.ownsConversation(p, request.body.conversationId)) {
      throw notFound('Conversation not found')
    }
    // refused before the stream starts: a 429 in the error shape, not an event
    const release = slotOf(p.userId, reply)
    const controller = new AbortController()
    reply.raw.on('close', () => { controller.abort(); release() })
    // proxies (nginx) must pass each event on at once, not buffer the stream
    reply.header('x-accel-buffering', 'no')
    let eventId = 0
    const send = (event: string,
      data: object) => {
      if (!reply.raw.destroyed) reply.sse({ id: String(++eventId), event,
        data: JSON.stringify(data) })
    }
    send('ready', {})
    const heartbeat = setInterval(() => send('ping', {}), HEARTBEAT_MS)
    try {
      const out = await assistant.converse({
        principal: p, reader, message: request.body.message, conversationId: request.body.conversationId,
        tools: ['search_knowledge'], signal: controller.signal, onDelta: (content) => send('text_delta', { content })
      })
      send('done', { conversationId: out.conversationId, reply: out.reply, model: out.model,
        citations: out.citations })
    } catch (err) {
      if (!controller.signal.aborted) {
        // what the model server said, and where it is, go to the log only
        request.log.warn({ err, upstream: err instanceof ModelError ? err.detail : undefined }, 'chat stream failed')
        send('error', { message: err instanceof ModelError ? err.message : 'The assistant could not answer' })
      }
    } finally {
      release()
      clearInterval(heartbeat)
      reply.sseContext?.source.end()
    }
  })
}

export default chat
