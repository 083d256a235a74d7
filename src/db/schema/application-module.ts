/** The application module catalogue, and each school's state of each module. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { searchable, searchCopy } from "../search";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";

/**
 * A functional area a school may switch off (platform data, shared by every school). Built-in
 * rows have the fixed ids of `APP_MODULES` (src/lib/app-modules.ts); created ones take ids from
 * 1000 on (migration sets the sequence).
 */
export const applicationModules = searchable(
  sqliteTable(
    "application_module",
    {
      ...record,
      key: text("key").notNull(),
      name: text("name").notNull(),
      description: text("description").notNull().default(""),
      nameSearch: searchCopy("name"),
    },
    (t) => [
      uniqueIndex("application_module_key_uq").on(t.key),
      index("application_module_name_idx").on(t.name),
      // The name filter's LIKE reads the copies of this index, not the table.
      index("application_module_name_search_idx").on(t.nameSearch),
    ],
  ),
  { name: "nameSearch" },
);

/**
 * Whether a school has a module enabled. A missing row means enabled (the default): initialising
 * a school writes the rows, a toggle writes the school's missing rows first.
 */
export const schoolModules = sqliteTable(
  "school_module",
  {
    ...record,
    schoolId: schoolId(),
    moduleId: integer("module_id")
      .notNull()
      .references(() => applicationModules.id, { onDelete: "cascade" }),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    /** Who last switched it; null for the initial state and for a user since deleted. */
    updatedBy: integer("updated_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [
    uniqueIndex("school_module_uq").on(t.schoolId, t.moduleId),
    // Deleting a catalogue module cascades through this.
    index("school_module_module_idx").on(t.moduleId),
  ],
);

export const ApplicationModules = dataTable(applicationModules, { entity: "application-module" });
export const SchoolModules = dataTable(schoolModules, { entity: "school-module" });
