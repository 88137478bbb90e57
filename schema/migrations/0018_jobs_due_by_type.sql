DROP INDEX `jobs_due_idx`;--> statement-breakpoint
CREATE INDEX `jobs_due_idx` ON `jobs` (`status`,`type`,`run_at`);