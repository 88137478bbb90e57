import { Type, type Static } from '@sinclair/typebox'
import { Uuid, Timestamp, Nullable, StringEnum, ClosedString } from './common.js'

export const SCOPES = ['organization', 'workspace', 'personal'] as const
export const DOCUMENT_STATUSES = ['pending', 'processing', 'indexed'] as const
const Scope = StringEnum(SCOPES)
const ScopeOut = ClosedString(SCOPES)
const FreeObject = Type.Object({}, { additionalProperties: true })

export const TenantContext = Type.Object({ customerId: Uuid, scope: ClosedString(['all', ...SCOPES] as const) })

const Title = Type.String({ description: 'the first heading of the document\'s text when the text starts with one ' +
  '(an HTML page\'s h1 or title, a DOCX\'s Title or first heading, a Markdown file\'s first # line), else the file ' +
  'name without its extension' })

export const DocumentSchema = Type.Object({
  id: Uuid,
  fileName: Type.String(),
  title: Title,
  filePath: Nullable(Type.String()),
  originalStorage: Type.String(),
  size: Type.Integer(),
  fileType: Type.String(),
  category: Type.String(),
  tags: Type.Array(Type.String()),
  textLength: Type.Integer(),
  chunkCount: Type.Integer(),
  uploadedAt: Timestamp,
  updated: Timestamp,
  scope: ScopeOut,
  workspaceId: Nullable(Type.String()),
  status: ClosedString(DOCUMENT_STATUSES),
  metadata: FreeObject
})

export const UploadedDocument = Type.Object({
  id: Uuid,
  fileName: Type.String(),
  filePath: Nullable(Type.String()),
  originalStorage: Type.String(),
  fileSize: Type.Integer(),
  fileType: Type.String(),
  textLength: Type.Integer(),
  chunkCount: Type.Integer()
})

export const UploadResponse = Type.Object({ success: Type.Literal(true), document: UploadedDocument,
  message: Type.String() })

export const BatchResponse = Type.Object({
  success: Type.Literal(true),
  results: Type.Array(Type.Object({
    id: Uuid, fileName: Type.String(), fileSize: Type.Integer(), fileType: Type.String(),
    textLength: Type.Integer(), chunkCount: Type.Integer(), scope: ScopeOut
  })),
  errors: Type.Array(Type.Object({ fileName: Type.String(), error: Type.String(), code: Type.String() })),
  successCount: Type.Integer(),
  errorCount: Type.Integer(),
  message: Type.String()
})

export const ListDocumentsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  scope: Type.Optional(Scope),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  workspaceId: Type.Optional(Type.String())
})
export type ListDocumentsQuery = Static<typeof ListDocumentsQuery>

export const ListDocumentsResponse = Type.Object({
  success: Type.Literal(true),
  documents: Type.Array(DocumentSchema),
  count: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
  tenantContext: TenantContext
})

export const ChunkSchema = Type.Object({ id: Uuid, text: Type.String(), chunkIndex: Type.Integer(),
  chunkSize: Type.Integer() })

export const GetDocumentQuery = Type.Object({
  chunkOffset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  chunkLimit: Type.Integer({ minimum: 1, maximum: 5000, default: 1000 }),
  workspaceId: Type.Optional(Type.String())
})

export const GetDocumentResponse = Type.Object({
  success: Type.Literal(true),
  document: DocumentSchema,
  chunks: Type.Array(ChunkSchema)
})

export const StatusResponse = Type.Object({
  success: Type.Literal(true),
  status: StringEnum(DOCUMENT_STATUSES),
  processingProgress: Type.Integer({ minimum: 0, maximum: 100 }),
  document: Type.Object({ id: Uuid, fileName: Type.String(), fileType: Type.String(), chunkCount: Type.Integer(),
    uploadedAt: Timestamp })
})

export const SEARCH_MODES = ['hybrid', 'substring', 'words', 'semantic'] as const
export const MATCHED_BY = ['substring', 'words', 'semantic'] as const

export const SearchBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 1000 }),
  mode: Type.Optional(StringEnum(SEARCH_MODES, {
    description: 'hybrid (default): substring, word and (when configured) semantic matches fused; substring: ' +
      'the query as a ' +
      'substring, ignoring case; words: any of the query\'s words, BM25; semantic: nearest by embedding (400 ' +
        'EMBEDDINGS_NOT_CONFIGURED without one)'
  })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  scope: Type.Optional(Scope),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
  workspaceId: Type.Optional(Type.String())
})
export type SearchBody = Static<typeof SearchBody>

/** a step of a search's plan (`?explain=true`) */
const PlanStep = Type.Object({ kind: Type.String(), reason: Type.String() })

export const SearchResponse = Type.Object({
  success: Type.Literal(true),
  query: Type.String(),
  results: Type.Array(Type.Object({
    document: Type.Object({ id: Uuid, fileName: Type.String(), title: Title, fileType: Type.String(),
      category: Type.String(), scope: ScopeOut }),
    chunk: Type.Object({ id: Uuid, text: Type.String(), chunkIndex: Type.Integer(),
      headingPath: Type.Array(Type.String(), { description: 'the headings above the passage in its document, ' +
        'outermost first (["Server Configuration", "Resource Consumption", "Memory"]); empty when none, and for ' +
        'file types whose # lines are not headings (source code, configuration)' }) }),
    score: Type.Number(),
    snippet: Type.String({ description: 'the best-matching part of the passage, matches in <mark>…</mark>' }),
    matchedBy: Type.Array(StringEnum(MATCHED_BY), { description: 'the modes that found this passage' })
  })),
  count: Type.Integer(),
  partial: Type.Optional(Type.Boolean({ description: 'present (true) when the search stopped at its time budget ' +
    'before it was done: the results are the best it found by then' })),
  warnings: Type.Optional(Type.Array(Type.Object({ code: Type.String(), message: Type.String() }),
    { description: 'present when part of a hybrid search could not run (EMBEDDINGS_UNAVAILABLE: the embedding ' +
      'server could not be reached; the results are those of the other parts)' })),
  plan: Type.Optional(Type.Object({ ...PlanStep.properties, words: Type.Optional(PlanStep),
    substring: Type.Optional(PlanStep), semantic: Type.Optional(PlanStep) }, { description: 'with ?explain=true ' +
    '(organization owners and admins): the path the search took and why, each part of a hybrid search nested; a ' +
    'walk of the shared substring indexes shows as `index-walk` (docs/design/knowledge-search.md, "The decision ' +
    'table")' })),
  tenantContext: TenantContext
})

export const SearchQuery = Type.Object({
  explain: Type.Optional(Type.Boolean({ description: 'answer the plan the search followed (`plan`); organization ' +
    'owners and admins only, else 403' }))
})

export const StatsQuery = Type.Object({ scope: Type.Optional(Scope), workspaceId: Type.Optional(Type.String()) })
export const StatsResponse = Type.Object({
  success: Type.Literal(true),
  documentCount: Type.Integer(),
  chunkCount: Type.Integer(),
  totalCharacters: Type.Integer(),
  fileTypes: Type.Array(Type.String()),
  categories: Type.Array(Type.String()),
  scopes: Type.Array(Type.String()),
  supportedFormats: Type.Array(Type.String()),
  tenantContext: TenantContext
})

export const HealthResponse = Type.Object({
  status: Type.String(),
  service: Type.String(),
  version: Type.String(),
  supportedFormats: Type.Array(Type.String()),
  timestamp: Timestamp
})

export const GraphDocumentResponse = Type.Object({ success: Type.Literal(true), data: DocumentSchema })
export const DocIdParams = Type.Object({ id: Uuid })
