CREATE INDEX `bulk_process_running_idx` ON `bulk_process` (`status`,`started_at`);--> statement-breakpoint
CREATE INDEX `queue_receipt_created_idx` ON `queue_receipt` (`created_at`);