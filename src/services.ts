import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createAssistant } from './ai/assistant.js'
import { createChannelStore } from '../plugins/channels/store.js'

export type Assistant = ReturnType<typeof createAssistant>
export type ChannelStore = ReturnType<typeof createChannelStore>

declare module 'fastify' {
  interface FastifyInstance {
    /** the assistant (models, tools, conversations): chat, agents, workflows and search share it */
    assistant: Assistant
    /** channels and their messages: the channels, chat and workflow routes share it */
    channelStore: ChannelStore
  }
}

/** Services several resource plugins use, made once per app (their statements are prepared once). */
async function servicesPlugin(app: FastifyInstance) {
  app.decorate('assistant', createAssistant(app))
  app.decorate('channelStore', createChannelStore(app.sqlite, app.events))
}

export default fp(servicesPlugin, { name: 'cairn-services', dependencies: ['cairn-db', 'cairn-events', 'cairn-knowledge'] })
