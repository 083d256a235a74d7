-- The dismissal board's plan kept per isolate (docs/architecture.md "The live board"): a per-school
-- version that every change of a fact the plan reads moves, by trigger, whatever writes it (a verb, an
-- import, a job, a console). A board kept at another version is read again.
CREATE TABLE `dismissal_board_version` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`school_id` integer NOT NULL,
	`version` integer NOT NULL,
	FOREIGN KEY (`school_id`) REFERENCES `school`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dismissal_board_version_school_uq` ON `dismissal_board_version` (`school_id`);--> statement-breakpoint
-- A random start (below 2^53: JavaScript reads it exactly): a database made again (a test file's, a
-- restore) never meets a version an isolate kept.
INSERT INTO `dismissal_board_version` (`school_id`, `version`) SELECT `id`, abs(random() % 1000000000000) FROM `school`;--> statement-breakpoint
-- A school's version row is made with its first student (in the database that holds the school's
-- rows: a school's own row is also the platform's, in DB, wherever its rows live, docs/scaling.md
-- "Shards"); until then there is nothing to keep (no version read: the board is read afresh).
CREATE TRIGGER `dismissal_board_student_insert` AFTER INSERT ON `student` BEGIN
  INSERT INTO `dismissal_board_version` (`school_id`, `version`) VALUES (NEW.`school_id`, abs(random() % 1000000000000))
    ON CONFLICT (`school_id`) DO UPDATE SET `version` = `version` + 1;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_student_update` AFTER UPDATE ON `student` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_student_delete` AFTER DELETE ON `student` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_guardian_insert` AFTER INSERT ON `guardian` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_guardian_update` AFTER UPDATE ON `guardian` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_guardian_delete` AFTER DELETE ON `guardian` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_parent_insert` AFTER INSERT ON `parent` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_parent_update` AFTER UPDATE ON `parent` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_parent_delete` AFTER DELETE ON `parent` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_school_person_insert` AFTER INSERT ON `school_person` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_school_person_update` AFTER UPDATE ON `school_person` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_school_person_delete` AFTER DELETE ON `school_person` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_exit_permission_insert` AFTER INSERT ON `exit_permission` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_exit_permission_update` AFTER UPDATE ON `exit_permission` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_exit_permission_delete` AFTER DELETE ON `exit_permission` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_student_insert` AFTER INSERT ON `route_student` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_student_update` AFTER UPDATE ON `route_student` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_student_delete` AFTER DELETE ON `route_student` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_student_day_insert` AFTER INSERT ON `route_student_day` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_student_day_update` AFTER UPDATE ON `route_student_day` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_student_day_delete` AFTER DELETE ON `route_student_day` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_insert` AFTER INSERT ON `route` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_update` AFTER UPDATE ON `route` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_delete` AFTER DELETE ON `route` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_stop_insert` AFTER INSERT ON `route_stop` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_stop_update` AFTER UPDATE ON `route_stop` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_stop_delete` AFTER DELETE ON `route_stop` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_availability_insert` AFTER INSERT ON `route_availability` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_availability_update` AFTER UPDATE ON `route_availability` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_route_availability_delete` AFTER DELETE ON `route_availability` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_trusted_address_insert` AFTER INSERT ON `trusted_address` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_trusted_address_update` AFTER UPDATE ON `trusted_address` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_trusted_address_delete` AFTER DELETE ON `trusted_address` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_trusted_person_insert` AFTER INSERT ON `trusted_person` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = NEW.`school_id`;
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_trusted_person_update` AFTER UPDATE ON `trusted_person` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` IN (OLD.`school_id`, NEW.`school_id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_trusted_person_delete` AFTER DELETE ON `trusted_person` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1 WHERE `school_id` = OLD.`school_id`;
END;--> statement-breakpoint
-- A user is no school's row: a name the board shows moves the version of each school they are a parent in,
-- found by the user's own index (without it, every school's parents were scanned at each change).
CREATE INDEX `parent_user_idx` ON `parent` (`user_id`);--> statement-breakpoint
CREATE TRIGGER `dismissal_board_user_update` AFTER UPDATE OF `first_name`, `last_name` ON `user` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1
    WHERE `school_id` IN (SELECT `school_id` FROM `parent` WHERE `user_id` = NEW.`id`);
END;--> statement-breakpoint
CREATE TRIGGER `dismissal_board_user_delete` BEFORE DELETE ON `user` BEGIN
  UPDATE `dismissal_board_version` SET `version` = `version` + 1
    WHERE `school_id` IN (SELECT `school_id` FROM `parent` WHERE `user_id` = OLD.`id`);
END;
