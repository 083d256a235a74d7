CREATE TABLE `trusted_address` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`parent_id` integer,
	`street` text NOT NULL,
	`number` text,
	`neighborhood` text,
	`city` text NOT NULL,
	`state` text,
	`postal_code` text,
	`country` text NOT NULL,
	`latitude` real,
	`longitude` real,
	`route_stop_id` integer,
	`status` text DEFAULT 'pending' NOT NULL,
	`decided_by` integer,
	`decided_at` text,
	`reason` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `parent`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`decided_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "trusted_address_decided_ck" CHECK("trusted_address"."status" = 'pending' OR "trusted_address"."decided_at" IS NOT NULL)
);
--> statement-breakpoint
CREATE INDEX `trusted_address_created_idx` ON `trusted_address` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `trusted_address_status_idx` ON `trusted_address` (`school_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `trusted_address_student_idx` ON `trusted_address` (`student_id`,`status`);--> statement-breakpoint
CREATE INDEX `trusted_address_parent_idx` ON `trusted_address` (`parent_id`);--> statement-breakpoint
CREATE TABLE `trusted_person` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`parent_id` integer,
	`name` text NOT NULL,
	`relationship` text NOT NULL,
	`phone` text NOT NULL,
	`photo` text,
	`id_document` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`decided_by` integer,
	`decided_at` text,
	`reason` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `parent`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`decided_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "trusted_person_decided_ck" CHECK("trusted_person"."status" = 'pending' OR "trusted_person"."decided_at" IS NOT NULL)
);
--> statement-breakpoint
CREATE INDEX `trusted_person_created_idx` ON `trusted_person` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `trusted_person_status_idx` ON `trusted_person` (`school_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `trusted_person_student_idx` ON `trusted_person` (`student_id`,`status`);--> statement-breakpoint
CREATE INDEX `trusted_person_parent_idx` ON `trusted_person` (`parent_id`);