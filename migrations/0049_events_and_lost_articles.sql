CREATE TABLE `calendar_feed` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`family_id` integer,
	`nonce` text NOT NULL,
	`language` text NOT NULL,
	`created_by` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`family_id`) REFERENCES `family`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `calendar_feed_uq` ON `calendar_feed` (`school_id`, ifnull(`family_id`, 0));--> statement-breakpoint
CREATE INDEX `calendar_feed_created_idx` ON `calendar_feed` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `calendar_feed_family_idx` ON `calendar_feed` (`family_id`);--> statement-breakpoint
CREATE TABLE `event_audience` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`event_id` integer NOT NULL,
	`level` text,
	`group_id` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`event_id`) REFERENCES `event`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`group_id`) REFERENCES `school_group`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `event_audience_event_idx` ON `event_audience` (`event_id`);--> statement-breakpoint
CREATE INDEX `event_audience_group_idx` ON `event_audience` (`group_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `event_audience_uq` ON `event_audience` (`event_id`, ifnull(`level`, ''), ifnull(`group_id`, 0));--> statement-breakpoint
CREATE TABLE `event_reminder` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`event_id` integer NOT NULL,
	`minutes_before` integer NOT NULL,
	`send_at` text NOT NULL,
	`status` text DEFAULT 'scheduled' NOT NULL,
	`sent_at` text,
	`recipient_count` integer,
	`created_by` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`event_id`) REFERENCES `event`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `event_reminder_uq` ON `event_reminder` (`event_id`,`minutes_before`);--> statement-breakpoint
CREATE INDEX `event_reminder_school_idx` ON `event_reminder` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `event_reminder_due_idx` ON `event_reminder` (`send_at`) WHERE status = 'scheduled';--> statement-breakpoint
CREATE TABLE `event` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`title` text NOT NULL,
	`title_search` text DEFAULT '' NOT NULL,
	`description` text,
	`place` text,
	`start_local` text NOT NULL,
	`end_local` text NOT NULL,
	`time_zone` text NOT NULL,
	`starts_at` text NOT NULL,
	`ends_at` text NOT NULL,
	`for_school` integer DEFAULT false NOT NULL,
	`slug` text NOT NULL,
	`image` text,
	`status` text DEFAULT 'scheduled' NOT NULL,
	`sequence` integer DEFAULT 0 NOT NULL,
	`created_by` integer,
	`reminded_at` text,
	`cancelled_at` text,
	`cancelled_by` integer,
	`cancel_reason` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`cancelled_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `event_slug_uq` ON `event` (`slug`);--> statement-breakpoint
CREATE INDEX `event_start_idx` ON `event` (`school_id`,`start_local`,`id`);--> statement-breakpoint
CREATE INDEX `event_status_idx` ON `event` (`school_id`,`status`,`start_local`);--> statement-breakpoint
CREATE INDEX `event_created_idx` ON `event` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `event_school_feed_idx` ON `event` (`school_id`,`for_school`,`starts_at`);--> statement-breakpoint
CREATE TABLE `lost_article_reminder` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`lost_article_id` integer NOT NULL,
	`days_before` integer NOT NULL,
	`time` text NOT NULL,
	`send_at` text NOT NULL,
	`status` text DEFAULT 'scheduled' NOT NULL,
	`sent_at` text,
	`recipient_count` integer,
	`created_by` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`lost_article_id`) REFERENCES `lost_article`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lost_article_reminder_uq` ON `lost_article_reminder` (`lost_article_id`,`days_before`);--> statement-breakpoint
CREATE INDEX `lost_article_reminder_school_idx` ON `lost_article_reminder` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `lost_article_reminder_due_idx` ON `lost_article_reminder` (`send_at`) WHERE status = 'scheduled';--> statement-breakpoint
CREATE TABLE `lost_article` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`name` text NOT NULL,
	`name_search` text DEFAULT '' NOT NULL,
	`description` text,
	`category` text NOT NULL,
	`status` text DEFAULT 'found' NOT NULL,
	`found_on` text NOT NULL,
	`found_place` text,
	`donate_after` text NOT NULL,
	`photo` text,
	`created_by` integer,
	`claimed_by` integer,
	`claimed_at` text,
	`claimed_for_student_id` integer,
	`delivered_at` text,
	`delivered_by` integer,
	`received_by` text,
	`donated_at` text,
	`donated_by` integer,
	`reminded_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`claimed_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`claimed_for_student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`delivered_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`donated_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `lost_article_found_idx` ON `lost_article` (`school_id`,`found_on`,`id`);--> statement-breakpoint
CREATE INDEX `lost_article_status_idx` ON `lost_article` (`school_id`,`status`,`found_on`,`id`);--> statement-breakpoint
CREATE INDEX `lost_article_category_idx` ON `lost_article` (`school_id`,`category`,`found_on`,`id`);--> statement-breakpoint
CREATE INDEX `lost_article_created_idx` ON `lost_article` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `lost_article_claimant_idx` ON `lost_article` (`claimed_by`,`claimed_at`);--> statement-breakpoint
CREATE INDEX `lost_article_student_idx` ON `lost_article` (`claimed_for_student_id`);