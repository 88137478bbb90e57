-- What the SQLite schema keeps by triggers for knowledge search (schema/migrations/0017 and 0027), kept the same way
-- here in the statement that writes a document or its tags, whichever process writes:
-- knowledge_listing_versions, a version per organization of its documents and tags (listing caches and search
-- figures are used only while it is unchanged), and knowledge_reader_shares, each organization's passages by scope
-- and workspace or owner ('' when not the scope's) — how many passages a reader reads, BM25's N.
CREATE TABLE knowledge_listing_versions (
	customer_id text PRIMARY KEY NOT NULL,
	version bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE knowledge_reader_shares (
	customer_id text NOT NULL,
	scope text NOT NULL,
	workspace text NOT NULL,
	owner text NOT NULL,
	passages bigint NOT NULL,
	PRIMARY KEY (customer_id, scope, workspace, owner)
);
--> statement-breakpoint
CREATE FUNCTION knowledge_listing_bump(org text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO knowledge_listing_versions (customer_id, version) VALUES (org, 1)
    ON CONFLICT (customer_id) DO UPDATE SET version = knowledge_listing_versions.version + 1
$$;
--> statement-breakpoint
CREATE FUNCTION knowledge_share_add(org text, s text, ws text, own text, n bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO knowledge_reader_shares (customer_id, scope, workspace, owner, passages)
    VALUES (org, s, CASE s WHEN 'workspace' THEN coalesce(ws, '') ELSE '' END,
      CASE s WHEN 'personal' THEN coalesce(own, '') ELSE '' END, n)
    ON CONFLICT (customer_id, scope, workspace, owner)
    DO UPDATE SET passages = knowledge_reader_shares.passages + excluded.passages;
  DELETE FROM knowledge_reader_shares WHERE customer_id = org AND passages <= 0
$$;
--> statement-breakpoint
CREATE FUNCTION knowledge_documents_figures() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM knowledge_listing_bump(OLD.customer_id);
    PERFORM knowledge_share_add(OLD.customer_id, OLD.scope, OLD.workspace_id, OLD.owner_id, -OLD.chunk_count);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    IF TG_OP = 'INSERT' OR NEW.customer_id IS DISTINCT FROM OLD.customer_id THEN
      PERFORM knowledge_listing_bump(NEW.customer_id);
    END IF;
    PERFORM knowledge_share_add(NEW.customer_id, NEW.scope, NEW.workspace_id, NEW.owner_id, NEW.chunk_count);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER knowledge_documents_figures AFTER INSERT OR UPDATE OR DELETE ON knowledge_documents
  FOR EACH ROW EXECUTE FUNCTION knowledge_documents_figures();
--> statement-breakpoint
CREATE FUNCTION knowledge_tags_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM knowledge_listing_bump(d.customer_id) FROM knowledge_documents d
    WHERE d.id IN (CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE OLD.document_id END,
      CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE NEW.document_id END);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER knowledge_tags_version AFTER INSERT OR UPDATE OR DELETE ON knowledge_document_tags
  FOR EACH ROW EXECUTE FUNCTION knowledge_tags_version();
