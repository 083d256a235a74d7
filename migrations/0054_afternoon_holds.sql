DROP INDEX `exit_permission_pending_idx`;--> statement-breakpoint
ALTER TABLE `exit_permission` ADD `asked_as` text;--> statement-breakpoint
ALTER TABLE `exit_permission` ADD `accepted_by` integer REFERENCES `user`(`id`) ON DELETE set null;--> statement-breakpoint
ALTER TABLE `exit_permission` ADD `accepted_at` text;--> statement-breakpoint
ALTER TABLE `exit_permission` ADD `failures` text;--> statement-breakpoint
CREATE INDEX `exit_permission_pending_idx` ON `exit_permission` (`school_id`,`date`,`created_at`) WHERE status IN ('pending', 'awaiting_family', 'needs_review');--> statement-breakpoint
ALTER TABLE `fixed_exit_permission` ADD `status` text DEFAULT 'pending' NOT NULL;--> statement-breakpoint
ALTER TABLE `fixed_exit_permission` ADD `decided_by` integer REFERENCES `user`(`id`) ON DELETE set null;--> statement-breakpoint
ALTER TABLE `fixed_exit_permission` ADD `decided_at` text;--> statement-breakpoint
ALTER TABLE `fixed_exit_permission` ADD `decision_reason` text;--> statement-breakpoint
ALTER TABLE `fixed_exit_permission` ADD `deleted_at` text;--> statement-breakpoint
-- How each earlier permission was asked: the school's (no guardian profile), an invitation's, a
-- collector's (a profile that is no guardian of the child), else a guardian's.
UPDATE `exit_permission` SET `asked_as` = CASE
  WHEN `parent_id` IS NULL THEN 'school'
  WHEN `invitation_id` IS NOT NULL THEN 'invitation'
  WHEN NOT EXISTS (SELECT 1 FROM `guardian` g WHERE g.`student_id` = `exit_permission`.`student_id` AND g.`parent_id` = `exit_permission`.`parent_id`) THEN 'collector'
  ELSE 'guardian' END;--> statement-breakpoint
-- A collector's request past `awaiting_family` was accepted by the child's family; an invitation's, when it was asked.
UPDATE `exit_permission` SET `accepted_at` = CASE WHEN `asked_as` = 'invitation' THEN `created_at` ELSE `updated_at` END
  WHERE (`asked_as` = 'collector' AND `status` NOT IN ('awaiting_family', 'rejected')) OR `asked_as` = 'invitation';