DROP INDEX `student_id_number_uq`;--> statement-breakpoint
CREATE INDEX `student_deleted_idx` ON `student` (`school_id`,`created_at`) WHERE deleted_at IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `student_id_number_uq` ON `student` (`school_id`,`id_number`) WHERE deleted_at IS NULL;