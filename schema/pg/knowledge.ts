import { sql } from 'drizzle-orm'
import { pgTable, text, integer, index, uniqueIndex, primaryKey } from 'drizzle-orm/pg-core'
import { organizations, workspaces, users } from './accounts.js'
import { int64, tsvector } from './columns.js'

export const knowledgeDocuments = pgTable('knowledge_documents', {
  id: text('id').primaryKey(),
  customerId: text('customer_id').notNull().references(() => organizations.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').references(() => workspaces.id, { onDelete: 'cascade' }),
  ownerId: text('owner_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  scope: text('scope', { enum: ['organization', 'workspace', 'personal'] }).notNull(),
  fileName: text('file_name').notNull(),
  title: text('title'),
  fileType: text('file_type').notNull(),
  fileSize: int64('file_size').notNull(),
  sha256: text('sha256').notNull(),
  category: text('category').notNull(),
  tags: text('tags').notNull(),
  metadata: text('metadata').notNull(),
  textLength: int64('text_length').notNull(),
  chunkCount: integer('chunk_count').notNull(),
  chunkSize: integer('chunk_size').notNull(),
  chunkOverlap: integer('chunk_overlap').notNull(),
  indexedCount: integer('indexed_count').notNull(),
  firstPassageRowid: int64('first_passage_rowid'),
  lastPassageRowid: int64('last_passage_rowid'),
  status: text('status', { enum: ['pending', 'processing', 'indexed'] }).notNull(),
  originalPath: text('original_path'),
  textPath: text('text_path').notNull(),
  uploadedAt: text('uploaded_at').notNull(),
  updatedAt: text('updated_at').notNull()
}, (t) => [
  index('knowledge_docs_org_idx').on(t.customerId, t.scope, t.uploadedAt),
  index('knowledge_docs_ws_idx').on(t.workspaceId, t.uploadedAt),
  index('knowledge_docs_owner_idx').on(t.ownerId, t.uploadedAt),
  index('knowledge_docs_status_idx').on(t.status),
  index('knowledge_docs_untitled_idx').on(t.id).where(sql`${t.title} IS NULL`)
])

export const knowledgeDocumentTags = pgTable('knowledge_document_tags', {
  documentId: text('document_id').notNull().references(() => knowledgeDocuments.id, { onDelete: 'cascade' }),
  tag: text('tag').notNull()
}, (t) => [primaryKey({ columns: [t.documentId, t.tag] }), index('knowledge_tags_tag_idx').on(t.tag, t.documentId)])

/**
 * Passages, as in SQLite (no foreign key: a deleted document's passages are purged in batches), with PostgreSQL's
 * own search indexes in place of SQLite's FTS5 tables and trigram file:
 * - `knowledge_passages_trgm_idx`, pg_trgm over the text: pg_trgm folds the case of every trigram it stores (by the
 *   database's LC_CTYPE, which src/db/postgres.ts requires to be a UTF-8 locale), so `text ILIKE '%…%'`, the
 *   substring search's case-insensitive match, is answered from it for queries of 3+ characters;
 * - `words`, the words of the text in the `cairn_words` configuration (made by the first migration): English
 *   Snowball stems over unaccented words, no stop words, the counterpart of SQLite's `porter unicode61
 *   remove_diacritics 2` word index (a query of common words still matches; 'simple' would not stem, 'english'
 *   would drop "to", "be" and the like from passages and queries alike), under a GIN index for `@@`.
 */
export const knowledgePassages = pgTable('knowledge_passages', {
  /** SQLite's rowid, named: rises with every passage, never reused */
  rowid: int64('rowid').primaryKey().generatedByDefaultAsIdentity(),
  id: text('id').notNull(),
  documentId: text('document_id').notNull(),
  chunkIndex: integer('chunk_index').notNull(),
  text: text('text').notNull(),
  headingPath: text('heading_path'),
  words: tsvector('words').generatedAlwaysAs(sql`to_tsvector('cairn_words'::regconfig, "text")`)
}, (t) => [
  uniqueIndex('knowledge_passages_id_idx').on(t.id),
  uniqueIndex('knowledge_passages_doc_idx').on(t.documentId, t.chunkIndex),
  index('knowledge_passages_trgm_idx').using('gin', t.text.op('gin_trgm_ops')),
  index('knowledge_passages_words_idx').using('gin', t.words)
])
