CREATE TABLE `webhook_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` text NOT NULL,
	`event` text NOT NULL,
	`body` text NOT NULL,
	`expanded` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_events_outbox_idx` ON `webhook_events` (`seq`) WHERE expanded = 0;--> statement-breakpoint
CREATE INDEX `webhook_events_created_idx` ON `webhook_events` (`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_messages` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`event_seq` integer NOT NULL,
	`webhook_id` text NOT NULL,
	`state` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`event_seq`) REFERENCES `webhook_events`(`seq`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_messages_id_unique` ON `webhook_messages` (`id`);--> statement-breakpoint
CREATE INDEX `webhook_messages_pending_idx` ON `webhook_messages` (`seq`) WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX `webhook_messages_event_idx` ON `webhook_messages` (`event_seq`);--> statement-breakpoint
CREATE INDEX `webhook_messages_hook_idx` ON `webhook_messages` (`webhook_id`);--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `message_id` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `attempt` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `next_attempt_at` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `previous_signing_secret` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `previous_secret_expires_at` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `failing_since` text;