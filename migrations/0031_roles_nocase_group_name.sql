DROP INDEX `role_school_name_uq`;--> statement-breakpoint
CREATE UNIQUE INDEX `role_school_name_nocase_uq` ON `role` (`school_id`,"name" COLLATE NOCASE);--> statement-breakpoint
CREATE INDEX `school_group_name_idx` ON `school_group` (`school_id`,`name`);