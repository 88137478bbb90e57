CREATE TABLE `login_failures` (
	`key` text PRIMARY KEY NOT NULL,
	`failures` integer NOT NULL,
	`locked_until` integer NOT NULL,
	`last_failure` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `login_failures_last_idx` ON `login_failures` (`last_failure`);