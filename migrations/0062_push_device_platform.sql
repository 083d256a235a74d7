-- A push's device is a platform row (`device_token`, in DB only: devices are never copied to a
-- shard, docs/scaling.md "Shards", group D), while a school's pushes live in its shard: the
-- foreign key to it goes (the table made again without it). A device deleted since a push was
-- written leaves that push to be `dropped` at its delivery (src/modules/notification/deliver.ts),
-- where the cascade used to delete it.
CREATE TABLE `__new_notification_push` (
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
	FOREIGN KEY (`recipient_id`) REFERENCES `notification_recipient`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_notification_push`("id", "created_at", "updated_at", "school_id", "notification_id", "recipient_id", "device_token_id", "status", "due_at", "attempts", "claim", "error", "sent_at") SELECT "id", "created_at", "updated_at", "school_id", "notification_id", "recipient_id", "device_token_id", "status", "due_at", "attempts", "claim", "error", "sent_at" FROM `notification_push`;--> statement-breakpoint
DROP TABLE `notification_push`;--> statement-breakpoint
ALTER TABLE `__new_notification_push` RENAME TO `notification_push`;--> statement-breakpoint
CREATE UNIQUE INDEX `notification_push_uq` ON `notification_push` (`recipient_id`,`device_token_id`);--> statement-breakpoint
CREATE INDEX `notification_push_notification_idx` ON `notification_push` (`notification_id`,`status`,`due_at`);--> statement-breakpoint
CREATE INDEX `notification_push_device_idx` ON `notification_push` (`device_token_id`);--> statement-breakpoint
CREATE INDEX `notification_push_due_idx` ON `notification_push` (`due_at`) WHERE status IN ('pending', 'sending');
