DROP INDEX `exit_permission_kind_idx`;--> statement-breakpoint
CREATE INDEX `exit_permission_day_idx` ON `exit_permission` (`school_id`,`date`);--> statement-breakpoint
CREATE INDEX `exit_permission_status_idx` ON `exit_permission` (`school_id`,`status`,`date`);--> statement-breakpoint
CREATE INDEX `exit_permission_kind_idx` ON `exit_permission` (`school_id`,`kind`,`date`);--> statement-breakpoint
ALTER TABLE `school_configuration` ADD `auto_confirm_exit_permissions` integer DEFAULT false NOT NULL;