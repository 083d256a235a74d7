/** Families, students and parents (minimal; extended by the families issue). */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { record, schoolId, users } from "../../db/core";

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

/** A parent: a user who belongs to a family of the school. */
export const parents = sqliteTable(
  "parent",
  {
    ...record,
    schoolId: schoolId(),
    familyId: integer("family_id")
      .notNull()
      .references(() => families.id, { onDelete: "cascade" }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
  },
  (t) => [uniqueIndex("parent_uq").on(t.schoolId, t.userId, t.familyId), index("parent_family_idx").on(t.familyId)],
);
