CREATE TABLE `note` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`title` text NOT NULL,
	`body` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `note_school_idx` ON `note` (`school_id`,`created_at`);
--> statement-breakpoint
-- Built-in access data not inserted by earlier migrations (scripts/builtins.ts).
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (990, 'note.read', 'List and read notes', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (991, 'note.write', 'Create, update and delete notes', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 990);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 991);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 990);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 991);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 990);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 991);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (4, 990);
