import type Database from 'better-sqlite3'
import { and, eq, gte, sql } from 'drizzle-orm'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/now.js'
import { boundLimit, type SqlRow } from '../db/prepared.js'
import { workspaceMembers } from '../../schema/tables/accounts.js'
import { knowledgeDocuments, knowledgeDocumentTags, knowledgePassages } from '../../schema/tables/knowledge.js'
import { readableWhere, readableParams, type Reader, type DocFilters, type DocScope } from './readers.js'
import { fileTitle } from '../ingest/outline.js'

/** A document row as the raw statements read it (they apply the read rule, SQL over `json_each`). */
export type DocumentRow = SqlRow<typeof knowledgeDocuments>

/** The columns a document's answer is made of (toDocument). */
export type ListedDocumentRow = Pick<DocumentRow,
  'id' | 'file_name' | 'title' | 'original_path' | 'file_size' | 'file_type' | 'category' | 'tags'
  | 'text_length' | 'chunk_count' | 'uploaded_at' | 'updated_at' | 'scope' | 'workspace_id' | 'status' | 'metadata'>

/** A document as the API answers it (DocumentSchema in schema/api/knowledge.ts). */
export function toDocument(row: ListedDocumentRow) {
  return {
    id: row.id,
    fileName: row.file_name,
    title: row.title ?? fileTitle(row.file_name),
    filePath: row.original_path,
    originalStorage: row.original_path ? 'local' : 'none',
    size: row.file_size,
    fileType: row.file_type,
    category: row.category,
    tags: JSON.parse(row.tags) as string[],
    textLength: row.text_length,
    chunkCount: row.chunk_count,
    uploadedAt: row.uploaded_at,
    updated: row.updated_at,
    scope: row.scope,
    workspaceId: row.workspace_id,
    status: row.status,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>
  }
}

/**
 * fileTitle (src/ingest/outline.ts) of `d.file_name` in SQL, for a document indexed before titles were stored until
 * the back-fill reaches it: the name up to its last dot, unless that dot is its first character (a stored name has
 * no directories). rtrim drops the characters after the last dot (every character but the dot is in its set).
 */
export const FILE_TITLE_SQL = `CASE WHEN instr(substr(d.file_name, 2), '.') > 0
  THEN substr(rtrim(d.file_name, replace(d.file_name, '.', '')), 1,
    length(rtrim(d.file_name, replace(d.file_name, '.', ''))) - 1)
  ELSE d.file_name END`

/**
 * toDocument written in SQL over the alias `d`, fields in the same order: a listing page is rendered to JSON text
 * by SQLite, so that no row, value or object crosses into JavaScript (that crossing and the serialisation cost
 * more than the query). test/knowledge/listing.test.ts checks that both give the same documents.
 */
const DOCUMENT_JSON = `json_object('id', d.id, 'fileName', d.file_name, 'title', coalesce(d.title, ${FILE_TITLE_SQL}),
  'filePath', d.original_path,
  'originalStorage', CASE WHEN d.original_path IS NULL OR d.original_path = '' THEN 'none' ELSE 'local' END,
  'size', d.file_size, 'fileType', d.file_type, 'category', d.category, 'tags', json(d.tags),
  'textLength', d.text_length, 'chunkCount', d.chunk_count, 'uploadedAt', d.uploaded_at, 'updated', d.updated_at,
  'scope', d.scope, 'workspaceId', d.workspace_id, 'status', d.status, 'metadata', json(d.metadata))`

