import { Type, type Static } from '@sinclair/typebox'
import { ClosedString } from './common.js'

/** what the unified search finds (src/search/kinds.ts searches each) */
export const SEARCH_KINDS = ['artifact', 'voice_note', 'message'] as const

export const SearchBody = Type.Object({ query: Type.String({ minLength: 1, maxLength: 1000 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }) })

export const SearchResult = Type.Object({ kind: ClosedString(SEARCH_KINDS), id: Type.String(), title: Type.String(),
  snippet: Type.String(), score: Type.Number() })
export type SearchResult = Static<typeof SearchResult>

export const SearchResponse = Type.Object({ success: Type.Literal(true), query: Type.String(),
  results: Type.Array(SearchResult), count: Type.Integer(),
  partial: Type.Optional(Type.Boolean({ description: 'present (true) when the search stopped at its time budget ' +
    'before it was done: the results are the best it found by then' })),
  warnings: Type.Optional(Type.Array(Type.Object({ code: Type.String(), message: Type.String() }),
    { description: 'present when the knowledge part could not use embeddings (EMBEDDINGS_UNAVAILABLE: the embedding ' +
      'server could not be reached; the results are those of words and substring search)' })) })
