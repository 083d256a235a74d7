/** School configurations (school years). */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { record, schoolId } from "./core";

/** A school's configuration for a school year; holiday cycles belong to one. */
export const schoolConfigurations = sqliteTable(
  "school_configuration",
  {
    ...record,
    schoolId: schoolId(),
    name: text("name").notNull(),
    /** School year, YYYY-MM-DD. */
    startDate: text("start_date").notNull(),
    endDate: text("end_date").notNull(),
    maxParentsPerFamily: integer("max_parents_per_family").notNull().default(2),
    /** Exit permissions asked for a date of this school year are confirmed as they are asked (the rules still apply). */
    autoConfirmExitPermissions: integer("auto_confirm_exit_permissions", { mode: "boolean" }).notNull().default(false),
    /** Bus positions of this school year's runs are kept for the day; false: none, only each run's last one. */
    keepBusPositions: integer("keep_bus_positions", { mode: "boolean" }).notNull().default(true),
  },
  (t) => [index("school_configuration_school_idx").on(t.schoolId, t.startDate)],
);

export const SchoolConfigurations = dataTable(schoolConfigurations, { entity: "school-configuration" });
