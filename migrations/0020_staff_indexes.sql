CREATE INDEX `administrative_user_created_idx` ON `administrative_user` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `teacher_created_idx` ON `teacher` (`school_id`,`created_at`);