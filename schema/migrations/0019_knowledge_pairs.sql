-- Word-pair index of passages (src/knowledge/pairs.ts): per pair of neighbouring words, the first word's end and the
-- next word ("ks_of of_parental al_leave" with 2 characters of the end in `near`, 6 in `far`), made in JavaScript. A
-- substring query of several words is answered from a phrase of its pairs, not a walk over its trigrams. Contentless:
-- the tokens are not kept. Filled by the index worker after indexing, in rowid order: every passage up to
-- `indexed_through` is in it; newer ones are searched through the trigram index.
CREATE VIRTUAL TABLE knowledge_passages_pairs USING fts5(
  near,
  far,
  content = '',
  contentless_delete = 1,
  tokenize = "ascii tokenchars '_|'"
);
--> statement-breakpoint
CREATE TABLE knowledge_pairs_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_through INTEGER NOT NULL
);
--> statement-breakpoint
INSERT INTO knowledge_pairs_state (id, indexed_through) VALUES (1, 0);
--> statement-breakpoint
-- A deleted passage leaves the index. When the newest passages go, a new one may take a rowid again (SQLite gives
-- max(rowid) + 1): the mark comes down to the newest remaining passage, so that it is indexed.
CREATE TRIGGER knowledge_passages_pairs_delete AFTER DELETE ON knowledge_passages BEGIN
  DELETE FROM knowledge_passages_pairs WHERE rowid = OLD.rowid;
  UPDATE knowledge_pairs_state SET indexed_through = (SELECT coalesce(max(rowid), 0) FROM knowledge_passages)
    WHERE indexed_through > (SELECT coalesce(max(rowid), 0) FROM knowledge_passages);
END;
