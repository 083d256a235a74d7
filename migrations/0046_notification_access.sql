-- Built-in access data not inserted by earlier migrations (scripts/builtins.ts).
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (100, 'notification.send', 'Send notifications to users, roles, groups'' guardians, levels or the whole school', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (101, 'notification.send-group', 'Send a notification to the guardians of a group''s students (teachers: the groups they teach)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (102, 'push-provider.manage', 'Sync a role''s push topics and read a member''s push-provider state', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (103, 'push-provider.clean', 'Remove the push provider''s topics of schools that no longer exist (super-admin only)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (104, 'reset-data', 'Remove every school''s data and the push provider''s topics, where the setting allows it (super-admin only)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (105, 'cron-history.write', 'Record, correct and delete scheduled runs that are not running (super-admin only)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 100);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 101);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 102);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 103);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 104);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 105);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 100);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 101);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 102);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 100);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 101);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (4, 101);
