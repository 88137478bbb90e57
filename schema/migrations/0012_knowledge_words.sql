-- Word-level index of passages (hybrid search): Unicode-aware words, case and diacritics folded, Porter
-- stems over them (a non-English word is stemmed the same way in the passage and in the query, so it still
-- matches itself). Contentless with delete support: the text is stored once (knowledge_passages) and a row
-- is removed by rowid alone, since a deleted document's passages are purged after its row is gone.
-- `readers` holds one token naming who may read the passage (src/knowledge/readers.ts, readerTokens):
-- o<org>z for organization documents, w<workspace>z for workspace documents, u<owner><org>z for personal
-- ones. A search matches `{readers}: (its caller's tokens) AND {text}: (...)`, so it walks only passages
-- its caller can read, however large the other tenants are.
CREATE VIRTUAL TABLE knowledge_passages_words USING fts5(
  text,
  readers,
  content = '',
  contentless_delete = 1,
  tokenize = 'porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE VIEW knowledge_passage_readers AS
  SELECT d.id AS document_id, CASE d.scope
    WHEN 'organization' THEN 'o' || replace(d.customer_id, '-', '') || 'z'
    WHEN 'workspace' THEN 'w' || replace(d.workspace_id, '-', '') || 'z'
    ELSE 'u' || replace(d.owner_id, '-', '') || replace(d.customer_id, '-', '') || 'z' END AS token
  FROM knowledge_documents d;
--> statement-breakpoint
INSERT INTO knowledge_passages_words (rowid, text, readers)
  SELECT p.rowid, p.text, r.token FROM knowledge_passages p JOIN knowledge_passage_readers r ON r.document_id = p.document_id;
--> statement-breakpoint
-- a passage is written after its document row (the indexer and any synchronous path must keep that order)
CREATE TRIGGER knowledge_passages_words_insert AFTER INSERT ON knowledge_passages BEGIN
  INSERT INTO knowledge_passages_words (rowid, text, readers) VALUES (NEW.rowid, NEW.text,
    (SELECT token FROM knowledge_passage_readers WHERE document_id = NEW.document_id));
END;
--> statement-breakpoint
CREATE TRIGGER knowledge_passages_words_delete AFTER DELETE ON knowledge_passages BEGIN
  DELETE FROM knowledge_passages_words WHERE rowid = OLD.rowid;
END;
--> statement-breakpoint
-- Embeddings (optional, src/knowledge/embeddings.ts): the model and dimensions of the vectors in
-- knowledge_vectors (a sqlite-vec table made at run time, once the dimensions are known) and the highest
-- passage rowid embedded so far.
CREATE TABLE knowledge_embedding_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  model TEXT NOT NULL,
  dimensions INTEGER,
  embedded_upto INTEGER NOT NULL DEFAULT 0
);
--> statement-breakpoint
-- vectors of deleted passages, removed by the embedding job (no trigger here may touch the vec0 table:
-- connections without the sqlite-vec extension also delete passages)
CREATE TABLE knowledge_vector_deletes (passage_rowid INTEGER PRIMARY KEY);
--> statement-breakpoint
CREATE TRIGGER knowledge_vector_deletes_insert AFTER DELETE ON knowledge_passages
  WHEN OLD.rowid <= (SELECT embedded_upto FROM knowledge_embedding_state WHERE id = 1) BEGIN
  INSERT OR IGNORE INTO knowledge_vector_deletes (passage_rowid) VALUES (OLD.rowid);
END;
