DROP INDEX `student_family_idx`;--> statement-breakpoint
DROP INDEX `student_level_idx`;--> statement-breakpoint
DROP INDEX `student_status_idx`;--> statement-breakpoint
CREATE INDEX `student_family_idx` ON `student` (`family_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `student_level_idx` ON `student` (`school_id`,`level`,`created_at`);--> statement-breakpoint
CREATE INDEX `student_status_idx` ON `student` (`school_id`,`status`,`created_at`);