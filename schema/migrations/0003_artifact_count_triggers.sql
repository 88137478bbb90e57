-- Keeps artifact_counts exact for every writer: the unfiltered artifact list total without a count scan.
INSERT INTO artifact_counts (workspace_id, count)
  SELECT workspace_id, COUNT(*) FROM artifacts GROUP BY workspace_id;
--> statement-breakpoint
CREATE TRIGGER artifacts_count_insert AFTER INSERT ON artifacts BEGIN
  INSERT INTO artifact_counts (workspace_id, count) VALUES (NEW.workspace_id, 1)
    ON CONFLICT (workspace_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER artifacts_count_delete AFTER DELETE ON artifacts BEGIN
  UPDATE artifact_counts SET count = count - 1 WHERE workspace_id = OLD.workspace_id;
END;
