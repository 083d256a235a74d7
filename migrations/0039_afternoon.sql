CREATE TABLE `exit_permission` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`date` text NOT NULL,
	`kind` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`route_id` integer,
	`stop_id` integer,
	`trusted_address_id` integer,
	`pickup_parent_id` integer,
	`trusted_person_id` integer,
	`asked_by` integer,
	`parent_id` integer,
	`reason` text,
	`decided_by` integer,
	`decided_at` text,
	`decision_reason` text,
	`superseded_by` integer,
	`fixed_id` integer,
	`invitation_id` integer,
	`slug` text NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`route_id`) REFERENCES `route`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`stop_id`) REFERENCES `route_stop`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`trusted_address_id`) REFERENCES `trusted_address`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`pickup_parent_id`) REFERENCES `parent`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`trusted_person_id`) REFERENCES `trusted_person`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`asked_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`parent_id`) REFERENCES `parent`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`decided_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`fixed_id`) REFERENCES `fixed_exit_permission`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "exit_permission_decided_ck" CHECK("exit_permission"."status" NOT IN ('confirmed', 'rejected') OR "exit_permission"."decided_at" IS NOT NULL)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `exit_permission_slug_uq` ON `exit_permission` (`slug`);--> statement-breakpoint
CREATE INDEX `exit_permission_school_idx` ON `exit_permission` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `exit_permission_date_idx` ON `exit_permission` (`school_id`,`date`,`status`);--> statement-breakpoint
CREATE INDEX `exit_permission_kind_idx` ON `exit_permission` (`school_id`,`kind`,`created_at`);--> statement-breakpoint
CREATE INDEX `exit_permission_student_idx` ON `exit_permission` (`school_id`,`student_id`,`date`);--> statement-breakpoint
CREATE UNIQUE INDEX `exit_permission_fixed_uq` ON `exit_permission` (`fixed_id`,`date`);--> statement-breakpoint
CREATE UNIQUE INDEX `exit_permission_effective_uq` ON `exit_permission` (`student_id`,`date`) WHERE status = 'confirmed';--> statement-breakpoint
CREATE TABLE `fixed_exit_permission` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`kind` text NOT NULL,
	`weekdays` integer NOT NULL,
	`from_date` text NOT NULL,
	`until_date` text NOT NULL,
	`route_id` integer,
	`stop_id` integer,
	`trusted_address_id` integer,
	`pickup_parent_id` integer,
	`trusted_person_id` integer,
	`asked_by` integer,
	`parent_id` integer,
	`reason` text,
	`generated_until` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`route_id`) REFERENCES `route`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`stop_id`) REFERENCES `route_stop`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`trusted_address_id`) REFERENCES `trusted_address`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`pickup_parent_id`) REFERENCES `parent`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`trusted_person_id`) REFERENCES `trusted_person`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`asked_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`parent_id`) REFERENCES `parent`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "fixed_exit_permission_dates_ck" CHECK("fixed_exit_permission"."from_date" <= "fixed_exit_permission"."until_date")
);
--> statement-breakpoint
CREATE INDEX `fixed_exit_permission_school_idx` ON `fixed_exit_permission` (`school_id`,`kind`,`created_at`);--> statement-breakpoint
CREATE INDEX `fixed_exit_permission_student_idx` ON `fixed_exit_permission` (`school_id`,`student_id`);--> statement-breakpoint
CREATE INDEX `fixed_exit_permission_due_idx` ON `fixed_exit_permission` (`until_date`);--> statement-breakpoint
ALTER TABLE `route_availability_student` ADD `exit_permission_id` integer;--> statement-breakpoint
CREATE INDEX `route_availability_student_permission_idx` ON `route_availability_student` (`exit_permission_id`);