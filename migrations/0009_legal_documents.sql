CREATE TABLE `legal_document_acceptance` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`user_id` integer NOT NULL,
	`legal_document_id` integer NOT NULL,
	`accepted_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`legal_document_id`) REFERENCES `legal_document`(`id`) ON UPDATE no action ON DELETE restrict
);
--> statement-breakpoint
CREATE UNIQUE INDEX `legal_document_acceptance_uq` ON `legal_document_acceptance` (`user_id`,`legal_document_id`);--> statement-breakpoint
CREATE INDEX `legal_document_acceptance_document_idx` ON `legal_document_acceptance` (`legal_document_id`);--> statement-breakpoint
CREATE TABLE `legal_document` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`kind` text NOT NULL,
	`version` integer NOT NULL,
	`title` text NOT NULL,
	`body` text NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`published_at` text,
	CONSTRAINT "legal_document_published_ck" CHECK(("legal_document"."status" = 'published') = ("legal_document"."published_at" IS NOT NULL))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `legal_document_version_uq` ON `legal_document` (`kind`,`version`);--> statement-breakpoint
CREATE INDEX `legal_document_created_idx` ON `legal_document` (`created_at`);--> statement-breakpoint
CREATE INDEX `legal_document_kind_idx` ON `legal_document` (`kind`,`created_at`);--> statement-breakpoint
CREATE INDEX `legal_document_status_idx` ON `legal_document` (`status`,`created_at`);