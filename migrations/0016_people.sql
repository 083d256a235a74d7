-- parent was created empty and unused (no data to carry): recreated with its new columns.
DROP TABLE `parent`;--> statement-breakpoint
CREATE TABLE `parent` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`family_id` integer,
	`relationship` text DEFAULT 'guardian' NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`family_id`) REFERENCES `family`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE TABLE `administrative_user` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`position` text DEFAULT '' NOT NULL,
	`employee_number` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `administrative_user_user_uq` ON `administrative_user` (`school_id`,`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `administrative_user_employee_number_uq` ON `administrative_user` (`school_id`,`employee_number`);--> statement-breakpoint
CREATE TABLE `delegate` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`parent_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`valid_from` text NOT NULL,
	`valid_until` text NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `parent`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "delegate_dates_ck" CHECK("delegate"."valid_from" <= "delegate"."valid_until")
);
--> statement-breakpoint
CREATE UNIQUE INDEX `delegate_uq` ON `delegate` (`school_id`,`parent_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `delegate_user_idx` ON `delegate` (`user_id`,`valid_until`);--> statement-breakpoint
CREATE INDEX `delegate_created_idx` ON `delegate` (`school_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `teacher` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`subjects` text DEFAULT '[]' NOT NULL,
	`employee_number` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `teacher_user_uq` ON `teacher` (`school_id`,`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `teacher_employee_number_uq` ON `teacher` (`school_id`,`employee_number`);--> statement-breakpoint
CREATE TABLE `school_user` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`deleted_at` text,
	`invited_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `school_user_uq` ON `school_user` (`school_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `school_user_created_idx` ON `school_user` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `school_user_user_idx` ON `school_user` (`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `parent_user_uq` ON `parent` (`school_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `parent_family_idx` ON `parent` (`family_id`);--> statement-breakpoint
ALTER TABLE `user` ADD `deleted_at` text;--> statement-breakpoint
-- Whoever holds a role in a school is one of its people: a role given (again) makes (or restores)
-- the membership, so no write path can forget it.
INSERT INTO `school_user` (`school_id`, `user_id`, `created_at`, `updated_at`)
  SELECT `school_id`, `user_id`, MIN(`created_at`), MIN(`created_at`) FROM `role_user` GROUP BY `school_id`, `user_id`;--> statement-breakpoint
CREATE TRIGGER `role_user_member` AFTER INSERT ON `role_user` BEGIN
  INSERT INTO `school_user` (`school_id`, `user_id`, `created_at`, `updated_at`)
    VALUES (NEW.`school_id`, NEW.`user_id`, NEW.`created_at`, NEW.`updated_at`)
    ON CONFLICT (`school_id`, `user_id`) DO UPDATE SET `deleted_at` = NULL, `updated_at` = excluded.`updated_at`
    WHERE `school_user`.`deleted_at` IS NOT NULL;
END;