CREATE TABLE `dev_push_outbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`token` text,
	`topic` text,
	`payload` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `dev_push_outbox_token_idx` ON `dev_push_outbox` (`token`,`id`);--> statement-breakpoint
CREATE INDEX `dev_push_outbox_topic_idx` ON `dev_push_outbox` (`topic`,`id`);--> statement-breakpoint
CREATE TABLE `notification_preference` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`afternoon_push` integer DEFAULT true NOT NULL,
	`afternoon_inbox` integer DEFAULT true NOT NULL,
	`tasks_push` integer DEFAULT true NOT NULL,
	`tasks_inbox` integer DEFAULT true NOT NULL,
	`events_push` integer DEFAULT true NOT NULL,
	`events_inbox` integer DEFAULT true NOT NULL,
	`lost_and_found_push` integer DEFAULT true NOT NULL,
	`lost_and_found_inbox` integer DEFAULT true NOT NULL,
	`general_push` integer DEFAULT true NOT NULL,
	`general_inbox` integer DEFAULT true NOT NULL,
	`quiet_start` text,
	`quiet_end` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_preference_uq` ON `notification_preference` (`school_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `notification_preference_user_idx` ON `notification_preference` (`user_id`);--> statement-breakpoint
CREATE TABLE `notification_push` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`notification_id` integer NOT NULL,
	`recipient_id` integer NOT NULL,
	`device_token_id` integer NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`due_at` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`claim` text,
	`error` text,
	`sent_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`notification_id`) REFERENCES `notification`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`recipient_id`) REFERENCES `notification_recipient`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`device_token_id`) REFERENCES `device_token`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_push_uq` ON `notification_push` (`recipient_id`,`device_token_id`);--> statement-breakpoint
CREATE INDEX `notification_push_notification_idx` ON `notification_push` (`notification_id`,`status`,`due_at`);--> statement-breakpoint
CREATE INDEX `notification_push_device_idx` ON `notification_push` (`device_token_id`);--> statement-breakpoint
CREATE INDEX `notification_push_due_idx` ON `notification_push` (`due_at`) WHERE status IN ('pending', 'sending');--> statement-breakpoint
CREATE TABLE `notification_recipient` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`notification_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`in_inbox` integer DEFAULT true NOT NULL,
	`read_at` text,
	`deleted_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`notification_id`) REFERENCES `notification`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_recipient_uq` ON `notification_recipient` (`notification_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `notification_recipient_inbox_idx` ON `notification_recipient` (`school_id`,`user_id`,`id`) WHERE in_inbox = 1;--> statement-breakpoint
CREATE INDEX `notification_recipient_user_idx` ON `notification_recipient` (`user_id`);--> statement-breakpoint
CREATE TABLE `notification` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`key` text NOT NULL,
	`category` text NOT NULL,
	`urgent` integer DEFAULT false NOT NULL,
	`title` text NOT NULL,
	`body` text NOT NULL,
	`about_entity` text,
	`about_id` integer,
	`audience` text NOT NULL,
	`sender_id` integer,
	`recipient_count` integer DEFAULT 0 NOT NULL,
	`dispatched_at` text,
	`fanned_out_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`sender_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_key_uq` ON `notification` (`key`);--> statement-breakpoint
CREATE INDEX `notification_school_idx` ON `notification` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `notification_undispatched_idx` ON `notification` (`created_at`) WHERE dispatched_at IS NULL;--> statement-breakpoint
CREATE TABLE `push_subscription` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`device_token_id` integer NOT NULL,
	`topic` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`device_token_id`) REFERENCES `device_token`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `push_subscription_uq` ON `push_subscription` (`device_token_id`,`topic`);--> statement-breakpoint
CREATE INDEX `push_subscription_topic_idx` ON `push_subscription` (`topic`);