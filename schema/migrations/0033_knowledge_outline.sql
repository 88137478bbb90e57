ALTER TABLE `knowledge_documents` ADD `title` text;--> statement-breakpoint
CREATE INDEX `knowledge_docs_untitled_idx` ON `knowledge_documents` (`id`) WHERE "knowledge_documents"."title" IS NULL;--> statement-breakpoint
ALTER TABLE `knowledge_passages` ADD `heading_path` text;