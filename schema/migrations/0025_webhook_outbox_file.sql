-- the outbox thread's tables move to a file of their own (cairn-outbox.db, src/db/outbox-file.ts): kept here
-- under another name until the first start moves their rows there and drops them
ALTER TABLE `webhook_deliveries` RENAME TO `moved_webhook_deliveries`;--> statement-breakpoint
ALTER TABLE `webhook_messages` RENAME TO `moved_webhook_messages`;--> statement-breakpoint
DROP INDEX `webhook_events_outbox_idx`;
