import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createAssistant, type Assistant } from './assistant.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** the assistant (models, tools, conversations): chat, agents, workflows and unified search share it */
    assistant: Assistant
  }
}

/** The assistant domain module: made once per app (its statements are prepared once). */
async function assistantPlugin(app: FastifyInstance) {
  app.decorate('assistant', createAssistant(app))
}

export default fp(assistantPlugin, { name: 'cairn-assistant', dependencies: ['cairn-db', 'cairn-knowledge'] })
