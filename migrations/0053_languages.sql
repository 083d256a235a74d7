ALTER TABLE `bulk_process` ADD `language` text DEFAULT 'en' NOT NULL;--> statement-breakpoint
ALTER TABLE `school` ADD `language` text DEFAULT 'es' NOT NULL;