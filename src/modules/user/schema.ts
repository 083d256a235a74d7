/**
 * A user's membership of a school: the person belongs to the school's people (listed under
 * `/api/v1/user`) whatever roles they hold there. Deleting a user in a school is soft: the
 * membership gets `deleted_at`, their roles here go, and every record that names them keeps its
 * reference (the user row stays; other schools are untouched).
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { record, schoolId, users } from "../../db/core";

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
