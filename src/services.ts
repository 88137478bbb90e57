import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createAssistant } from './ai/assistant.js'

export type Assistant = ReturnType<typeof createAssistant>

declare module 'fastify' {
  interface FastifyInstance {
    /** the assistant (models, tools, conversations): chat, agents, workflows and search share it */
    assistant: Assistant
  }
}

/** Services several resource plugins use, made once per app (their statements are prepared once). */
async function servicesPlugin(app: FastifyInstance) {
  app.decorate('assistant', createAssistant(app))
}

export default fp(servicesPlugin, { name: 'cairn-services', dependencies: ['cairn-db', 'cairn-events', 'cairn-knowledge'] })
