-- The shard map (docs/scaling.md "Shards"): which database holds each school's rows, by binding
-- name. A platform table: it has rows in the platform database (DB) only; every database runs
-- every migration, so the table exists (empty) in each shard too. The schools there are now are
-- on DB; a school with no row is on DB too.
CREATE TABLE `school_shard` (
	`school_id` integer PRIMARY KEY NOT NULL,
	`binding` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `school_shard_binding_idx` ON `school_shard` (`binding`);
--> statement-breakpoint
INSERT INTO `school_shard` (`school_id`, `binding`, `created_at`, `updated_at`)
SELECT `id`, 'DB', `created_at`, `created_at` FROM `school`;
