/**
 * Parents: a user's parent profile in a school. `family_id` is the family they belong to (set by
 * the families work; null until then); guardianship of each student lives with the students.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { families } from "./family";

export const parents = sqliteTable(
  "parent",
  {
    ...record,
    schoolId: schoolId(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    familyId: integer("family_id").references(() => families.id, { onDelete: "set null" }),
    /** mother, father, guardian, grandparent, other. */
    relationship: text("relationship", { enum: ["mother", "father", "guardian", "grandparent", "other"] })
      .notNull()
      .default("guardian"),
  },
  (t) => [
    uniqueIndex("parent_user_uq").on(t.schoolId, t.userId),
    index("parent_family_idx").on(t.familyId),
    // A user's parent profiles in every school (the board's version triggers on a user's names,
    // migrations/0061: without it each name change scanned every school's parents).
    index("parent_user_idx").on(t.userId),
    // The list's order (oldest first) within a school.
    index("parent_created_idx").on(t.schoolId, t.createdAt),
  ],
);

export const Parents = dataTable(parents, { entity: "parent" });
