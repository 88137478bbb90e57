-- The word index of substring search (src/knowledge/runs.ts): each passage's runs of letters, digits and marks,
-- folded as the trigram index folds case, made in JavaScript, without positions; and their vocabulary, every run
-- of 3+ characters ever indexed, once, under a trigram index of its own. A substring query of one word asks the vocabulary for the
-- words that hold it (a few among thousands) and the passages for any of them: its matches exactly, where the
-- trigram index read every passage holding its commonest part ("separation": 326 passages, 97,453 with "separat").
-- Filled with the pair index, by the index worker when idle, up to knowledge_pairs_state.indexed_through.
CREATE VIRTUAL TABLE knowledge_passages_runs USING fts5(
  runs,
  content = '',
  contentless_delete = 1,
  detail = none,
  tokenize = 'ascii'
);
--> statement-breakpoint
-- never shrinks with the passages (a word no passage holds any more only costs its look-up); emptied when the
-- indexes are made again (src/knowledge/indexer.ts)
CREATE TABLE knowledge_run_terms (
  id INTEGER PRIMARY KEY,
  term TEXT NOT NULL UNIQUE
);
--> statement-breakpoint
CREATE VIRTUAL TABLE knowledge_run_terms_fts USING fts5(
  term,
  content = 'knowledge_run_terms',
  content_rowid = 'id',
  tokenize = 'trigram case_sensitive 1'
);
--> statement-breakpoint
DROP TRIGGER knowledge_passages_pairs_delete;
--> statement-breakpoint
CREATE TRIGGER knowledge_passages_pairs_delete AFTER DELETE ON knowledge_passages BEGIN
  DELETE FROM knowledge_passages_pairs WHERE rowid = OLD.rowid;
  DELETE FROM knowledge_passages_runs WHERE rowid = OLD.rowid;
  UPDATE knowledge_pairs_state SET indexed_through = (SELECT coalesce(max(rowid), 0) FROM knowledge_passages)
    WHERE indexed_through > (SELECT coalesce(max(rowid), 0) FROM knowledge_passages);
END;
--> statement-breakpoint
-- both are filled again from the first passage (the index worker, in the background; searches use the trigram
-- index above the mark meanwhile)
INSERT INTO knowledge_passages_pairs (knowledge_passages_pairs) VALUES ('delete-all');
--> statement-breakpoint
UPDATE knowledge_pairs_state SET indexed_through = 0;
