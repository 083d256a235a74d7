CREATE TABLE `route_run_event` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`run_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`event` text NOT NULL,
	`stop_id` integer,
	`at` text NOT NULL,
	`insist_reason` text,
	`recorded_by` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`run_id`) REFERENCES `route_run`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`stop_id`) REFERENCES `route_stop`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`recorded_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `route_run_event_uq` ON `route_run_event` (`run_id`,`student_id`,`event`);--> statement-breakpoint
CREATE INDEX `route_run_event_run_idx` ON `route_run_event` (`school_id`,`run_id`,`at`);--> statement-breakpoint
CREATE INDEX `route_run_event_student_idx` ON `route_run_event` (`student_id`);--> statement-breakpoint
CREATE TABLE `route_run_notice` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`run_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`kind` text NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`run_id`) REFERENCES `route_run`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `route_run_notice_uq` ON `route_run_notice` (`run_id`,`student_id`,`kind`);--> statement-breakpoint
CREATE TABLE `route_run_position` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`run_id` integer NOT NULL,
	`lat` real NOT NULL,
	`lon` real NOT NULL,
	`speed` real,
	`at` text NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`run_id`) REFERENCES `route_run`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `route_run_position_run_idx` ON `route_run_position` (`school_id`,`run_id`,`at`);--> statement-breakpoint
CREATE INDEX `route_run_position_created_idx` ON `route_run_position` (`created_at`);--> statement-breakpoint
CREATE TABLE `route_run` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`route_id` integer NOT NULL,
	`date` text NOT NULL,
	`status` text DEFAULT 'running' NOT NULL,
	`started_at` text NOT NULL,
	`started_by` integer,
	`finished_at` text,
	`last_lat` real,
	`last_lon` real,
	`last_speed` real,
	`last_position_at` text,
	`approach_checked_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`route_id`) REFERENCES `route`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`started_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `route_run_day_uq` ON `route_run` (`school_id`,`route_id`,`date`);--> statement-breakpoint
CREATE INDEX `route_run_date_idx` ON `route_run` (`school_id`,`date`);--> statement-breakpoint
CREATE TABLE `webhook_delivery` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`endpoint_id` integer NOT NULL,
	`message_id` integer NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`attempt_log` text DEFAULT '[]' NOT NULL,
	`next_attempt_at` text,
	`claim` text,
	`delivered_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoint`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`message_id`) REFERENCES `webhook_message`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_delivery_uq` ON `webhook_delivery` (`endpoint_id`,`message_id`);--> statement-breakpoint
CREATE INDEX `webhook_delivery_endpoint_idx` ON `webhook_delivery` (`school_id`,`endpoint_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_delivery_message_idx` ON `webhook_delivery` (`message_id`);--> statement-breakpoint
CREATE INDEX `webhook_delivery_pending_idx` ON `webhook_delivery` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `webhook_endpoint` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`event_types` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`paused_reason` text,
	`failure_streak` integer DEFAULT 0 NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_until` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoint_school_idx` ON `webhook_endpoint` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_endpoint_status_idx` ON `webhook_endpoint` (`school_id`,`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_message` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`msg_id` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_message_msg_uq` ON `webhook_message` (`msg_id`);--> statement-breakpoint
CREATE INDEX `webhook_message_school_idx` ON `webhook_message` (`school_id`);--> statement-breakpoint
ALTER TABLE `notification_preference` ADD `transport_push` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `notification_preference` ADD `transport_inbox` integer DEFAULT true NOT NULL;
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (170, 'webhook.manage', 'Register, change and delete the school''s webhook endpoints, read and retry their deliveries', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (171, 'route.run', 'Run a route: start and finish its day''s run, record boardings, drops and positions (a driver: their vehicles'' routes)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 170);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 171);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 170);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 171);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 171);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (6, 171);
