CREATE TABLE `artifact_comments` (
	`id` text PRIMARY KEY NOT NULL,
	`artifact_id` text NOT NULL,
	`user_id` text NOT NULL,
	`content` text NOT NULL,
	`position` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`artifact_id`) REFERENCES `artifacts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `artifact_comments_artifact_idx` ON `artifact_comments` (`artifact_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `artifact_tombstones` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`parent_artifact_id` text,
	`deleted_at` text NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `artifact_tombstones_parent_idx` ON `artifact_tombstones` (`parent_artifact_id`);--> statement-breakpoint
CREATE TABLE `artifacts` (
	`id` text PRIMARY KEY NOT NULL,
	`customer_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`type` text NOT NULL,
	`subtype` text,
	`title` text NOT NULL,
	`content` text NOT NULL,
	`status` text NOT NULL,
	`workflow_id` text,
	`workflow_run_id` text,
	`conversation_id` text,
	`message_id` text,
	`parent_artifact_id` text,
	`related_artifacts` text NOT NULL,
	`confidence_score` real,
	`review_policy` text NOT NULL,
	`reviewed_by` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`customer_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `artifacts_ws_created_idx` ON `artifacts` (`workspace_id`,`customer_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `artifacts_ws_type_idx` ON `artifacts` (`workspace_id`,`customer_id`,`type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `artifacts_ws_status_idx` ON `artifacts` (`workspace_id`,`customer_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `artifacts_ws_workflow_idx` ON `artifacts` (`workspace_id`,`customer_id`,`workflow_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `artifacts_ws_run_idx` ON `artifacts` (`workspace_id`,`customer_id`,`workflow_run_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `artifacts_ws_conversation_idx` ON `artifacts` (`workspace_id`,`customer_id`,`conversation_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `artifacts_ws_message_idx` ON `artifacts` (`workspace_id`,`customer_id`,`message_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `artifacts_parent_idx` ON `artifacts` (`parent_artifact_id`);