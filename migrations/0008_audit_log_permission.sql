-- Built-in access data not inserted by earlier migrations (scripts/builtins.ts).
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (23, 'audit-log.read', 'Read the audit trail of the school (the super-admin: of every school)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 23);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 23);
--> statement-breakpoint
-- Device tokens are listed with masked values for anyone but their owner.
UPDATE permission SET description = 'List the device tokens of every user of the school (values masked)' WHERE id = 17;
--> statement-breakpoint
-- Custom permissions (created through the API) take ids from 1000 on: the ids below are the
-- built-in catalogue's, which grows by migrations, and access tokens carry only those.
INSERT INTO sqlite_sequence (name, seq) SELECT 'permission', 999 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'permission');
--> statement-breakpoint
UPDATE sqlite_sequence SET seq = 999 WHERE name = 'permission' AND seq < 999;
