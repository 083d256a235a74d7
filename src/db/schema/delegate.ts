/**
 * Delegates: a person a parent lets act for them in the app, between two dates (inclusive, in the
 * school's time zone), with no more rights than that parent.
 */
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { parents } from "./parent";

export const delegates = sqliteTable(
  "delegate",
  {
    ...record,
    schoolId: schoolId(),
    parentId: integer("parent_id")
      .notNull()
      .references(() => parents.id, { onDelete: "cascade" }),
    /** The delegate: a user (found or invited by phone). */
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** YYYY-MM-DD, inclusive. */
    validFrom: text("valid_from").notNull(),
    validUntil: text("valid_until").notNull(),
  },
  (t) => [
    uniqueIndex("delegate_uq").on(t.schoolId, t.parentId, t.userId),
    index("delegate_user_idx").on(t.userId, t.validUntil),
    index("delegate_created_idx").on(t.schoolId, t.createdAt),
    check("delegate_dates_ck", sql`${t.validFrom} <= ${t.validUntil}`),
  ],
);

export const Delegates = dataTable(delegates, { entity: "delegate" });
