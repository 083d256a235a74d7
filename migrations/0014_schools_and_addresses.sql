CREATE TABLE `address` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`street` text NOT NULL,
	`number` text,
	`neighborhood` text,
	`city` text NOT NULL,
	`state` text,
	`postal_code` text,
	`country` text NOT NULL,
	`latitude` real,
	`longitude` real,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `address_created_idx` ON `address` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `address_city_idx` ON `address` (`school_id`,`city`);--> statement-breakpoint
ALTER TABLE `school` ADD `levels` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `school` ADD `email` text;--> statement-breakpoint
ALTER TABLE `school` ADD `phone` text;--> statement-breakpoint
ALTER TABLE `school` ADD `address_id` integer;--> statement-breakpoint
ALTER TABLE `school` ADD `logo` text;--> statement-breakpoint
CREATE INDEX `school_name_idx` ON `school` (`name`);--> statement-breakpoint
CREATE INDEX `school_created_idx` ON `school` (`created_at`);--> statement-breakpoint
CREATE INDEX `school_address_idx` ON `school` (`address_id`);