CREATE TABLE `developer_log_chunks` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`api_key_id` text,
	`categories` text NOT NULL,
	`first_at` text NOT NULL,
	`last_at` text NOT NULL,
	`count` integer NOT NULL,
	`entries` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `developer_log_chunks_user_idx` ON `developer_log_chunks` (`user_id`,`seq`);--> statement-breakpoint
CREATE INDEX `developer_log_chunks_key_idx` ON `developer_log_chunks` (`api_key_id`,`seq`);--> statement-breakpoint
CREATE INDEX `developer_log_chunks_last_idx` ON `developer_log_chunks` (`last_at`);--> statement-breakpoint
-- entries written before chunks: one chunk each, in their order
INSERT INTO `developer_log_chunks` (`user_id`, `api_key_id`, `categories`, `first_at`, `last_at`, `count`, `entries`)
SELECT `user_id`, `api_key_id`, ',' || `category` || ',', `created_at`, `created_at`, 1,
  json_array(json_array(`id`, `category`, `action`, `method`, `path`, `status_code`, `duration_ms`, json(`metadata`), `created_at`))
FROM `developer_logs` ORDER BY `seq`;--> statement-breakpoint
DROP TABLE `developer_logs`;