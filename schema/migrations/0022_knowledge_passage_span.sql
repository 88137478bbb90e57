ALTER TABLE `knowledge_documents` ADD `first_passage_rowid` integer;--> statement-breakpoint
ALTER TABLE `knowledge_documents` ADD `last_passage_rowid` integer;--> statement-breakpoint
-- the documents indexed before: their passages' lowest and highest rowids (each document's passages are read from
-- the (document_id, chunk_index) index, rowid included)
UPDATE `knowledge_documents` SET
  `first_passage_rowid` = (SELECT min(p.rowid) FROM `knowledge_passages` p WHERE p.document_id = `knowledge_documents`.id),
  `last_passage_rowid` = (SELECT max(p.rowid) FROM `knowledge_passages` p WHERE p.document_id = `knowledge_documents`.id);
