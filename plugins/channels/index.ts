import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, IdParams } from '../../schema/api/common.js'
import {
  ChannelResponse, CreateChannelBody, ListChannelsResponse, ListMessagesQuery, ListMessagesResponse, MessageResponse,
  PostMessageBody,
  WorkspaceIdQuery as WsQuery
} from '../../schema/api/channels.js'
import { requirePrincipal, requireWorkspaceContext } from '../../src/auth/plugin.js'
import { badRequest, notFound } from '../../src/http/errors.js'

/** Channels of a workspace (docs/api/assistant.md#channels-and-messages) and `POST /api/v2/messages`. */
const channelsPlugin: FastifyPluginAsyncTypebox = async (app) => {
  const store = app.channelStore
  const tags = ['channels']

  app.post('/channels', {
    schema: {
      tags, summary: 'Create a channel in the workspace context', querystring: WsQuery,
      body: CreateChannelBody,
      response: { 201: ChannelResponse, ...errors(403) }
    }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const ws = requireWorkspaceContext(request, request.query.workspaceId)
    const memberIds = request.body.memberIds ?? []
    if (request.body.type === 'direct' && memberIds.length === 0) {
      throw badRequest('A direct channel needs memberIds', 'VALIDATION_ERROR')
    }
    const channel = store.create({ userId: p.userId, customerId: p.customerId, workspaceId: ws.id },
      request.body.name.trim(), request.body.type, memberIds)
    if (channel === 'not-member') throw badRequest('Every member must belong to the workspace', 'VALIDATION_ERROR')
    reply.code(201)
    return { success: true as const, data: { ...channel, member_ids: store.members(channel.id) } }
  })

  app.get('/channels', {
    schema: { tags, summary: 'Channels of the workspace the caller can read', querystring: WsQuery,
      response: { 200: ListChannelsResponse, ...errors(403) } }
  }, async (request) => {
    const p = requirePrincipal(request)
    const ws = requireWorkspaceContext(request, request.query.workspaceId)
    return { success: true as const, data: store.list(p, ws.id) }
  })

  app.get('/channels/:id/messages', {
    schema: {
      tags, summary: 'Messages of a channel, newest first', params: IdParams,
      querystring: ListMessagesQuery,
      response: { 200: ListMessagesResponse, ...errors(403, 404) }
    }
  }, async (request) => {
    const channel = store.find(requirePrincipal(request), request.params.id)
    if (!channel) throw notFound('Channel not found')
    return { success: true as const,
      data: store.messages(channel.id, request.query.limit,
        request.query.before && new Date(request.query.before).toISOString()) }
  })

  app.post('/messages', {
    schema: {
      tags, summary: 'Post a message to a channel',
      body: PostMessageBody,
      response: { 201: MessageResponse, ...errors(403, 404) }
    }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const channel = store.find(p, request.body.channel_id)
    if (!channel) throw notFound('Channel not found')
    if (request.body.parent_message_id && !store.parentExists(channel.id, request.body.parent_message_id)) {
      throw badRequest('parent_message_id is not a message of this channel', 'VALIDATION_ERROR')
    }
    reply.code(201)
    return {
      success: true as const,
      data: store.post(channel,
        { senderId: p.userId, content: request.body.content, contentType: request.body.content_type,
          parentMessageId: request.body.parent_message_id })
    }
  })
}

export default channelsPlugin
