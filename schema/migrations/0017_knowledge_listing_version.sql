-- A version per organization of everything a knowledge listing page is made of (its documents and their tags),
-- raised by triggers in the statement that changes them, whichever connection or thread writes: the listing
-- cache (src/knowledge/listing-cache.ts) serves a rendered page only while its organization's version is the one
-- it was rendered at. Raw SQL: a table written by triggers alone, read by one prepared statement on a hot path.
CREATE TABLE `knowledge_listing_versions` (
	`customer_id` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TRIGGER knowledge_listing_documents_insert AFTER INSERT ON knowledge_documents BEGIN
  INSERT INTO knowledge_listing_versions (customer_id, version) VALUES (NEW.customer_id, 1)
    ON CONFLICT (customer_id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER knowledge_listing_documents_update AFTER UPDATE ON knowledge_documents BEGIN
  INSERT INTO knowledge_listing_versions (customer_id, version) VALUES (OLD.customer_id, 1)
    ON CONFLICT (customer_id) DO UPDATE SET version = version + 1;
  INSERT INTO knowledge_listing_versions (customer_id, version) SELECT NEW.customer_id, 1
    WHERE NEW.customer_id IS NOT OLD.customer_id
    ON CONFLICT (customer_id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER knowledge_listing_documents_delete AFTER DELETE ON knowledge_documents BEGIN
  INSERT INTO knowledge_listing_versions (customer_id, version) VALUES (OLD.customer_id, 1)
    ON CONFLICT (customer_id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER knowledge_listing_tags_insert AFTER INSERT ON knowledge_document_tags BEGIN
  INSERT INTO knowledge_listing_versions (customer_id, version)
    SELECT customer_id, 1 FROM knowledge_documents WHERE id = NEW.document_id
    ON CONFLICT (customer_id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER knowledge_listing_tags_update AFTER UPDATE ON knowledge_document_tags BEGIN
  INSERT INTO knowledge_listing_versions (customer_id, version)
    SELECT customer_id, 1 FROM knowledge_documents WHERE id IN (OLD.document_id, NEW.document_id)
    ON CONFLICT (customer_id) DO UPDATE SET version = version + 1;
END;
--> statement-breakpoint
CREATE TRIGGER knowledge_listing_tags_delete AFTER DELETE ON knowledge_document_tags BEGIN
  INSERT INTO knowledge_listing_versions (customer_id, version)
    SELECT customer_id, 1 FROM knowledge_documents WHERE id = OLD.document_id
    ON CONFLICT (customer_id) DO UPDATE SET version = version + 1;
END;
