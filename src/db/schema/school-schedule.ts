/** The school day of each level, per weekday. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { LEVELS } from "../../lib/levels";
import { dataTable } from "../table";
import { record, schoolId } from "./core";

export type { Level } from "../../lib/levels";
export { LEVELS };

/**
 * When a level's day starts and ends on one ISO weekday (1 Monday .. 7 Sunday), as school-local
 * `HH:mm` (the school's IANA time zone, `school.time_zone`). One per (school, level, weekday).
 */
export const schoolSchedules = sqliteTable(
  "school_schedule",
  {
    ...record,
    schoolId: schoolId(),
    level: text("level", { enum: LEVELS }).notNull(),
    weekday: integer("weekday").notNull(),
    entryTime: text("entry_time").notNull(),
    dismissalTime: text("dismissal_time").notNull(),
    /** When the after-school program ends; null when the level has none that day. */
    afterSchoolEndTime: text("after_school_end_time"),
  },
  (t) => [
    // One schedule per level and weekday; serves the `level` filter and the default order.
    uniqueIndex("school_schedule_level_weekday_uq").on(t.schoolId, t.level, t.weekday),
    // Serves the `weekday` filter in the default order (level within the weekday).
    index("school_schedule_weekday_idx").on(t.schoolId, t.weekday, t.level),
  ],
);

export const SchoolSchedules = dataTable(schoolSchedules, { entity: "school-schedule" });
