CREATE TABLE `group_student` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`group_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`group_id`) REFERENCES `school_group`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `group_student_uq` ON `group_student` (`group_id`,`student_id`);--> statement-breakpoint
CREATE INDEX `group_student_student_idx` ON `group_student` (`student_id`);--> statement-breakpoint
CREATE INDEX `group_student_school_idx` ON `group_student` (`school_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `group_teacher` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`group_id` integer NOT NULL,
	`teacher_id` integer NOT NULL,
	`subject` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`group_id`) REFERENCES `school_group`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`teacher_id`) REFERENCES `teacher`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `group_teacher_uq` ON `group_teacher` (`group_id`,`teacher_id`);--> statement-breakpoint
CREATE INDEX `group_teacher_teacher_idx` ON `group_teacher` (`teacher_id`);--> statement-breakpoint
CREATE INDEX `group_teacher_school_idx` ON `group_teacher` (`school_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `school_group` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`name` text NOT NULL,
	`level` text NOT NULL,
	`school_year` text NOT NULL,
	`grade` integer,
	`image` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `school_group_name_uq` ON `school_group` (`school_id`,`school_year`,`name`);--> statement-breakpoint
CREATE INDEX `school_group_created_idx` ON `school_group` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `school_group_level_idx` ON `school_group` (`school_id`,`level`);--> statement-breakpoint
CREATE TABLE `guardian` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`parent_id` integer NOT NULL,
	`relationship` text DEFAULT 'guardian' NOT NULL,
	`can_pick_up` integer DEFAULT true NOT NULL,
	`can_request_changes` integer DEFAULT true NOT NULL,
	`receives_notifications` integer DEFAULT true NOT NULL,
	`restricted` integer DEFAULT false NOT NULL,
	`restriction_reason` text,
	`restriction_document_id` integer,
	`restriction_from` text,
	`restriction_until` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `parent`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`restriction_document_id`) REFERENCES `document`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "guardian_restriction_dates_ck" CHECK("guardian"."restriction_from" IS NULL OR "guardian"."restriction_until" IS NULL OR "guardian"."restriction_from" <= "guardian"."restriction_until")
);
--> statement-breakpoint
CREATE UNIQUE INDEX `guardian_uq` ON `guardian` (`student_id`,`parent_id`);--> statement-breakpoint
CREATE INDEX `guardian_parent_idx` ON `guardian` (`parent_id`);--> statement-breakpoint
CREATE INDEX `guardian_school_idx` ON `guardian` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `guardian_document_idx` ON `guardian` (`restriction_document_id`);--> statement-breakpoint
ALTER TABLE `student` ADD `id_number` text;--> statement-breakpoint
ALTER TABLE `student` ADD `level` text;--> statement-breakpoint
ALTER TABLE `student` ADD `birth_date` text;--> statement-breakpoint
ALTER TABLE `student` ADD `status` text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE `student` ADD `photo` text;--> statement-breakpoint
ALTER TABLE `student` ADD `deleted_at` text;--> statement-breakpoint
CREATE INDEX `student_created_idx` ON `student` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `student_level_idx` ON `student` (`school_id`,`level`);--> statement-breakpoint
CREATE INDEX `student_status_idx` ON `student` (`school_id`,`status`);--> statement-breakpoint
CREATE UNIQUE INDEX `student_id_number_uq` ON `student` (`school_id`,`id_number`);--> statement-breakpoint
CREATE INDEX `family_created_idx` ON `family` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `family_name_idx` ON `family` (`school_id`,`name`);