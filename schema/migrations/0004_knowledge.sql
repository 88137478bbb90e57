CREATE TABLE `knowledge_document_tags` (
	`document_id` text NOT NULL,
	`tag` text NOT NULL,
	PRIMARY KEY(`document_id`, `tag`),
	FOREIGN KEY (`document_id`) REFERENCES `knowledge_documents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `knowledge_tags_tag_idx` ON `knowledge_document_tags` (`tag`,`document_id`);--> statement-breakpoint
CREATE TABLE `knowledge_documents` (
	`id` text PRIMARY KEY NOT NULL,
	`customer_id` text NOT NULL,
	`workspace_id` text,
	`owner_id` text NOT NULL,
	`scope` text NOT NULL,
	`file_name` text NOT NULL,
	`file_type` text NOT NULL,
	`file_size` integer NOT NULL,
	`sha256` text NOT NULL,
	`category` text NOT NULL,
	`tags` text NOT NULL,
	`metadata` text NOT NULL,
	`text_length` integer NOT NULL,
	`chunk_count` integer NOT NULL,
	`chunk_size` integer NOT NULL,
	`chunk_overlap` integer NOT NULL,
	`indexed_count` integer NOT NULL,
	`status` text NOT NULL,
	`original_path` text,
	`text_path` text NOT NULL,
	`uploaded_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`customer_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `knowledge_docs_org_idx` ON `knowledge_documents` (`customer_id`,`scope`,`uploaded_at`);--> statement-breakpoint
CREATE INDEX `knowledge_docs_ws_idx` ON `knowledge_documents` (`workspace_id`,`uploaded_at`);--> statement-breakpoint
CREATE INDEX `knowledge_docs_owner_idx` ON `knowledge_documents` (`owner_id`,`uploaded_at`);--> statement-breakpoint
CREATE INDEX `knowledge_docs_status_idx` ON `knowledge_documents` (`status`);--> statement-breakpoint
CREATE TABLE `knowledge_passages` (
	`rowid` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`document_id` text NOT NULL,
	`chunk_index` integer NOT NULL,
	`text` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `knowledge_passages_id_idx` ON `knowledge_passages` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `knowledge_passages_doc_idx` ON `knowledge_passages` (`document_id`,`chunk_index`);