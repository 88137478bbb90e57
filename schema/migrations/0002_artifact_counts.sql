CREATE TABLE `artifact_counts` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`count` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
