import { sql } from 'drizzle-orm'
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from 'drizzle-orm/sqlite-core'
import { organizations, workspaces, users } from './accounts.js'

export const knowledgeDocuments = sqliteTable('knowledge_documents', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  /** set only for scope = workspace */
  workspaceId: text('workspace_id').references(() => workspaces.id, { onDelete: 'cascade' }),
  ownerId: text('owner_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  scope: text('scope', { enum: ['organization', 'workspace', 'personal'] }).notNull(),
  fileName: text('file_name').notNull(),
  /**
   * the text's first heading when the text starts with one, else the file name without its extension
   * (src/ingest/outline.ts documentTitle); NULL only for a document indexed before this column, until the index
   * worker's back-fill gives it one and its passages their heading paths (src/knowledge/outline-backfill.ts)
   */
  title: text('title'),
  fileType: text('file_type').notNull(),
  fileSize: integer('file_size').notNull(),
  sha256: text('sha256').notNull(),
  category: text('category').notNull(),
  /** JSON array; also in knowledge_document_tags for filtering */
  tags: text('tags').notNull(),
  metadata: text('metadata').notNull(),
  textLength: integer('text_length').notNull(),
  chunkCount: integer('chunk_count').notNull(),
  chunkSize: integer('chunk_size').notNull(),
  chunkOverlap: integer('chunk_overlap').notNull(),
  /** passages stored so far; indexing resumes from here after a restart */
  indexedCount: integer('indexed_count').notNull(),
  /**
   * rowids of its first and last passages stored so far (the index worker writes them with its passages): a
   * category or tag filter's rowid ranges come from its documents' rows (src/knowledge/search.ts, docSpan)
   */
  firstPassageRowid: integer('first_passage_rowid'),
  lastPassageRowid: integer('last_passage_rowid'),
  status: text('status', { enum: ['pending', 'processing', 'indexed'] }).notNull(),
  /** paths relative to the data dir */
  originalPath: text('original_path'),
  textPath: text('text_path').notNull(),
  uploadedAt: text('uploaded_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [
  index('knowledge_docs_org_idx').on(t.customerId, t.scope, t.uploadedAt),
  index('knowledge_docs_ws_idx').on(t.workspaceId, t.uploadedAt),
  index('knowledge_docs_owner_idx').on(t.ownerId, t.uploadedAt),
  index('knowledge_docs_status_idx').on(t.status),
  // the back-fill's work list: empty once every document has its title
  index('knowledge_docs_untitled_idx').on(t.id).where(sql`${t.title} IS NULL`)
])

export const knowledgeDocumentTags = sqliteTable('knowledge_document_tags', {
  documentId: text('document_id').notNull().references(() => knowledgeDocuments.id, { onDelete: 'cascade' }),
  tag: text('tag').notNull()
}, (t) => [primaryKey({ columns: [t.documentId, t.tag] }), index('knowledge_tags_tag_idx').on(t.tag, t.documentId)])

/**
 * Passages. The integer rowid is the FTS5 content rowid (knowledge_passages_fts, migration 0005).
 * No foreign key: a deleted document's passages are removed in batches by a background job, and every
 * read joins the documents table, so orphans are never seen.
 */
export const knowledgePassages = sqliteTable('knowledge_passages', {
  rowid: integer('rowid').primaryKey(),
  id: text('id').notNull(),
  documentId: text('document_id').notNull(),
  chunkIndex: integer('chunk_index').notNull(),
  text: text('text').notNull(),
  /**
   * the headings above the passage, outermost first, as a JSON array of strings (src/ingest/outline.ts
   * passageHeadingPath); NULL when it has none
   */
  headingPath: text('heading_path')
}, (t) => [
  uniqueIndex('knowledge_passages_id_idx').on(t.id),
  uniqueIndex('knowledge_passages_doc_idx').on(t.documentId, t.chunkIndex)
])
