CREATE TABLE `workspace_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`customer_id` text NOT NULL,
	`workspace_id` text,
	`user_id` text,
	`channel_id` text,
	`name` text NOT NULL,
	`data` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`customer_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `workspace_events_customer_idx` ON `workspace_events` (`customer_id`,`id`);--> statement-breakpoint
CREATE INDEX `workspace_events_created_idx` ON `workspace_events` (`created_at`);