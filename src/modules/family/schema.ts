/** Families and students (minimal; extended by the families issue). Parents: src/modules/parent. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { record, schoolId } from "../../db/core";

/** A family: unique number per school; holds students and their parents. */
export const families = sqliteTable(
  "family",
  {
    ...record,
    schoolId: schoolId(),
    familyNumber: text("family_number").notNull(),
    name: text("name").notNull(),
  },
  (t) => [uniqueIndex("family_number_uq").on(t.schoolId, t.familyNumber)],
);

export const students = sqliteTable(
  "student",
  {
    ...record,
    schoolId: schoolId(),
    familyId: integer("family_id").references(() => families.id, { onDelete: "set null" }),
    firstName: text("first_name").notNull(),
    lastName: text("last_name").notNull(),
  },
  (t) => [index("student_school_idx").on(t.schoolId, t.lastName), index("student_family_idx").on(t.familyId)],
);
