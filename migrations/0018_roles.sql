CREATE UNIQUE INDEX `role_school_name_uq` ON `role` (`school_id`,`name`);--> statement-breakpoint
CREATE INDEX `role_scope_idx` ON `role` (ifnull(`school_id`, 0),`id`);
