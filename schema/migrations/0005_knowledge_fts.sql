-- Full-text index of passages: trigram tokens give case-insensitive (Unicode-folding) substring matching
-- for queries of 3+ characters. External content: the text is stored once, in knowledge_passages.
CREATE VIRTUAL TABLE knowledge_passages_fts USING fts5(
  text,
  content = 'knowledge_passages',
  content_rowid = 'rowid',
  tokenize = 'trigram case_sensitive 0'
);
--> statement-breakpoint
CREATE TRIGGER knowledge_passages_fts_insert AFTER INSERT ON knowledge_passages BEGIN
  INSERT INTO knowledge_passages_fts (rowid, text) VALUES (NEW.rowid, NEW.text);
END;
--> statement-breakpoint
CREATE TRIGGER knowledge_passages_fts_delete AFTER DELETE ON knowledge_passages BEGIN
  INSERT INTO knowledge_passages_fts (knowledge_passages_fts, rowid, text) VALUES ('delete', OLD.rowid, OLD.text);
END;
