-- Built-in access data not inserted by earlier migrations (scripts/builtins.ts).
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (140, 'task.read', 'List and read the tasks sent to oneself and one''s children (task.manage: every task)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (141, 'task.respond', 'Mark one''s own tasks viewed or completed, revert a completion, archive and unarchive them', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (142, 'task.manage', 'Send, change, remind and delete tasks, and read every recipient''s state', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (143, 'appointment.read', 'List and read published sessions, their days and slots, and one''s own appointments', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (144, 'appointment.book', 'Book and cancel appointments for one''s own children', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (145, 'appointment.manage', 'Set up and publish sessions, days and slots; book and cancel appointments for anyone', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 140);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 141);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 142);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 143);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 144);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 145);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 140);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 141);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 142);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 143);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 144);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 145);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 140);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 141);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 142);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 143);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 144);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 145);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (4, 140);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (4, 141);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (4, 143);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (5, 140);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (5, 141);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (5, 143);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (5, 144);
