ALTER TABLE `workflow_runs` ADD `definition` text;--> statement-breakpoint
CREATE INDEX `workflow_runs_trigger_idx` ON `workflow_runs` (`workflow_id`,`trigger`,`created_at`);