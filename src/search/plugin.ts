import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createUnifiedSearch, type UnifiedSearch } from './search.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** `POST /api/v2/search`: knowledge, artifacts, voice-note transcripts and channel messages at once */
    unifiedSearch: UnifiedSearch
  }
}

async function searchPlugin(app: FastifyInstance) {
  app.decorate('unifiedSearch', createUnifiedSearch(app))
}

export default fp(searchPlugin, { name: 'cairn-search', dependencies: ['cairn-db', 'cairn-knowledge'] })
