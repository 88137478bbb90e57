CREATE TABLE "workflow_run_counts" (
	"customer_id" text PRIMARY KEY NOT NULL,
	"count" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "workflow_run_counts" ADD CONSTRAINT "workflow_run_counts_customer_id_organizations_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "workflow_runs_customer_idx" ON "workflow_runs" USING btree ("customer_id","status","created_at");--> statement-breakpoint
-- Keeps workflow_run_counts exact for every writer, as SQLite's triggers do (schema/migrations/0034): the runs quota
-- without a count scan. Concurrent inserts of one organization queue on its counter row.
INSERT INTO workflow_run_counts (customer_id, count)
  SELECT customer_id, COUNT(*) FROM workflow_runs GROUP BY customer_id;
--> statement-breakpoint
CREATE FUNCTION workflow_runs_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO workflow_run_counts (customer_id, count) VALUES (NEW.customer_id, 1)
      ON CONFLICT (customer_id) DO UPDATE SET count = workflow_run_counts.count + 1;
  ELSE
    UPDATE workflow_run_counts SET count = count - 1 WHERE customer_id = OLD.customer_id;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER workflow_runs_count_insert AFTER INSERT ON workflow_runs FOR EACH ROW EXECUTE FUNCTION workflow_runs_count();
--> statement-breakpoint
CREATE TRIGGER workflow_runs_count_delete AFTER DELETE ON workflow_runs FOR EACH ROW EXECUTE FUNCTION workflow_runs_count();
