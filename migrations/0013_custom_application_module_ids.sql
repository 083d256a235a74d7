-- Application modules created through the API take ids from 1000 on: the ids below are the
-- built-in catalogue's (src/lib/app-modules.ts), which grows by migrations; routes are gated by
-- those, and access tokens carry only those.
INSERT INTO sqlite_sequence (name, seq) SELECT 'application_module', 999 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'application_module');
--> statement-breakpoint
UPDATE sqlite_sequence SET seq = 999 WHERE name = 'application_module' AND seq < 999;