export interface NewDocument {
  id: string
  customerId: string
  workspaceId: string | null
  ownerId: string
  scope: DocScope
  fileName: string
  /** src/ingest/outline.ts fileTitle; the index worker writes the title of the text's first heading over it */
  title: string
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
 * Documents of the knowledge base: plain rows through Drizzle; the reads under the read rule (readableWhere: SQL
 * over `json_each`) and the listing rendered to JSON by SQLite as prepared raw SQL, typed from the table.
 */
export function createKnowledgeStore(sqlite: Database.Database, db: Db) {
  // the filtered queries have a few shapes only: prepare each once
  const statements = new Map<string, Database.Statement>()
  /** a statement kept by `key`: the SQL itself, or a shorter name when building the SQL costs on a hot path */
  const prepared = (key: string, build: () => string = () => key) => {
    let stmt = statements.get(key)
    if (!stmt) statements.set(key, (stmt = sqlite.prepare(build())))
    return stmt
  }
  const readableById = sqlite.prepare<ReturnType<typeof readableParams> & { id: string }, DocumentRow>(
    `SELECT d.* FROM knowledge_documents d WHERE d.id = @id AND ${readableWhere()}`)
  const p = sql.placeholder
  const passages = knowledgePassages
  const chunksOf = db.select({ id: passages.id, text: passages.text, chunk_index: passages.chunkIndex })
    .from(passages).where(and(eq(passages.documentId, p('documentId')), gte(passages.chunkIndex, p('offset'))))
    .orderBy(passages.chunkIndex).limit(boundLimit('limit')).prepare()
  const documentExists = db.select({ one: sql`1` }).from(knowledgeDocuments)
    .where(eq(knowledgeDocuments.id, p('id'))).prepare()
  const workspaceRole = db.select({ role: workspaceMembers.role }).from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, p('workspaceId')), eq(workspaceMembers.userId, p('userId'))))
    .prepare()

  const create = (doc: NewDocument) => db.transaction((tx) => {
    const now = nowIso()
    tx.insert(knowledgeDocuments).values({
      id: doc.id, customerId: doc.customerId, workspaceId: doc.workspaceId, ownerId: doc.ownerId, scope: doc.scope,
      fileName: doc.fileName, title: doc.title, fileType: doc.fileType, fileSize: doc.fileSize, sha256: doc.sha256,
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
      return readableById.get({ id, ...readableParams(reader) })
    },

    /**
     * A page of the readable documents, newest first, as the JSON text of their array (see DOCUMENT_JSON), and
     * how many there are: one statement, the count an uncorrelated subquery (evaluated once). The page is chosen
     * by rowid and sort key alone, then its rows read (sorting whole rows cost a third more, at 1,000 documents).
     * LIMIT and OFFSET are written `+@limit`: SQLite recompiles a statement whose LIMIT is a bare parameter
     * each time that parameter is bound (it plans with the bound value), which cost more than the query.
     */
    listPage(reader: Reader, filters: DocFilters, limit: number, offset: number): { documents: string; count: number } {
      // one statement per filter shape (which of scope, category, tags are given)
      const shape = `${filters.scope ? 's' : ''}${filters.category ? 'c' : ''}${filters.tags?.length ? 't' : ''}`
      const page = prepared(`listPage:${shape}`, () => {
        const where = readableWhere(filters)
        return `SELECT (SELECT COUNT(*) FROM knowledge_documents d WHERE ${where}) AS count,
          (SELECT json_group_array(${DOCUMENT_JSON} ORDER BY d.uploaded_at DESC, d.id DESC)
            FROM (SELECT d.rowid AS r FROM knowledge_documents d WHERE ${where}
              ORDER BY d.uploaded_at DESC, d.id DESC LIMIT +@limit OFFSET +@offset) page
            JOIN knowledge_documents d ON d.rowid = page.r) AS documents`
      })
      return page.get({ ...readableParams(reader, filters), limit, offset }) as { documents: string; count: number }
    },

    chunks(documentId: string, offset: number, limit: number) {
      return chunksOf.all({ documentId, offset, limit })
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

    /**
     * docs/api/knowledge.md, "Who reads and deletes what": the uploader; org admins for organization documents;
     * workspace admins for theirs.
     */
    canDelete(doc: DocumentRow, userId: string, orgRole: string): boolean {
      if (doc.owner_id === userId) return true
      if (doc.scope === 'organization') return orgRole === 'owner' || orgRole === 'admin'
      if (doc.scope === 'workspace' && doc.workspace_id) {
        const role = workspaceRole.get({ workspaceId: doc.workspace_id, userId })?.role
        return role === 'owner' || role === 'admin'
      }
      return false
    },

    /** A document row by id, any tenant: for the service's own notices (the workspace event stream), never a reader */
    row(id: string) {
      return db.select().from(knowledgeDocuments).where(eq(knowledgeDocuments.id, id)).get()
    },

    /** Whether a document row exists (any tenant: the sweep of files left by an interrupted upload) */
    exists: (id: string) => !!documentExists.get({ id }),

    /** Removes the document row (and its tags); its passages go in batches through the purge job. */
    remove(id: string) {
      return db.delete(knowledgeDocuments).where(eq(knowledgeDocuments.id, id)).run().changes > 0
    },

    prepared
  }
}

export type KnowledgeStore = ReturnType<typeof createKnowledgeStore>
