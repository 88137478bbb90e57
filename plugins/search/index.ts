import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors } from '../../schema/api/common.js'
import { SearchBody, SearchResponse } from '../../schema/api/search.js'
import { requirePrincipal } from '../../src/auth/plugin.js'
import { badRequest } from '../../src/http/errors.js'
import { QueryRefusedError } from '../../src/knowledge/search.js'

/**
 * `POST /api/v2/search` (docs/api/assistant.md#unified-search): one search over what the caller can read
 * (src/search/search.ts).
 */
const searchPlugin: FastifyPluginAsyncTypebox = async (app) => {
  app.post('', {
    config: { action: 'search.query', writes: false },
    schema: {
      tags: ['search'], summary: 'Search knowledge, artifacts, voice-note transcripts and channel messages at once',
      body: SearchBody, response: { 200: SearchResponse, ...errors(400, 403) }
    }
  }, async (request) => {
    const query = request.body.query.trim()
    if (!query) throw badRequest('query must not be blank', 'VALIDATION_ERROR')
    let found
    try {
      found = await app.unifiedSearch.search(requirePrincipal(request), app.assistant.readerOf(request), query,
        request.body.limit)
    } catch (err) {
      if (err instanceof QueryRefusedError) throw badRequest(err.message, 'VALIDATION_ERROR')
      throw err
    }
    return { success: true as const, query, results: found.results, count: found.results.length,
      ...(found.partial ? { partial: true } : {}), ...(found.warnings.length > 0 ? { warnings: found.warnings } : {}) }
  })
}

export default searchPlugin
