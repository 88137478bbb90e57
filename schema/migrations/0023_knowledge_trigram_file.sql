-- The trigram index moves to a database file of its own (src/knowledge/trigrams.ts), written by a thread of its own
-- beside the index worker: SQLite has one writer per file, and the trigram index was most of an ingest's CPU.
-- That file is derived from the passages and made again whenever it does not match this one (its generation).
DROP TRIGGER knowledge_passages_fts_delete;--> statement-breakpoint
DROP TABLE knowledge_passages_fts;--> statement-breakpoint
-- `generation` names this database for its trigram file; `rowid_high` is the highest passage rowid ever deleted:
-- new passages take rowids above it (src/knowledge/passages.ts), so a rowid left in the trigram file by a deleted
-- passage never names another one
CREATE TABLE knowledge_trigram_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  generation TEXT NOT NULL,
  rowid_high INTEGER NOT NULL
);--> statement-breakpoint
INSERT INTO knowledge_trigram_state (id, generation, rowid_high)
  SELECT 1, lower(hex(randomblob(16))), coalesce(max(rowid), 0) FROM knowledge_passages;--> statement-breakpoint
-- the passages deleted, in order, for the trigram file to delete too (it keeps how far it has come)
CREATE TABLE knowledge_trigram_deletes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  passage_rowid INTEGER NOT NULL
);--> statement-breakpoint
CREATE TRIGGER knowledge_trigram_deletes_insert AFTER DELETE ON knowledge_passages BEGIN
  INSERT INTO knowledge_trigram_deletes (passage_rowid) VALUES (OLD.rowid);
  UPDATE knowledge_trigram_state SET rowid_high = OLD.rowid WHERE rowid_high < OLD.rowid;
END;
