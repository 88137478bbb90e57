CREATE TABLE `outbox_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`expanded_through` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`message_id` text,
	`attempt` integer DEFAULT 1 NOT NULL,
	`next_attempt_at` text,
	`event_type` text NOT NULL,
	`status_code` integer NOT NULL,
	`success` integer NOT NULL,
	`latency_ms` integer NOT NULL,
	`request_body` text NOT NULL,
	`response_body` text NOT NULL,
	`error` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_hook_idx` ON `webhook_deliveries` (`webhook_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_created_idx` ON `webhook_deliveries` (`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_messages` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`event_seq` integer NOT NULL,
	`webhook_id` text NOT NULL,
	`state` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_messages_id_unique` ON `webhook_messages` (`id`);--> statement-breakpoint
CREATE INDEX `webhook_messages_pending_idx` ON `webhook_messages` (`seq`) WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX `webhook_messages_event_idx` ON `webhook_messages` (`event_seq`);--> statement-breakpoint
CREATE INDEX `webhook_messages_hook_idx` ON `webhook_messages` (`webhook_id`);