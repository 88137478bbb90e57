-- Each organization's passages by who may read them (src/knowledge/search.ts, words search's estimate of how many
-- passages a reader reads): per scope, its workspace (scope 'workspace') or owner (scope 'personal'), '' otherwise,
-- kept by these triggers in the statement that writes a document. Summed at search time from the documents instead,
-- it cost a read of every document of the organization (2 ms at 5,000 documents, 20 ms on a dropped page cache; 0.4
-- and 4 s at a million), at each worker's start and again each time the organization's documents had changed.
CREATE TABLE `knowledge_reader_shares` (
	`customer_id` text NOT NULL,
	`scope` text NOT NULL,
	`workspace` text NOT NULL,
	`owner` text NOT NULL,
	`passages` integer NOT NULL,
	PRIMARY KEY(`customer_id`, `scope`, `workspace`, `owner`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO knowledge_reader_shares (customer_id, scope, workspace, owner, passages)
  SELECT customer_id, scope,
    CASE scope WHEN 'workspace' THEN coalesce(workspace_id, '') ELSE '' END,
    CASE scope WHEN 'personal' THEN coalesce(owner_id, '') ELSE '' END,
    sum(chunk_count)
  FROM knowledge_documents GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
CREATE TRIGGER knowledge_reader_shares_insert AFTER INSERT ON knowledge_documents BEGIN
  INSERT INTO knowledge_reader_shares (customer_id, scope, workspace, owner, passages)
    VALUES (NEW.customer_id, NEW.scope,
      CASE NEW.scope WHEN 'workspace' THEN coalesce(NEW.workspace_id, '') ELSE '' END,
      CASE NEW.scope WHEN 'personal' THEN coalesce(NEW.owner_id, '') ELSE '' END,
      NEW.chunk_count)
    ON CONFLICT (customer_id, scope, workspace, owner) DO UPDATE SET passages = passages + excluded.passages;
END;
--> statement-breakpoint
CREATE TRIGGER knowledge_reader_shares_delete AFTER DELETE ON knowledge_documents BEGIN
  UPDATE knowledge_reader_shares SET passages = passages - OLD.chunk_count
    WHERE customer_id = OLD.customer_id AND scope = OLD.scope
      AND workspace = CASE OLD.scope WHEN 'workspace' THEN coalesce(OLD.workspace_id, '') ELSE '' END
      AND owner = CASE OLD.scope WHEN 'personal' THEN coalesce(OLD.owner_id, '') ELSE '' END;
  DELETE FROM knowledge_reader_shares WHERE customer_id = OLD.customer_id AND passages <= 0;
END;
--> statement-breakpoint
CREATE TRIGGER knowledge_reader_shares_update
  AFTER UPDATE OF customer_id, scope, workspace_id, owner_id, chunk_count ON knowledge_documents BEGIN
  UPDATE knowledge_reader_shares SET passages = passages - OLD.chunk_count
    WHERE customer_id = OLD.customer_id AND scope = OLD.scope
      AND workspace = CASE OLD.scope WHEN 'workspace' THEN coalesce(OLD.workspace_id, '') ELSE '' END
      AND owner = CASE OLD.scope WHEN 'personal' THEN coalesce(OLD.owner_id, '') ELSE '' END;
  INSERT INTO knowledge_reader_shares (customer_id, scope, workspace, owner, passages)
    VALUES (NEW.customer_id, NEW.scope,
      CASE NEW.scope WHEN 'workspace' THEN coalesce(NEW.workspace_id, '') ELSE '' END,
      CASE NEW.scope WHEN 'personal' THEN coalesce(NEW.owner_id, '') ELSE '' END,
      NEW.chunk_count)
    ON CONFLICT (customer_id, scope, workspace, owner) DO UPDATE SET passages = passages + excluded.passages;
  DELETE FROM knowledge_reader_shares WHERE customer_id = OLD.customer_id AND passages <= 0;
END;
