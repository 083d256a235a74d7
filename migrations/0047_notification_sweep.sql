DROP INDEX `notification_undispatched_idx`;--> statement-breakpoint
CREATE INDEX `notification_unfinished_idx` ON `notification` (`updated_at`) WHERE fanned_out_at IS NULL;