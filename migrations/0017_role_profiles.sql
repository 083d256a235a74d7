-- A built-in role's profile follows the role: giving a user the staff (3), teacher (4) or parent (5)
-- role in a school creates their profile row there (with its defaults), and taking the role away
-- removes it. role_user is the one truth of who is what; the profile holds the role's own fields.
CREATE TRIGGER `role_user_profile_insert` AFTER INSERT ON `role_user` WHEN NEW.`role_id` IN (3, 4, 5) BEGIN
  INSERT OR IGNORE INTO `administrative_user` (`school_id`, `user_id`, `created_at`, `updated_at`)
    SELECT NEW.`school_id`, NEW.`user_id`, NEW.`created_at`, NEW.`updated_at` WHERE NEW.`role_id` = 3;
  INSERT OR IGNORE INTO `teacher` (`school_id`, `user_id`, `created_at`, `updated_at`)
    SELECT NEW.`school_id`, NEW.`user_id`, NEW.`created_at`, NEW.`updated_at` WHERE NEW.`role_id` = 4;
  INSERT OR IGNORE INTO `parent` (`school_id`, `user_id`, `created_at`, `updated_at`)
    SELECT NEW.`school_id`, NEW.`user_id`, NEW.`created_at`, NEW.`updated_at` WHERE NEW.`role_id` = 5;
END;--> statement-breakpoint
CREATE TRIGGER `role_user_profile_delete` AFTER DELETE ON `role_user` WHEN OLD.`role_id` IN (3, 4, 5) BEGIN
  DELETE FROM `administrative_user` WHERE OLD.`role_id` = 3 AND `school_id` = OLD.`school_id` AND `user_id` = OLD.`user_id`;
  DELETE FROM `teacher` WHERE OLD.`role_id` = 4 AND `school_id` = OLD.`school_id` AND `user_id` = OLD.`user_id`;
  DELETE FROM `parent` WHERE OLD.`role_id` = 5 AND `school_id` = OLD.`school_id` AND `user_id` = OLD.`user_id`;
END;--> statement-breakpoint
-- The profiles of the roles already held (the demo data's).
INSERT OR IGNORE INTO `administrative_user` (`school_id`, `user_id`, `created_at`, `updated_at`)
  SELECT `school_id`, `user_id`, `created_at`, `updated_at` FROM `role_user` WHERE `role_id` = 3;--> statement-breakpoint
INSERT OR IGNORE INTO `teacher` (`school_id`, `user_id`, `created_at`, `updated_at`)
  SELECT `school_id`, `user_id`, `created_at`, `updated_at` FROM `role_user` WHERE `role_id` = 4;--> statement-breakpoint
INSERT OR IGNORE INTO `parent` (`school_id`, `user_id`, `created_at`, `updated_at`)
  SELECT `school_id`, `user_id`, `created_at`, `updated_at` FROM `role_user` WHERE `role_id` = 5;
