CREATE TABLE `route_availability` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`route_id` integer NOT NULL,
	`date` text NOT NULL,
	`seats` integer,
	`taken` integer DEFAULT 0 NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`printed_version` integer,
	`printed_at` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`route_id`) REFERENCES `route`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "route_availability_seats_ck" CHECK("route_availability"."seats" IS NULL OR "route_availability"."seats" >= 0),
	CONSTRAINT "route_availability_taken_ck" CHECK("route_availability"."taken" >= 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `route_availability_uq` ON `route_availability` (`route_id`,`date`);--> statement-breakpoint
CREATE INDEX `route_availability_school_idx` ON `route_availability` (`school_id`,`date`,`route_id`);--> statement-breakpoint
CREATE INDEX `route_availability_created_idx` ON `route_availability` (`school_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `route_availability_student` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`route_availability_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`stop_id` integer,
	`kind` text NOT NULL,
	`reason` text,
	`confirmed` integer DEFAULT true NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`route_availability_id`) REFERENCES `route_availability`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`stop_id`) REFERENCES `route_stop`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `route_availability_student_uq` ON `route_availability_student` (`route_availability_id`,`student_id`);--> statement-breakpoint
CREATE INDEX `route_availability_student_school_idx` ON `route_availability_student` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `route_availability_student_student_idx` ON `route_availability_student` (`school_id`,`student_id`);--> statement-breakpoint
CREATE TABLE `route_list_change` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`school_id` integer NOT NULL,
	`route_availability_id` integer NOT NULL,
	`version` integer NOT NULL,
	`student_id` integer,
	`change` text NOT NULL,
	`detail` text,
	`at` text NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`route_availability_id`) REFERENCES `route_availability`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `route_list_change_idx` ON `route_list_change` (`route_availability_id`,`version`);--> statement-breakpoint
CREATE TABLE `route_stop` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`route_id` integer NOT NULL,
	`position` integer NOT NULL,
	`name` text NOT NULL,
	`time` text NOT NULL,
	`address` text,
	`trusted_address_id` integer,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`route_id`) REFERENCES `route`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`trusted_address_id`) REFERENCES `trusted_address`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `route_stop_position_uq` ON `route_stop` (`route_id`,`position`);--> statement-breakpoint
CREATE INDEX `route_stop_school_idx` ON `route_stop` (`school_id`,`route_id`);--> statement-breakpoint
CREATE TABLE `route_student_day` (
	`school_id` integer NOT NULL,
	`route_student_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`direction` text NOT NULL,
	`weekday` integer NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`route_student_id`) REFERENCES `route_student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `route_student_day_uq` ON `route_student_day` (`student_id`,`direction`,`weekday`);--> statement-breakpoint
CREATE INDEX `route_student_day_rs_idx` ON `route_student_day` (`route_student_id`);--> statement-breakpoint
CREATE TABLE `route_student` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`route_id` integer NOT NULL,
	`student_id` integer NOT NULL,
	`stop_id` integer NOT NULL,
	`weekdays` integer NOT NULL,
	`direction` text NOT NULL,
	`suspended_from` text,
	`suspended_until` text,
	`suspension_reason` text,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`route_id`) REFERENCES `route`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`student_id`) REFERENCES `student`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`stop_id`) REFERENCES `route_stop`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `route_student_uq` ON `route_student` (`route_id`,`student_id`);--> statement-breakpoint
CREATE INDEX `route_student_school_idx` ON `route_student` (`school_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `route_student_route_idx` ON `route_student` (`school_id`,`route_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `route_student_student_idx` ON `route_student` (`school_id`,`student_id`);--> statement-breakpoint
CREATE INDEX `route_student_stop_idx` ON `route_student` (`stop_id`);--> statement-breakpoint
CREATE TABLE `route` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`name` text NOT NULL,
	`transport_id` integer NOT NULL,
	`direction` text NOT NULL,
	`weekdays` integer NOT NULL,
	`levels` text DEFAULT '[]' NOT NULL,
	`name_search` text DEFAULT '' NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`transport_id`) REFERENCES `transport`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `route_school_idx` ON `route` (`school_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `route_name_uq` ON `route` (`school_id`,`name_search`);--> statement-breakpoint
CREATE INDEX `route_transport_idx` ON `route` (`school_id`,`transport_id`);--> statement-breakpoint
CREATE TABLE `transport` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`name` text NOT NULL,
	`plate` text,
	`seats` integer NOT NULL,
	`driver_name` text,
	`driver_phone` text,
	`driver_user_id` integer,
	`status` text DEFAULT 'active' NOT NULL,
	`name_search` text DEFAULT '' NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`driver_user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "transport_seats_ck" CHECK("transport"."seats" >= 0)
);
--> statement-breakpoint
CREATE INDEX `transport_school_idx` ON `transport` (`school_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `transport_name_uq` ON `transport` (`school_id`,`name_search`);--> statement-breakpoint
CREATE INDEX `transport_driver_idx` ON `transport` (`school_id`,`driver_user_id`);