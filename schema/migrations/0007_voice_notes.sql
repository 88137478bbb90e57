CREATE TABLE `voice_audio` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`mime_type` text NOT NULL,
	`size` integer NOT NULL,
	`path` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `voice_notes` (
	`id` text PRIMARY KEY NOT NULL,
	`customer_id` text NOT NULL,
	`user_id` text NOT NULL,
	`workspace_id` text,
	`title` text NOT NULL,
	`audio_url` text NOT NULL,
	`duration` real NOT NULL,
	`mime_type` text NOT NULL,
	`metadata` text NOT NULL,
	`tags` text NOT NULL,
	`status` text NOT NULL,
	`transcript` text,
	`transcript_segments` text,
	`error` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text,
	FOREIGN KEY (`customer_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `voice_notes_user_idx` ON `voice_notes` (`user_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `voice_notes_status_idx` ON `voice_notes` (`status`);