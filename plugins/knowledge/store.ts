import type Database from 'better-sqlite3'
import { nowIso } from '../../src/db/index.js'

export type DocScope = 'organization' | 'workspace' | 'personal'

/** Who reads: the organization, the workspaces in view (the context, or all of the user's), the user. */
export interface Reader {
  customerId: string
  userId: string
  workspaceIds: string[]
}

export interface DocFilters {
  scope?: DocScope
  category?: string
  /** documents carrying any of these tags */
  tags?: string[]
}

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

/**
 * The readable-documents rule of CONTRACT.md §5 as SQL over the alias `d`, with its filters. One place:
 * list, get, search, stats and the knowledge-graph routes all read through it.
 */
export function readableWhere(filters: DocFilters = {}): string {
  const parts = [
    `d.customer_id = @customerId`,
    `(d.scope = 'organization'
      OR (d.scope = 'workspace' AND d.workspace_id IN (SELECT value FROM json_each(@workspaceIds)))
      OR (d.scope = 'personal' AND d.owner_id = @userId))`
  ]
  if (filters.scope) parts.push(`d.scope = @scope`)
  if (filters.category) parts.push(`d.category = @category`)
  if (filters.tags && filters.tags.length > 0) {
    parts.push(`EXISTS (SELECT 1 FROM knowledge_document_tags g WHERE g.document_id = d.id AND g.tag IN (SELECT value FROM json_each(@tags)))`)
  }
  return parts.join(' AND ')
}

export function readableParams(reader: Reader, filters: DocFilters = {}) {
  return {
    customerId: reader.customerId,
    userId: reader.userId,
    workspaceIds: JSON.stringify(reader.workspaceIds),
    ...(filters.scope ? { scope: filters.scope } : {}),
    ...(filters.category ? { category: filters.category } : {}),
    ...(filters.tags && filters.tags.length > 0 ? { tags: JSON.stringify(filters.tags) } : {})
  }
}

/**
 * The reader of CONTRACT.md §5 for a user: their organization, the workspace context if one is given,
 * else every workspace of theirs, and their own personal documents.
 */
export function readerResolver(sqlite: Database.Database) {
  const memberWorkspaces = sqlite.prepare(`SELECT m.workspace_id AS id FROM workspace_members m
    JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id = ? AND w.customer_id = ?`)
  return (who: { userId: string; customerId: string }, workspaceId?: string): Reader => ({
    customerId: who.customerId,
    userId: who.userId,
    workspaceIds: workspaceId ? [workspaceId] : (memberWorkspaces.all(who.userId, who.customerId) as Array<{ id: string }>).map((r) => r.id)
  })
}

export function createKnowledgeStore(sqlite: Database.Database) {
  // the filtered queries have a few shapes only: prepare each once
  const statements = new Map<string, Database.Statement>()
  const prepared = (sql: string) => {
    let stmt = statements.get(sql)
    if (!stmt) statements.set(sql, (stmt = sqlite.prepare(sql)))
    return stmt
  }
  const insertDoc = sqlite.prepare(`INSERT INTO knowledge_documents (id, customer_id, workspace_id, owner_id, scope, file_name,
    file_type, file_size, sha256, category, tags, metadata, text_length, chunk_count, chunk_size, chunk_overlap, indexed_count,
    status, original_path, text_path, uploaded_at, updated_at)
    VALUES (@id, @customerId, @workspaceId, @ownerId, @scope, @fileName, @fileType, @fileSize, @sha256, @category, @tags, @metadata,
    @textLength, @chunkCount, @chunkSize, @chunkOverlap, 0, @status, @originalPath, @textPath, @now, @now)`)
  const insertTag = sqlite.prepare(`INSERT OR IGNORE INTO knowledge_document_tags (document_id, tag) VALUES (?, ?)`)
  const readableById = sqlite.prepare(`SELECT d.* FROM knowledge_documents d WHERE d.id = @id AND ${readableWhere()}`)
  const byId = sqlite.prepare(`SELECT * FROM knowledge_documents WHERE id = ?`)
  const chunksOf = sqlite.prepare(`SELECT id, text, chunk_index FROM knowledge_passages WHERE document_id = ? AND chunk_index >= ? ORDER BY chunk_index LIMIT ?`)
  const deleteDoc = sqlite.prepare(`DELETE FROM knowledge_documents WHERE id = ?`)
  const workspaceRole = sqlite.prepare(`SELECT role FROM workspace_members WHERE workspace_id = ? AND user_id = ?`)

  const create = sqlite.transaction((doc: NewDocument) => {
    insertDoc.run({
      ...doc,
      tags: JSON.stringify(doc.tags),
      metadata: JSON.stringify(doc.metadata),
      status: doc.chunkCount === 0 ? 'indexed' : 'pending',
      now: nowIso()
    })
    for (const tag of doc.tags) insertTag.run(doc.id, tag)
  }).immediate

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
      const rows = prepared(`SELECT d.* FROM knowledge_documents d WHERE ${where}
        ORDER BY d.uploaded_at DESC, d.id DESC LIMIT @limit OFFSET @offset`).all({ ...params, limit, offset }) as DocumentRow[]
      const { n } = prepared(`SELECT COUNT(*) AS n FROM knowledge_documents d WHERE ${where}`).get(params) as { n: number }
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
      return { ...totals, fileTypes: distinct('file_type'), categories: distinct('category'), scopes: distinct('scope') }
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
      return deleteDoc.run(id).changes > 0
    },

    prepared
  }
}

export type KnowledgeStore = ReturnType<typeof createKnowledgeStore>
