-- Moving a school between shards (docs/scaling.md "Moving a school"): the map row says whether the
-- school is paused for a move (its writes answer 503 until `paused_until`, a lease a crashed move
-- lets lapse) and the move under way (`moving_from` -> `moving_to`), so a move run again finishes
-- or undoes what the last one left.
ALTER TABLE `school_shard` ADD `paused_until` text;
--> statement-breakpoint
ALTER TABLE `school_shard` ADD `moving_from` text;
--> statement-breakpoint
ALTER TABLE `school_shard` ADD `moving_to` text;
