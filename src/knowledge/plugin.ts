import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createKnowledgeStore, type KnowledgeStore } from './store.js'
import path from 'node:path'
import os from 'node:os'
import { createSearchPool, type SearchPool } from './search-pool.js'
import type { Reader } from './readers.js'
import { workspaceContext } from '../auth/plugin.js'
import { createEmbeddings, type Embeddings } from './embeddings.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** knowledge documents and passages: the knowledge routes, the assistant and unified search share it */
    knowledgeStore: KnowledgeStore
    /** passage search in four modes (substring, words, semantic, hybrid) under the read rules */
    knowledgeSearch: SearchPool
    /** the read rules (docs/api/knowledge.md): who reads which documents */
    knowledgeReaders: Readers
    /** passage embeddings, when an embedding endpoint is configured; `kick()` looks for work at once */
    knowledgeEmbeddings?: Embeddings
  }
}

/**
 * The reader (docs/api/knowledge.md, "Who reads and deletes what") for a user: their organization, the workspace
 * context if one is given, else every workspace of theirs, and their own personal documents.
 */
export function readerResolver(workspaceIdsOf: (userId: string, customerId: string) => readonly string[]) {
  const readerFor = (who: { userId: string; customerId: string }, workspaceId?: string): Reader => ({
    customerId: who.customerId,
    userId: who.userId,
    workspaceIds: workspaceId ? [workspaceId] : workspaceIdsOf(who.userId, who.customerId)
  })
  /** The reader of an authenticated request, in its workspace context (header, or a query's workspaceId). */
  const readerOf = (request: FastifyRequest, queryWorkspace?: string): Reader =>
    readerFor(request.principal!, workspaceContext(request, queryWorkspace)?.id)
  return { readerFor, readerOf }
}

export type Readers = ReturnType<typeof readerResolver>

/** The knowledge domain, once per app: store, read rules and search. */
async function knowledgeModule(app: FastifyInstance) {
  const store = createKnowledgeStore(app.sqlite, app.db)
  app.decorate('knowledgeStore', store)
  app.decorate('knowledgeReaders', readerResolver(app.workspaceIdsOf))
  const { baseUrl, apiKey, model, batchSize, pollMs } = app.config.embeddings ?? {}
  const embeddings = baseUrl && model
    ? createEmbeddings(app.sqlite, app.jobs, app.log, { baseUrl, apiKey, model }, { batchSize, pollMs })
    : undefined
  if (embeddings) {
    app.decorate('knowledgeEmbeddings', embeddings)
    app.addHook('onReady', async () => embeddings.start())
    app.addHook('preClose', async () => embeddings.stop())
  }
  const search = createSearchPool(path.join(app.config.dataDir, 'cairn.db'), {
    size: Math.max(1, Math.min(2, os.availableParallelism())), cacheMb: app.config.searchCacheMb,
    budgetMs: app.config.searchBudgetMs, settings: app.config.searchSettings,
    embeddings: baseUrl && model ? { baseUrl, apiKey, model } : undefined, log: app.log
  })
  // onClose hooks run in reverse order: the workers stop before the database closes
  app.addHook('onClose', async () => search.close())
  app.decorate('knowledgeSearch', search)
}

export default fp(knowledgeModule, { name: 'cairn-knowledge', dependencies: ['cairn-db', 'cairn-auth'] })
