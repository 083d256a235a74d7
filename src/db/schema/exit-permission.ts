/**
 * The afternoon: how each student goes home on a date. An exit permission is one request for one
 * student and one school-local date (`YYYY-MM-DD`); a fixed one repeats on weekdays over a date
 * range and a scheduled job makes the concrete ones from it.
 *
 * States: `awaiting_family` (it names another family's child: their guardian answers first) ->
 * `pending` -> `confirmed` | `rejected`; `needs_review` (a day of a fixed permission the rules
 * refused on that day: it waits for the office, with `failures`); `cancelled` by the asker while
 * pending (or withdrawn with its fixed one, or by staff); `superseded` when a later one for the
 * same student and date is confirmed (both kept); `withdrawn` when a fact it stood on changed (a
 * guardian restricted or removed, a trusted person withdrawn, a holiday added, fewer seats, the
 * student removed): `failures` says which rules it fails now. At most one confirmed permission per
 * student and date: a partial unique index.
 */
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { parents } from "./parent";
import { students } from "./student";
import { routeStops, routes } from "./transport";
import { trustedAddresses } from "./trusted-address";
import { trustedPeople } from "./trusted-person";

export const EXIT_PERMISSION_KINDS = ["route_change", "no_after_school", "auto_pickup", "absence"] as const;
export type ExitPermissionKind = (typeof EXIT_PERMISSION_KINDS)[number];
export const FIXED_EXIT_PERMISSION_KINDS = ["route_change", "auto_pickup"] as const;
export const EXIT_PERMISSION_STATUSES = [
  "awaiting_family",
  "pending",
  "confirmed",
  "rejected",
  "cancelled",
  "superseded",
  "needs_review",
  "withdrawn",
] as const;
export type ExitPermissionStatus = (typeof EXIT_PERMISSION_STATUSES)[number];
/** The states in which a permission still stands or may still come to stand (a fact change decides them again). */
export const OPEN_EXIT_PERMISSION_STATUSES = [
  "awaiting_family",
  "pending",
  "needs_review",
  "confirmed",
] as const satisfies readonly ExitPermissionStatus[];
/**
 * How the asker stood to the student when they asked: the school (staff, or the school's own fixed
 * permission), a guardian (themself or as a delegate: `parentId` is the guardian profile), a parent
 * collecting another family's child (the family answers first), or the child's guardian answering
 * an invitation (the inviting guardian collects).
 */
export const ASKED_AS = ["school", "guardian", "collector", "invitation"] as const;
export type AskedAs = (typeof ASKED_AS)[number];
/** A failed rule as stored with a permission the rules refuse now: its code, message (as written) and facts. */
export type StoredFailure = { code: string; message: string; [fact: string]: unknown };
export const FIXED_EXIT_PERMISSION_STATUSES = ["pending", "confirmed", "rejected"] as const;

/**
 * Where the student goes instead, by kind: a route change names a route and stop (another route,
 * or another stop of their own) or a trusted address; an auto pickup names a guardian or an
 * approved trusted person who collects. The other kinds name neither.
 */
const target = () => ({
  routeId: integer("route_id").references(() => routes.id, { onDelete: "set null" }),
  stopId: integer("stop_id").references(() => routeStops.id, { onDelete: "set null" }),
  trustedAddressId: integer("trusted_address_id").references(() => trustedAddresses.id, { onDelete: "set null" }),
  pickupParentId: integer("pickup_parent_id").references(() => parents.id, { onDelete: "set null" }),
  trustedPersonId: integer("trusted_person_id").references(() => trustedPeople.id, { onDelete: "set null" }),
});

/** Who asked: the user, and the guardian profile they asked as (theirs, or the parent they are a delegate of; null for staff). */
const asker = () => ({
  askedBy: integer("asked_by").references(() => users.id, { onDelete: "set null" }),
  parentId: integer("parent_id").references(() => parents.id, { onDelete: "set null" }),
  /** The asker's note ("grandma collects her"). */
  reason: text("reason"),
});

