/**
 * Delegates: a person a parent lets act for them in the app, between two dates (inclusive, in the
 * school's time zone), with no more rights than that parent.
 */
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { and, eq, gte, lte, ne, sql } from "../sql";
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

const DAY_MS = 24 * 3600 * 1000;
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The delegations of `userId` that may be valid today in some school: the UTC date ±1 day covers
 * every time zone (`validToday` then decides in each school's), of parents who may sign in (no
 * more rights than the parent: an `inactive` parent gives their delegates none). The query joins
 * `parent` on `delegate.parent_id` and `user` on the parent's user (the parent's status); the index
 * `delegate_user_idx (user_id, valid_until)` serves it. Every reader of delegations uses it: the
 * access token, `actingFor`, `/user/me`, `/group/mine`, the events' audience.
 */
export function delegationsAround(userId: number, now: Date) {
  return and(
    eq(delegates.userId, userId),
    ne(users.status, "inactive"),
    gte(delegates.validUntil, utcDate(now.getTime() - DAY_MS)),
    lte(delegates.validFrom, utcDate(now.getTime() + DAY_MS)),
  );
}
