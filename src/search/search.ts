import type { FastifyInstance } from 'fastify'
import type { Principal } from '../auth/plugin.js'
import { mayReadThrough } from '../auth/capabilities.js'
import type { Reader } from '../knowledge/readers.js'
import type { SearchWarning } from '../knowledge/search.js'
import type { SearchResult } from '../../schema/api/search.js'

/**
 * One search over what the caller can read (docs/api/assistant.md, "Unified search"): knowledge passages,
 * artifacts of their workspaces, their own voice-note transcripts, messages of channels they can read. It runs on
 * the search workers, scheduled per organization with a time budget like every search
 * (src/knowledge/search-pool.ts); the kinds other than knowledge start from the caller's own rows
 * (src/search/kinds.ts). Each kind's scores are scaled to its best hit before the kinds are merged.
 */
/** The route that reads each kind: an API key sees a kind only when its scopes open that route. */
const KIND_ROUTES = {
  artifact: ['GET', '/api/v2/artifacts/:id'],
  voice_note: ['GET', '/api/v2/voice-notes/:id/transcript'],
  message: ['GET', '/api/v2/channels/:id/messages']
} as const

export function createUnifiedSearch(app: FastifyInstance) {
  return {
    /** the best `limit` results, `partial` when the search stopped at its time budget before it was done */
    async search(principal: Principal, reader: Reader, query: string,
      limit: number): Promise<{ results: SearchResult[]; partial: boolean; warnings: SearchWarning[] }> {
      const found = await app.knowledgeSearch.unified(reader, { customerId: principal.customerId,
        userId: principal.userId, workspaceIds: [...reader.workspaceIds], query, limit })
      const results: SearchResult[] = []
      // each index scores on its own scale: scale every kind to its best hit (1) before merging
      const add = (kind: string, rows: Array<Omit<SearchResult, 'kind'>>) => {
        const best = Math.max(...rows.map((r) => r.score), 0)
        for (const r of rows) results.push({ kind, ...r, score: best > 0 ? r.score / best : 1 })
      }
      const seenDocs = new Set<string>()
      const knowledge: Array<Omit<SearchResult, 'kind'>> = []
      for (const hit of found.passages) {
        if (seenDocs.has(hit.document.id)) continue
        seenDocs.add(hit.document.id)
        // the document's title (its first heading, else its file name without extension)
        knowledge.push({ id: hit.document.id, title: hit.document.title || hit.document.fileName, snippet: hit.snippet,
          score: hit.score ?? 1 })
      }
      add('knowledge', knowledge)
      for (const kind of ['artifact', 'voice_note', 'message'] as const) {
        if (!mayReadThrough(principal.apiKey?.scopes, KIND_ROUTES[kind][0], KIND_ROUTES[kind][1])) continue
        add(kind, found.kinds.filter((h) => h.kind === kind).map(({ kind: _, ...h }) => h))
      }
      results.sort((a, b) => b.score - a.score)
      return { results: results.slice(0, limit).map((r) => ({ ...r, score: Math.round(r.score * 1e6) / 1e6 })),
        partial: found.partial, warnings: found.warnings }
    }
  }
}

export type UnifiedSearch = ReturnType<typeof createUnifiedSearch>