/** A recurring permission: on the given weekdays between two dates, inclusive. */
export const fixedExitPermissions = sqliteTable(
  "fixed_exit_permission",
  {
    ...record,
    schoolId: schoolId(),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: FIXED_EXIT_PERMISSION_KINDS }).notNull(),
    /** ISO weekdays as a bit mask (bit d-1 for weekday d), as routes keep them. */
    weekdays: integer("weekdays").notNull(),
    fromDate: text("from_date").notNull(),
    untilDate: text("until_date").notNull(),
    ...target(),
    ...asker(),
    /** The last date the job has made permissions for (null: none yet). */
    generatedUntil: text("generated_until"),
    /**
     * The school's decision on the pattern: once `confirmed`, each day it makes is confirmed when the
     * rules pass on that day (else it waits for the office, `needs_review`); `rejected` makes none.
     */
    status: text("status", { enum: FIXED_EXIT_PERMISSION_STATUSES }).notNull().default("pending"),
    decidedBy: integer("decided_by").references(() => users.id, { onDelete: "set null" }),
    decidedAt: text("decided_at"),
    decisionReason: text("decision_reason"),
    /** Deleted: it makes no more days; the days it made stay listed under it (their lineage). */
    deletedAt: text("deleted_at"),
  },
  (t) => [
    index("fixed_exit_permission_school_idx").on(t.schoolId, t.kind, t.createdAt),
    index("fixed_exit_permission_student_idx").on(t.schoolId, t.studentId),
    index("fixed_exit_permission_due_idx").on(t.untilDate),
    check("fixed_exit_permission_dates_ck", sql`${t.fromDate} <= ${t.untilDate}`),
  ],
);

export const exitPermissions = sqliteTable(
  "exit_permission",
  {
    ...record,
    schoolId: schoolId(),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    /** School-local `YYYY-MM-DD`. */
    date: text("date").notNull(),
    kind: text("kind", { enum: EXIT_PERMISSION_KINDS }).notNull(),
    status: text("status", { enum: EXIT_PERMISSION_STATUSES }).notNull().default("pending"),
    ...target(),
    ...asker(),
    decidedBy: integer("decided_by").references(() => users.id, { onDelete: "set null" }),
    decidedAt: text("decided_at"),
    decisionReason: text("decision_reason"),
    /** The confirmed permission that replaced this one (status `superseded`). */
    supersededBy: integer("superseded_by"),
    /** The fixed permission it was made from; unique per date, so the job never makes a day twice. */
    fixedId: integer("fixed_id").references(() => fixedExitPermissions.id, { onDelete: "set null" }),
    /** The invitation whose acceptance made it (the invitation tables live with their module). */
    invitationId: integer("invitation_id"),
    /** How the asker stood to the student when they asked (`ASKED_AS`); null on rows older than it. */
    askedAs: text("asked_as", { enum: ASKED_AS }),
    /**
     * The child's family accepted another family's collector (`POST /{id}/respond`, or the answer to
     * an invitation): who and when. An edit of the date, child, collector or route clears it.
     */
    acceptedBy: integer("accepted_by").references(() => users.id, { onDelete: "set null" }),
    acceptedAt: text("accepted_at"),
    /** The rules it failed (`needs_review`: on the day it was made; `withdrawn`: after a fact changed). */
    failures: text("failures", { mode: "json" }).$type<StoredFailure[]>(),
    /** The public link's random part. */
    slug: text("slug").notNull(),
  },
  (t) => [
    uniqueIndex("exit_permission_slug_uq").on(t.slug),
    index("exit_permission_school_idx").on(t.schoolId, t.createdAt),
    index("exit_permission_date_idx").on(t.schoolId, t.date, t.status),
    // The list's order is by day: each filter's index ends with the date (and the row id).
    index("exit_permission_day_idx").on(t.schoolId, t.date),
    index("exit_permission_kind_idx").on(t.schoolId, t.kind, t.date),
    index("exit_permission_status_idx").on(t.schoolId, t.status, t.date),
    index("exit_permission_student_idx").on(t.schoolId, t.studentId, t.date),
    // The day's authorizations waiting for a decision, oldest first (the summary's pending list).
    index("exit_permission_pending_idx")
      .on(t.schoolId, t.date, t.createdAt)
      .where(sql`status IN ('pending', 'awaiting_family', 'needs_review')`),
    uniqueIndex("exit_permission_fixed_uq").on(t.fixedId, t.date),
    uniqueIndex("exit_permission_effective_uq").on(t.studentId, t.date).where(sql`status = 'confirmed'`),
    check(
      "exit_permission_decided_ck",
      sql`${t.status} NOT IN ('confirmed', 'rejected') OR ${t.decidedAt} IS NOT NULL`,
    ),
  ],
);

export const ExitPermissions = dataTable(exitPermissions, { entity: "exit-permission" });
export const FixedExitPermissions = dataTable(fixedExitPermissions, { entity: "fixed-exit-permission" });
