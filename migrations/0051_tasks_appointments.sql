CREATE TABLE `appointment` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`slot_id` integer NOT NULL,
	`session_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`family_id` integer,
	`visit` text NOT NULL,
	`status` text DEFAULT 'booked' NOT NULL,
	`booked_by` integer,
	`booked_for` integer,
	`note` text,
	`cancelled_at` text,
	`cancelled_by` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`slot_id`) REFERENCES `appointment_slot`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`session_id`) REFERENCES `appointment_session`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`family_id`) REFERENCES `family`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`booked_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`booked_for`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`cancelled_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `appointment_slot_student_uq` ON `appointment` (`slot_id`,`student_id`) WHERE status = 'booked';--> statement-breakpoint
CREATE INDEX `appointment_slot_idx` ON `appointment` (`slot_id`,`status`);--> statement-breakpoint
CREATE INDEX `appointment_family_idx` ON `appointment` (`session_id`,`family_id`,`status`);--> statement-breakpoint
CREATE INDEX `appointment_student_session_idx` ON `appointment` (`session_id`,`student_id`,`status`);--> statement-breakpoint
CREATE INDEX `appointment_student_idx` ON `appointment` (`student_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `appointment_session_idx` ON `appointment` (`session_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `appointment_visit_idx` ON `appointment` (`visit`);--> statement-breakpoint
CREATE INDEX `appointment_created_idx` ON `appointment` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `appointment_booked_by_idx` ON `appointment` (`booked_by`);--> statement-breakpoint
CREATE INDEX `appointment_booked_for_idx` ON `appointment` (`booked_for`);--> statement-breakpoint
CREATE INDEX `appointment_cancelled_by_idx` ON `appointment` (`cancelled_by`);--> statement-breakpoint
CREATE TABLE `appointment_day` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`session_id` integer NOT NULL,
	`date` text NOT NULL,
	`windows` text NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`session_id`) REFERENCES `appointment_session`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `appointment_day_uq` ON `appointment_day` (`session_id`,`date`);--> statement-breakpoint
CREATE INDEX `appointment_day_created_idx` ON `appointment_day` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `appointment_day_date_idx` ON `appointment_day` (`school_id`,`date`);--> statement-breakpoint
CREATE TABLE `appointment_session` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`task_id` integer NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`location` text,
	`slot_minutes` integer NOT NULL,
	`break_minutes` integer DEFAULT 0 NOT NULL,
	`capacity` integer DEFAULT 1 NOT NULL,
	`bookings_per_family` integer DEFAULT 1 NOT NULL,
	`cancel_hours` integer DEFAULT 24 NOT NULL,
	`status` text DEFAULT 'draft' NOT NULL,
	`published_at` text,
	`created_by` integer,
	`title_search` text DEFAULT '' NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`task_id`) REFERENCES `task`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `appointment_session_task_uq` ON `appointment_session` (`task_id`);--> statement-breakpoint
CREATE INDEX `appointment_session_created_idx` ON `appointment_session` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `appointment_session_status_idx` ON `appointment_session` (`school_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `appointment_session_created_by_idx` ON `appointment_session` (`created_by`);--> statement-breakpoint
CREATE TABLE `appointment_slot` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`session_id` integer NOT NULL,
	`day_id` integer NOT NULL,
	`teacher_id` integer,
	`date` text NOT NULL,
	`start` text NOT NULL,
	`end` text NOT NULL,
	`starts_at` text NOT NULL,
	`ends_at` text NOT NULL,
	`capacity` integer DEFAULT 1 NOT NULL,
	`booked` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`session_id`) REFERENCES `appointment_session`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`day_id`) REFERENCES `appointment_day`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`teacher_id`) REFERENCES `teacher`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "appointment_slot_booked_ck" CHECK("appointment_slot"."booked" >= 0 AND "appointment_slot"."booked" <= "appointment_slot"."capacity"),
	CONSTRAINT "appointment_slot_times_ck" CHECK("appointment_slot"."ends_at" > "appointment_slot"."starts_at")
);
--> statement-breakpoint
CREATE INDEX `appointment_slot_session_idx` ON `appointment_slot` (`session_id`,`starts_at`);--> statement-breakpoint
CREATE INDEX `appointment_slot_day_idx` ON `appointment_slot` (`day_id`,`starts_at`);--> statement-breakpoint
CREATE INDEX `appointment_slot_teacher_idx` ON `appointment_slot` (`teacher_id`,`starts_at`);--> statement-breakpoint
CREATE INDEX `appointment_slot_created_idx` ON `appointment_slot` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `appointment_slot_time_idx` ON `appointment_slot` (`school_id`,`starts_at`);--> statement-breakpoint
CREATE TABLE `task_inbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`task_id` integer NOT NULL,
	`recipient_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`archived` integer DEFAULT false NOT NULL,
	`archived_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`task_id`) REFERENCES `task`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`recipient_id`) REFERENCES `task_recipient`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `task_inbox_uq` ON `task_inbox` (`recipient_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `task_inbox_user_idx` ON `task_inbox` (`school_id`,`user_id`,`archived`,`id`);--> statement-breakpoint
