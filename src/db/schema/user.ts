/**
 * A user's membership of a school: the person belongs to the school's people (listed under
 * `/api/v1/user`) whatever roles they hold there. Deleting a user in a school is soft: the
 * membership gets `deleted_at`, their roles here go, and every record that names them keeps its
 * reference (the user row stays; other schools are untouched).
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { searchable, searchCopy } from "../search";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";

export const schoolUsers = sqliteTable(
  "school_user",
  {
    ...record,
    schoolId: schoolId(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** When the school removed the person (soft delete); null while they belong. */
    deletedAt: text("deleted_at"),
    /** The last time the school texted them an invitation to join (null: never). */
    invitedAt: text("invited_at"),
  },
  (t) => [
    uniqueIndex("school_user_uq").on(t.schoolId, t.userId),
    index("school_user_created_idx").on(t.schoolId, t.createdAt),
    index("school_user_user_idx").on(t.userId),
  ],
);

/**
 * A person as one school knows them, when that is not the user row: the name and email the school
 * gave when it added a phone that already belonged to a user (known elsewhere), or its own edits of
 * a person other schools know too. The row is complete (all three fields); a school without one sees
 * the user row. Every read of a person in a school goes through `identity` (./identity.ts); the
 * person's own edits of their profile (and the super-admin's) change the user row and remove the
 * schools' copies.
 */
export const schoolPeople = searchable(
  sqliteTable(
    "school_person",
    {
      ...record,
      schoolId: schoolId(),
      userId: integer("user_id")
        .notNull()
        .references(() => users.id, { onDelete: "cascade" }),
      firstName: text("first_name").notNull(),
      lastName: text("last_name").notNull(),
      email: text("email"),
      firstNameSearch: searchCopy("first_name"),
      lastNameSearch: searchCopy("last_name"),
    },
    (t) => [uniqueIndex("school_person_uq").on(t.schoolId, t.userId), index("school_person_user_idx").on(t.userId)],
  ),
  { firstName: "firstNameSearch", lastName: "lastNameSearch" },
);

export const SchoolUsers = dataTable(schoolUsers, { entity: "school-user" });
export const SchoolPeople = dataTable(schoolPeople, { entity: "school-person" });
