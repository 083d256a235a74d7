CREATE INDEX `bulk_process_document_idx` ON `bulk_process` (`document_id`);--> statement-breakpoint
CREATE INDEX `document_created_idx` ON `document` (`school_id`,`created_at`);