-- What made the pair index's tokens: the Unicode version of Node.js (which splits words) and SQLite's version
-- (whose case folding they follow). Another pair at start empties the index for the worker to fill again;
-- empty here, so an index made before this column is made again once.
ALTER TABLE knowledge_pairs_state ADD COLUMN made_with TEXT NOT NULL DEFAULT '';
