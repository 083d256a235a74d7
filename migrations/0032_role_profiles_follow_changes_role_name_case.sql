-- Role names: unique in a school whatever their case, accented capitals included ("Dirección" and
-- "DIRECCIÓN" are one name): NOCASE folds ASCII only, so the accented capitals are lowered first
-- (drizzle-kit cannot write this expression: it splits it at its commas).
DROP INDEX `role_school_name_nocase_uq`;--> statement-breakpoint
CREATE UNIQUE INDEX `role_school_name_case_uq` ON `role` (`school_id`, replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace("name", 'Á', 'á'), 'À', 'à'), 'Â', 'â'), 'Ã', 'ã'), 'É', 'é'), 'È', 'è'), 'Ê', 'ê'), 'Í', 'í'), 'Ó', 'ó'), 'Ô', 'ô'), 'Õ', 'õ'), 'Ú', 'ú'), 'Ü', 'ü'), 'Ñ', 'ñ'), 'Ç', 'ç') COLLATE NOCASE);--> statement-breakpoint
-- Profiles follow roles also when a membership's role is changed in place (PUT /api/v1/role-user/{id}):
-- the old built-in role's profile goes and the new one's comes, as a DELETE and an INSERT would do.
CREATE TRIGGER `role_user_profile_update` AFTER UPDATE OF `role_id` ON `role_user`
  WHEN OLD.`role_id` IS NOT NEW.`role_id` AND (OLD.`role_id` IN (3, 4, 5) OR NEW.`role_id` IN (3, 4, 5)) BEGIN
  DELETE FROM `administrative_user` WHERE OLD.`role_id` = 3 AND `school_id` = OLD.`school_id` AND `user_id` = OLD.`user_id`;
  DELETE FROM `teacher` WHERE OLD.`role_id` = 4 AND `school_id` = OLD.`school_id` AND `user_id` = OLD.`user_id`;
  DELETE FROM `parent` WHERE OLD.`role_id` = 5 AND `school_id` = OLD.`school_id` AND `user_id` = OLD.`user_id`;
  INSERT OR IGNORE INTO `administrative_user` (`school_id`, `user_id`, `created_at`, `updated_at`)
    SELECT NEW.`school_id`, NEW.`user_id`, NEW.`updated_at`, NEW.`updated_at` WHERE NEW.`role_id` = 3;
  INSERT OR IGNORE INTO `teacher` (`school_id`, `user_id`, `created_at`, `updated_at`)
    SELECT NEW.`school_id`, NEW.`user_id`, NEW.`updated_at`, NEW.`updated_at` WHERE NEW.`role_id` = 4;
  INSERT OR IGNORE INTO `parent` (`school_id`, `user_id`, `created_at`, `updated_at`)
    SELECT NEW.`school_id`, NEW.`user_id`, NEW.`updated_at`, NEW.`updated_at` WHERE NEW.`role_id` = 5;
END;
