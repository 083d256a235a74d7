/** The schedule configuration of a school. */
import { integer, sqliteTable, uniqueIndex } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { record, schoolId } from "./core";

/** How far ahead exit permissions are asked and generated: one per school. */
export const scheduleConfigurations = sqliteTable(
  "schedule_configuration",
  {
    ...record,
    schoolId: schoolId(),
    permissionTimeLimit: integer("permission_time_limit").notNull(),
    permissionWeeksInAdvance: integer("permission_weeks_in_advance").notNull(),
  },
  (t) => [uniqueIndex("schedule_configuration_school_uq").on(t.schoolId)],
);

export const ScheduleConfigurations = dataTable(scheduleConfigurations, { entity: "schedule-configuration" });
