-- Keeps artifact_counts exact for every writer, as SQLite's triggers do (schema/migrations/0003): the unfiltered
-- artifact list total without a count scan. Concurrent inserts into one workspace queue on its counter row.
CREATE FUNCTION artifacts_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO artifact_counts (workspace_id, count) VALUES (NEW.workspace_id, 1)
      ON CONFLICT (workspace_id) DO UPDATE SET count = artifact_counts.count + 1;
  ELSE
    UPDATE artifact_counts SET count = count - 1 WHERE workspace_id = OLD.workspace_id;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER artifacts_count_insert AFTER INSERT ON artifacts FOR EACH ROW EXECUTE FUNCTION artifacts_count();
--> statement-breakpoint
CREATE TRIGGER artifacts_count_delete AFTER DELETE ON artifacts FOR EACH ROW EXECUTE FUNCTION artifacts_count();
