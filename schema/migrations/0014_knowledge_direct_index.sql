-- Passages are indexed by their writer (src/knowledge/indexer.ts, passageWriter), not by row triggers: the
-- writer looks the document's readers token up once per document and inserts into both FTS5 tables
-- itself, which costs about a fifth less CPU per passage than the two AFTER INSERT triggers (each with a
-- readers look-up per row). The delete triggers stay: purges and any other delete keep the indexes whole.
DROP TRIGGER knowledge_passages_fts_insert;
--> statement-breakpoint
DROP TRIGGER knowledge_passages_words_insert;
