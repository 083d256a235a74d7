CREATE TABLE `dismissal_arrival` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`date` text NOT NULL,
	`student_id` integer NOT NULL,
	`user_id` integer,
	`latitude` real,
	`longitude` real,
	`accuracy` real,
	`distance_meters` integer,
	`status` text DEFAULT 'waiting' NOT NULL,
	`called_at` text,
	`called_by` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`called_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dismissal_arrival_student_uq` ON `dismissal_arrival` (`school_id`,`date`,`student_id`);--> statement-breakpoint
CREATE INDEX `dismissal_arrival_day_idx` ON `dismissal_arrival` (`school_id`,`date`,`id`);--> statement-breakpoint
CREATE TABLE `dismissal_event` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`date` text NOT NULL,
	`seq` integer NOT NULL,
	`type` text NOT NULL,
	`student_id` integer,
	`data` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dismissal_event_seq_uq` ON `dismissal_event` (`school_id`,`date`,`seq`);--> statement-breakpoint
CREATE TABLE `dismissal_release` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`date` text NOT NULL,
	`student_id` integer NOT NULL,
	`collector_kind` text NOT NULL,
	`collector_id` integer NOT NULL,
	`collector_name` text NOT NULL,
	`method` text NOT NULL,
	`pass_id` text,
	`permission_id` integer,
	`gate` text,
	`released_by` integer,
	`released_at` text NOT NULL,
	`device_released_at` text,
	`reason` text,
	`identity_check` text,
	`client_id` text,
	`flagged` integer DEFAULT false NOT NULL,
	`flag_reason` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`released_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dismissal_release_student_uq` ON `dismissal_release` (`school_id`,`date`,`student_id`);--> statement-breakpoint
CREATE INDEX `dismissal_release_day_idx` ON `dismissal_release` (`school_id`,`date`,`released_at`);--> statement-breakpoint
CREATE INDEX `dismissal_release_order_idx` ON `dismissal_release` (`school_id`,`released_at`,`id`);--> statement-breakpoint
CREATE INDEX `dismissal_release_child_idx` ON `dismissal_release` (`school_id`,`student_id`,`released_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `dismissal_release_client_uq` ON `dismissal_release` (`school_id`,`client_id`) WHERE client_id IS NOT NULL;--> statement-breakpoint
CREATE TABLE `dismissal_reunification` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`date` text NOT NULL,
	`reason` text NOT NULL,
	`started_by` integer,
	`ended_at` text,
	`ended_by` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`started_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`ended_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `dismissal_reunification_school_idx` ON `dismissal_reunification` (`school_id`,`date`);--> statement-breakpoint
CREATE UNIQUE INDEX `dismissal_reunification_open_uq` ON `dismissal_reunification` (`school_id`) WHERE ended_at IS NULL;--> statement-breakpoint
CREATE TABLE `dismissal_setting` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`latitude` real NOT NULL,
	`longitude` real NOT NULL,
	`radius_meters` integer NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dismissal_setting_school_uq` ON `dismissal_setting` (`school_id`);--> statement-breakpoint
CREATE TABLE `dismissal_ticket` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`hash` text NOT NULL,
	`school` integer NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dismissal_ticket_hash_uq` ON `dismissal_ticket` (`hash`);
--> statement-breakpoint
-- The built-in gate role takes id 7. A custom role a school created before it took that id moves
-- to the next free id first, with its grants and holders (the foreign keys are checked at commit).
PRAGMA defer_foreign_keys = true;
--> statement-breakpoint
UPDATE role_permission SET role_id = (SELECT max(id) + 1 FROM role) WHERE role_id = 7 AND EXISTS (SELECT 1 FROM role WHERE id = 7 AND key IS NULL);
--> statement-breakpoint
UPDATE role_user SET role_id = (SELECT max(id) + 1 FROM role) WHERE role_id = 7 AND EXISTS (SELECT 1 FROM role WHERE id = 7 AND key IS NULL);
--> statement-breakpoint
UPDATE role SET id = (SELECT max(id) + 1 FROM role) WHERE id = 7 AND key IS NULL;
--> statement-breakpoint
-- Built-in access data not inserted by earlier migrations (scripts/builtins.ts).
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (160, 'dismissal.read', 'Read the school''s dismissal board, call list, releases and live stream', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (161, 'dismissal.release', 'Call children and release them at a gate to a collector the day''s plan names', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (162, 'dismissal.manage', 'Set the school''s dismissal position and radius, release against the plan with a reason, and start and end a reunification', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 160);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 161);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 162);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 160);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 161);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 162);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 160);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 161);
--> statement-breakpoint
INSERT OR IGNORE INTO role (id, key, name, name_search, created_at, updated_at) VALUES (7, 'gate', 'Gate', 'gate', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (7, 98);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (7, 160);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (7, 161);
--> statement-breakpoint
INSERT OR IGNORE INTO application_module (id, key, name, name_search, description, created_at, updated_at) VALUES (10, 'dismissal', 'Dismissal', 'dismissal', 'The live dismissal board: arrivals, calls, releases at the gate, reunification', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
