CREATE TABLE `application_module` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`key` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `application_module_key_uq` ON `application_module` (`key`);--> statement-breakpoint
CREATE INDEX `application_module_name_idx` ON `application_module` (`name`);--> statement-breakpoint
CREATE TABLE `school_module` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`module_id` integer NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`updated_by` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`module_id`) REFERENCES `application_module`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`updated_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `school_module_uq` ON `school_module` (`school_id`,`module_id`);--> statement-breakpoint
CREATE INDEX `school_module_module_idx` ON `school_module` (`module_id`);--> statement-breakpoint
CREATE TABLE `school_schedule` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`level` text NOT NULL,
	`weekday` integer NOT NULL,
	`entry_time` text NOT NULL,
	`dismissal_time` text NOT NULL,
	`after_school_end_time` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `school_schedule_level_weekday_uq` ON `school_schedule` (`school_id`,`level`,`weekday`);--> statement-breakpoint
CREATE INDEX `school_schedule_weekday_idx` ON `school_schedule` (`school_id`,`weekday`,`level`);