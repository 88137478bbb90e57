import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createAssistant } from './ai/assistant.js'
import { createKnowledgeStore, type KnowledgeStore } from '../plugins/knowledge/store.js'
import { createSearch } from '../plugins/knowledge/search.js'

export type Assistant = ReturnType<typeof createAssistant>
export type KnowledgeSearch = ReturnType<typeof createSearch>

declare module 'fastify' {
  interface FastifyInstance {
    /** knowledge documents and passages: the knowledge routes and the assistant share it */
    knowledgeStore: KnowledgeStore
    /** passage search over the FTS5 index (ranking, scopes) */
    knowledgeSearch: KnowledgeSearch
    /** the assistant (models, tools, conversations): chat, agents, workflows and search share it */
    assistant: Assistant
  }
}

/** Services several resource plugins use, made once per app (their statements are prepared once). */
async function servicesPlugin(app: FastifyInstance) {
  const knowledgeStore = createKnowledgeStore(app.sqlite)
  app.decorate('knowledgeStore', knowledgeStore)
  app.decorate('knowledgeSearch', createSearch(app.sqlite, knowledgeStore))
  app.decorate('assistant', createAssistant(app))
}

export default fp(servicesPlugin, { name: 'cairn-services', dependencies: ['cairn-db'] })
