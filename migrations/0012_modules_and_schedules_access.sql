-- Built-in access data not inserted by earlier migrations (scripts/builtins.ts).
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (30, 'application-module.read', 'Read the application module catalogue and which modules the school has enabled', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (31, 'application-module.manage', 'Create, update and delete application modules of the catalogue (platform)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (32, 'application-module.toggle', 'Enable and disable application modules for the school, and initialise its module states', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (33, 'school-schedule.read', 'Read the school''s schedules (entry, dismissal and after-school times per level and weekday)', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO permission (id, name, description, created_at, updated_at) VALUES (34, 'school-schedule.write', 'Create, update and delete the school''s schedules', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 30);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 31);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 32);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 33);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (1, 34);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 30);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 33);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (2, 34);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 30);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 33);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (3, 34);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (4, 30);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (4, 33);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (5, 30);
--> statement-breakpoint
INSERT OR IGNORE INTO role_permission (role_id, permission_id) VALUES (5, 33);
--> statement-breakpoint
INSERT OR IGNORE INTO application_module (id, key, name, description, created_at, updated_at) VALUES (1, 'transport', 'Transport', 'Vehicles, routes, availability and transportation rules', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO application_module (id, key, name, description, created_at, updated_at) VALUES (2, 'exit-permissions', 'Exit permissions', 'How a child goes home today: route changes, pickups, absences', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO application_module (id, key, name, description, created_at, updated_at) VALUES (3, 'invitations', 'Invitations', 'Invitations sent to students'' parents, and their answers', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO application_module (id, key, name, description, created_at, updated_at) VALUES (4, 'events', 'Events', 'School events, shared by a public link, with reminders', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO application_module (id, key, name, description, created_at, updated_at) VALUES (5, 'tasks', 'Tasks', 'What the school asks of parents: read, sign, fill, pay, book', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO application_module (id, key, name, description, created_at, updated_at) VALUES (6, 'appointments', 'Appointments', 'Parent-teacher sessions, days and time slots', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO application_module (id, key, name, description, created_at, updated_at) VALUES (7, 'lost-articles', 'Lost articles', 'Lost and found: claims, deliveries, donations', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO application_module (id, key, name, description, created_at, updated_at) VALUES (8, 'notifications', 'Notifications', 'The inbox and push notifications', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
--> statement-breakpoint
INSERT OR IGNORE INTO application_module (id, key, name, description, created_at, updated_at) VALUES (9, 'documents', 'Documents', 'Documents of the school with signed upload and download URLs', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
