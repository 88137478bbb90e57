-- Per-document Bloom filters of the lower-cased characters and character pairs of its passages
-- (src/knowledge/grams.ts): a 1–2 character substring search skips the documents that cannot hold the query
-- instead of scanning their passages. Filled after indexing by a back-fill on a search worker; a document
-- without one, or whose `passages` differs from its chunk count, is scanned.
CREATE TABLE knowledge_document_grams (
  document_id TEXT PRIMARY KEY NOT NULL,
  passages INTEGER NOT NULL,
  bits BLOB NOT NULL
);
--> statement-breakpoint
CREATE TRIGGER knowledge_document_grams_delete AFTER DELETE ON knowledge_documents BEGIN
  DELETE FROM knowledge_document_grams WHERE document_id = OLD.id;
END;
