CREATE TABLE `workflow_run_counts` (
	`customer_id` text PRIMARY KEY NOT NULL,
	`count` integer NOT NULL,
	FOREIGN KEY (`customer_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `workflow_runs_customer_idx` ON `workflow_runs` (`customer_id`,`status`,`created_at`);--> statement-breakpoint
-- Keeps workflow_run_counts exact for every writer (a workflow's cascade too): the runs quota without a count scan.
INSERT INTO workflow_run_counts (customer_id, count)
  SELECT customer_id, COUNT(*) FROM workflow_runs GROUP BY customer_id;
--> statement-breakpoint
CREATE TRIGGER workflow_runs_count_insert AFTER INSERT ON workflow_runs BEGIN
  INSERT INTO workflow_run_counts (customer_id, count) VALUES (NEW.customer_id, 1)
    ON CONFLICT (customer_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER workflow_runs_count_delete AFTER DELETE ON workflow_runs BEGIN
  UPDATE workflow_run_counts SET count = count - 1 WHERE customer_id = OLD.customer_id;
END;
