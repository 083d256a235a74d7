CREATE TABLE `invitation_response` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`invitation_id` integer NOT NULL,
	`family_id` integer,
	`status` text DEFAULT 'pending' NOT NULL,
	`responded_by` integer,
	`responded_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`invitation_id`) REFERENCES `invitation`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`family_id`) REFERENCES `family`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`responded_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitation_response_family_uq` ON `invitation_response` (`invitation_id`,`family_id`);--> statement-breakpoint
CREATE INDEX `invitation_response_school_idx` ON `invitation_response` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_response_invitation_idx` ON `invitation_response` (`invitation_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_response_status_idx` ON `invitation_response` (`invitation_id`,`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `invitation_student_response` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`invitation_id` integer NOT NULL,
	`response_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`answer` text DEFAULT 'pending' NOT NULL,
	`answered_by` integer,
	`answered_at` text,
	`exit_permission_id` integer,
	`failures` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`invitation_id`) REFERENCES `invitation`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`response_id`) REFERENCES `invitation_response`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`answered_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitation_student_response_uq` ON `invitation_student_response` (`invitation_id`,`student_id`);--> statement-breakpoint
CREATE INDEX `invitation_student_response_response_idx` ON `invitation_student_response` (`response_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_student_response_response_answer_idx` ON `invitation_student_response` (`response_id`,`answer`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_student_response_school_idx` ON `invitation_student_response` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_student_response_student_idx` ON `invitation_student_response` (`student_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_student_response_answer_idx` ON `invitation_student_response` (`invitation_id`,`answer`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_student_response_invitation_idx` ON `invitation_student_response` (`invitation_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_student_response_school_answer_idx` ON `invitation_student_response` (`school_id`,`answer`,`created_at`);--> statement-breakpoint
CREATE TABLE `invitation` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`kind` text NOT NULL,
	`title` text NOT NULL,
	`message` text,
	`created_by` integer,
	`parent_id` integer,
	`owner_id` integer,
	`date` text NOT NULL,
	`pickup` text,
	`route_id` integer,
	`stop_id` integer,
	`expires_at` text,
	`status` text DEFAULT 'open' NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`parent_id`) REFERENCES `parent`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`owner_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`route_id`) REFERENCES `route`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`stop_id`) REFERENCES `route_stop`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "invitation_go_home_ck" CHECK("invitation"."kind" <> 'go_home' OR "invitation"."pickup" IS NOT NULL)
);
--> statement-breakpoint
CREATE INDEX `invitation_date_idx` ON `invitation` (`school_id`,`date`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_status_idx` ON `invitation` (`school_id`,`status`,`date`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_kind_idx` ON `invitation` (`school_id`,`kind`,`date`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_owner_idx` ON `invitation` (`owner_id`,`date`,`created_at`);--> statement-breakpoint
CREATE INDEX `invitation_created_by_idx` ON `invitation` (`created_by`);--> statement-breakpoint
CREATE INDEX `invitation_parent_idx` ON `invitation` (`parent_id`);--> statement-breakpoint
CREATE INDEX `invitation_route_idx` ON `invitation` (`route_id`);--> statement-breakpoint
CREATE INDEX `invitation_stop_idx` ON `invitation` (`stop_id`);