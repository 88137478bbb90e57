ALTER TABLE `workflows` ADD `updated_by` text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE `workflows` SET `updated_by` = `created_by`;
