import type Database from 'better-sqlite3'
import { eq } from 'drizzle-orm'
import { nowIso, type Db } from '../db/index.js'
import { knowledgeDocuments, knowledgeDocumentTags } from '../../schema/tables/knowledge.js'
import { readableWhere, readableParams, type Reader, type DocFilters, type DocScope } from './readers.js'

export interface DocumentRow {
  id: string
  customer_id: string
  workspace_id: string | null
  owner_id: string
  scope: DocScope
  file_name: string
  file_type: string
  file_size: number
  sha256: string
  category: string
  tags: string
  metadata: string
  text_length: number
  chunk_count: number
  chunk_size: number
  chunk_overlap: number
  indexed_count: number
  status: 'pending' | 'processing' | 'indexed'
  original_path: string | null
  text_path: string
  uploaded_at: string
  updated_at: string
}

/** The columns a document listing answers with (GET /api/knowledge/documents): nothing more is read. */
export type ListedDocumentRow = Pick<DocumentRow,
  'id' | 'file_name' | 'original_path' | 'file_size' | 'file_type' | 'category' | 'tags'
  | 'text_length' | 'chunk_count' | 'uploaded_at' | 'updated_at' | 'scope' | 'workspace_id' | 'status' | 'metadata'>
const LISTED_COLUMNS =
  `d.id, d.file_name, d.original_path, d.file_size, d.file_type, d.category, d.tags, d.text_length, d.chunk_count,
  d.uploaded_at, d.updated_at, d.scope, d.workspace_id, d.status, d.metadata`

export interface NewDocument {
  id: string
  customerId: string
  workspaceId: string | null
  ownerId: string
  scope: DocScope
  fileName: string
  fileType: string
  fileSize: number
  sha256: string
  category: string
  tags: string[]
  metadata: Record<string, unknown>
  textLength: number
  chunkCount: number
  chunkSize: number
  chunkOverlap: number
  originalPath: string | null
  textPath: string
}

/** Documents of the knowledge base: plain rows through Drizzle, the filtered reads as prepared SQL. */
export function createKnowledgeStore(sqlite: Database.Database, db: Db) {
  // the filtered queries have a few shapes only: prepare each once
  const statements = new Map<string, Database.Statement>()
  const prepared = (sql: string) => {
    let stmt = statements.get(sql)
    if (!stmt) statements.set(sql, (stmt = sqlite.prepare(sql)))
    return stmt
  }
  const readableById = sqlite.prepare(`SELECT d.* FROM knowledge_documents d WHERE d.id = @id AND ${readableWhere()}`)
  const byId = sqlite.prepare(`SELECT * FROM knowledge_documents WHERE id = ?`)
  const chunksOf = sqlite.prepare(`SELECT id, text, chunk_index FROM knowledge_passages WHERE document_id = ?
    AND chunk_index >= ? ORDER BY chunk_index LIMIT ?`)
  const workspaceRole = sqlite.prepare(`SELECT role FROM workspace_members WHERE workspace_id = ? AND user_id = ?`)

  const create = (doc: NewDocument) => db.transaction((tx) => {
    const now = nowIso()
    tx.insert(knowledgeDocuments).values({
      id: doc.id, customerId: doc.customerId, workspaceId: doc.workspaceId, ownerId: doc.ownerId, scope: doc.scope,
      fileName: doc.fileName, fileType: doc.fileType, fileSize: doc.fileSize, sha256: doc.sha256,
      category: doc.category,
      tags: JSON.stringify(doc.tags), metadata: JSON.stringify(doc.metadata), textLength: doc.textLength,
      chunkCount: doc.chunkCount,
      chunkSize: doc.chunkSize, chunkOverlap: doc.chunkOverlap, indexedCount: 0,
      status: doc.chunkCount === 0 ? 'indexed' : 'pending',
      originalPath: doc.originalPath, textPath: doc.textPath, uploadedAt: now, updatedAt: now
    }).run()
    if (doc.tags.length > 0) {
      tx.insert(knowledgeDocumentTags).values(doc.tags.map((tag) => ({ documentId: doc.id,
        tag }))).onConflictDoNothing().run()
    }
  }, { behavior: 'immediate' })

  return {
    create,

    get(reader: Reader, id: string): DocumentRow | undefined {
      return readableById.get({ id, ...readableParams(reader) }) as DocumentRow | undefined
    },

    /** Any document by id, for background jobs only. */
    getForJob(id: string): DocumentRow | undefined {
      return byId.get(id) as DocumentRow | undefined
    },

    list(reader: Reader, filters: DocFilters, limit: number, offset: number) {
      const where = readableWhere(filters)
      const params = readableParams(reader, filters)
      const rows = prepared(`SELECT ${LISTED_COLUMNS} FROM knowledge_documents d WHERE ${where}
        ORDER BY d.uploaded_at DESC, d.id DESC LIMIT @limit OFFSET @offset`).all({ ...params, limit,
        offset }) as ListedDocumentRow[]
      const { n } = prepared(`SELECT COUNT(*) AS n FROM knowledge_documents d
        WHERE ${where}`).get(params) as { n: number }
      return { rows, count: n }
    },

    chunks(documentId: string, offset: number, limit: number) {
      return chunksOf.all(documentId, offset, limit) as Array<{ id: string; text: string; chunk_index: number }>
    },

    stats(reader: Reader, filters: DocFilters) {
      const where = readableWhere(filters)
      const params = readableParams(reader, filters)
      const totals = prepared(`SELECT COUNT(*) AS documents, COALESCE(SUM(d.chunk_count), 0) AS chunks,
        COALESCE(SUM(d.text_length), 0) AS characters FROM knowledge_documents d WHERE ${where}`).get(params) as
        { documents: number; chunks: number; characters: number }
      const distinct = (column: string) => (prepared(`SELECT DISTINCT d.${column} AS v FROM knowledge_documents d
        WHERE ${where} ORDER BY v`).all(params) as Array<{ v: string }>).map((r) => r.v)
      return { ...totals, fileTypes: distinct('file_type'), categories: distinct('category'),
        scopes: distinct('scope') }
    },

    /** CONTRACT.md §5: the uploader; org admins for organization documents; workspace admins for theirs. */
    canDelete(doc: DocumentRow, userId: string, orgRole: string): boolean {
      if (doc.owner_id === userId) return true
      if (doc.scope === 'organization') return orgRole === 'owner' || orgRole === 'admin'
      if (doc.scope === 'workspace' && doc.workspace_id) {
        const row = workspaceRole.get(doc.workspace_id, userId) as { role: string } | undefined
        return row?.role === 'owner' || row?.role === 'admin'
      }
      return false
    },

    /** Removes the document row (and its tags); its passages go in batches through the purge job. */
    remove(id: string) {
      return db.delete(knowledgeDocuments).where(eq(knowledgeDocuments.id, id)).run().changes > 0
    },

    prepared
  }
}

export type KnowledgeStore = ReturnType<typeof createKnowledgeStore>