CREATE INDEX `task_inbox_task_idx` ON `task_inbox` (`task_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `task_inbox_user_fk_idx` ON `task_inbox` (`user_id`);--> statement-breakpoint
CREATE TABLE `task_recipient` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`task_id` integer NOT NULL,
	`student_id` integer,
	`user_id` integer,
	`family_id` integer,
	`status` text DEFAULT 'new' NOT NULL,
	`viewed_at` text,
	`viewed_by` integer,
	`completed_at` text,
	`completed_by` integer,
	`completed_for` integer,
	`appointment_id` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`task_id`) REFERENCES `task`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`family_id`) REFERENCES `family`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`viewed_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`completed_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`completed_for`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "task_recipient_one_ck" CHECK(("task_recipient"."student_id" IS NULL) <> ("task_recipient"."user_id" IS NULL))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `task_recipient_student_uq` ON `task_recipient` (`task_id`,`student_id`) WHERE student_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `task_recipient_user_uq` ON `task_recipient` (`task_id`,`user_id`) WHERE user_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `task_recipient_status_idx` ON `task_recipient` (`task_id`,`status`);--> statement-breakpoint
CREATE INDEX `task_recipient_student_idx` ON `task_recipient` (`student_id`);--> statement-breakpoint
CREATE INDEX `task_recipient_user_idx` ON `task_recipient` (`user_id`);--> statement-breakpoint
CREATE INDEX `task_recipient_school_idx` ON `task_recipient` (`school_id`,`task_id`,`id`);--> statement-breakpoint
CREATE INDEX `task_recipient_appointment_idx` ON `task_recipient` (`appointment_id`);--> statement-breakpoint
CREATE TABLE `task_reminder` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`task_id` integer NOT NULL,
	`send_at` text NOT NULL,
	`status` text DEFAULT 'scheduled' NOT NULL,
	`sent_at` text,
	`sent_count` integer,
	`created_by` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`task_id`) REFERENCES `task`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `task_reminder_due_idx` ON `task_reminder` (`status`,`send_at`);--> statement-breakpoint
CREATE INDEX `task_reminder_task_idx` ON `task_reminder` (`task_id`,`send_at`);--> statement-breakpoint
CREATE INDEX `task_reminder_school_idx` ON `task_reminder` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `task_reminder_created_by_idx` ON `task_reminder` (`created_by`);--> statement-breakpoint
CREATE TABLE `task_target` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`task_id` integer NOT NULL,
	`kind` text NOT NULL,
	`ref_id` integer,
	`level` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`task_id`) REFERENCES `task`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `task_target_ref_idx` ON `task_target` (`task_id`,`kind`,`ref_id`);--> statement-breakpoint
CREATE INDEX `task_target_level_idx` ON `task_target` (`task_id`,`kind`,`level`);--> statement-breakpoint
CREATE INDEX `task_target_school_idx` ON `task_target` (`school_id`,`task_id`);--> statement-breakpoint
CREATE TABLE `task` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`due_date` text,
	`attachment_key` text,
	`attachment_name` text,
	`attachment_type` text,
	`requires_appointment` integer DEFAULT false NOT NULL,
	`status` text DEFAULT 'published' NOT NULL,
	`published_at` text,
	`reminded_at` text,
	`slug` text NOT NULL,
	`audience` text NOT NULL,
	`created_by` integer,
	`title_search` text DEFAULT '' NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `task_slug_uq` ON `task` (`slug`);--> statement-breakpoint
CREATE INDEX `task_created_idx` ON `task` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `task_status_idx` ON `task` (`school_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `task_title_idx` ON `task` (`school_id`,`title`);--> statement-breakpoint
CREATE INDEX `task_created_by_idx` ON `task` (`created_by`);