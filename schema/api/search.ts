import { Type, type Static } from '@sinclair/typebox'

export const SearchBody = Type.Object({ query: Type.String({ minLength: 1, maxLength: 1000 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }) })

export const SearchResult = Type.Object({ kind: Type.String(), id: Type.String(), title: Type.String(),
  snippet: Type.String(), score: Type.Number() })
export type SearchResult = Static<typeof SearchResult>

export const SearchResponse = Type.Object({ success: Type.Literal(true), query: Type.String(),
  results: Type.Array(SearchResult), count: Type.Integer(),
  partial: Type.Optional(Type.Boolean({ description: 'present (true) when the search stopped at its time budget ' +
    'before it was done: the results are the best it found by then' })) })
