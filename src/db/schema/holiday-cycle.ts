/** Holiday cycles of a school configuration. */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { record, schoolId } from "./core";
import { schoolConfigurations } from "./school-configuration";

export const schoolHolidayCycles = sqliteTable(
  "school_holiday_cycle",
  {
    ...record,
    schoolId: schoolId(),
    schoolConfigurationId: integer("school_configuration_id")
      .notNull()
      .references(() => schoolConfigurations.id, { onDelete: "cascade" }),
    startHolidays: text("start_holidays").notNull(),
    endHolidays: text("end_holidays").notNull(),
  },
  (t) => [
    index("school_holiday_cycle_school_idx").on(t.schoolId, t.startHolidays),
    index("school_holiday_cycle_configuration_idx").on(t.schoolConfigurationId),
  ],
);

export const SchoolHolidayCycles = dataTable(schoolHolidayCycles, { entity: "school-holiday-cycle" });
