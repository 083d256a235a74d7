CREATE TABLE `rate_limit` (
	`key` text PRIMARY KEY NOT NULL,
	`count` integer NOT NULL,
	`reset_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rate_limit_reset_idx` ON `rate_limit` (`reset_at`);--> statement-breakpoint
CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`school_id` integer,
	`actor_type` text NOT NULL,
	`actor_id` integer,
	`actor_name` text,
	`entity` text NOT NULL,
	`record_id` integer NOT NULL,
	`action` text NOT NULL,
	`changes` text NOT NULL,
	`request_id` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_school_idx` ON `audit_log` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `audit_log_record_idx` ON `audit_log` (`school_id`,`entity`,`record_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `audit_log_entity_idx` ON `audit_log` (`school_id`,`entity`,`created_at`);--> statement-breakpoint
CREATE INDEX `audit_log_actor_idx` ON `audit_log` (`school_id`,`actor_type`,`actor_id`,`actor_name`,`created_at`);--> statement-breakpoint
CREATE INDEX `audit_log_created_idx` ON `audit_log` (`created_at`);--> statement-breakpoint
CREATE INDEX `cron_history_started_idx` ON `cron_history` (`started_at`);