-- A third column of the word-pair index (src/knowledge/pairs.ts, pairs version 4): per pair, the first unit's end as
-- in `far` and the first character of the next unit (`head`: "weeks of parental" gives `weeks_o of_p`), so that a
-- query whose last word is one character (`resolve to a`) asks `to_a` exactly, where the pairs it begins are a prefix
-- of hundreds of thousands of postings. FTS5 cannot add a column: the index is made again, empty; the index worker
-- fills it from the first passage (src/knowledge/indexer.ts empties the run index and the vocabulary with it, the
-- version of the tokens having changed), and searches use the trigram index above its mark meanwhile.
DROP TABLE knowledge_passages_pairs;
--> statement-breakpoint
CREATE VIRTUAL TABLE knowledge_passages_pairs USING fts5(
  near,
  far,
  head,
  content = '',
  contentless_delete = 1,
  tokenize = "ascii tokenchars '_|'"
);
--> statement-breakpoint
UPDATE knowledge_pairs_state SET indexed_through = 0;
