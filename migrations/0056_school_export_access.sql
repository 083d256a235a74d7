-- Built-in access data not inserted by earlier migrations (scripts/builtins.ts).
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (150, 'school.export', 'Export every record of the school and download the file', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 150);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 150);
