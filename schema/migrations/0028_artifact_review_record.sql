ALTER TABLE `artifacts` ADD `revision` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `artifacts` ADD `status_set_by` text;--> statement-breakpoint
ALTER TABLE `artifacts` ADD `reviewed_revision` integer;--> statement-breakpoint
ALTER TABLE `artifacts` ADD `reviewed_sha256` text;