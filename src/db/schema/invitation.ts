/**
 * Invitations: a guardian invites other families' children ("Ana goes home with us on Friday"), or
 * a teacher or staff invites families to something. One answer row per invited family
 * (`invitation_response`) and one per invited child (`invitation_student_response`): the child's
 * guardians answer per child before the expiry; an accepted go-home invitation makes the child's
 * exit permission through the rules, and its id (or the rules' refusal) is kept on the child's row.
 *
 * States: invitation `open` -> `closed` | `cancelled` (by its creator or staff); a child's answer
 * `pending` -> `accepted` | `declined` (changed by a guardian while the invitation is open and not
 * expired); a family's `status` sums its children's: `pending`, `accepted`, `declined` or `partial`.
 */
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { families } from "./family";
import { parents } from "./parent";
import { students } from "./student";
import { routeStops, routes } from "./transport";

export const INVITATION_KINDS = ["go_home", "general"] as const;
export const INVITATION_STATUSES = ["open", "closed", "cancelled"] as const;
/** How invited children go home on a go-home invitation's date. */
export const INVITATION_PICKUPS = ["auto_pickup", "route_change"] as const;
export const ANSWERS = ["pending", "accepted", "declined"] as const;
export const RESPONSE_STATUSES = ["pending", "accepted", "declined", "partial"] as const;

export const invitations = sqliteTable(
  "invitation",
  {
    ...record,
    schoolId: schoolId(),
    kind: text("kind", { enum: INVITATION_KINDS }).notNull(),
    title: text("title").notNull(),
    message: text("message"),
    /** The inviting user, and the guardian profile they invited as (theirs or the parent they act for; null for staff and teachers). */
    createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
    parentId: integer("parent_id").references(() => parents.id, { onDelete: "set null" }),
    /**
     * Whose invitation it is: the inviting guardian's user (a delegate invites for their parent), else the
     * inviting user. The creator's lists and rights go by it.
     */
    ownerId: integer("owner_id").references(() => users.id, { onDelete: "set null" }),
    /** School-local `YYYY-MM-DD`: the day it is for (the day the children go home; the event's day). */
    date: text("date").notNull(),
    /** go_home: collected by the inviting guardian (`auto_pickup`) or on the inviter's route and stop. */
    pickup: text("pickup", { enum: INVITATION_PICKUPS }),
    routeId: integer("route_id").references(() => routes.id, { onDelete: "set null" }),
    stopId: integer("stop_id").references(() => routeStops.id, { onDelete: "set null" }),
    /** ISO instant after which no answer is taken (null: until closed). */
    expiresAt: text("expires_at"),
    status: text("status", { enum: INVITATION_STATUSES }).notNull().default("open"),
  },
  (t) => [
    // Lists are ordered by the day, then creation: every filter's index ends with them.
    index("invitation_date_idx").on(t.schoolId, t.date, t.createdAt),
    index("invitation_status_idx").on(t.schoolId, t.status, t.date, t.createdAt),
    index("invitation_kind_idx").on(t.schoolId, t.kind, t.date, t.createdAt),
    index("invitation_owner_idx").on(t.ownerId, t.date, t.createdAt),
    index("invitation_created_by_idx").on(t.createdBy),
    index("invitation_parent_idx").on(t.parentId),
    index("invitation_route_idx").on(t.routeId),
    index("invitation_stop_idx").on(t.stopId),
    check("invitation_go_home_ck", sql`${t.kind} <> 'go_home' OR ${t.pickup} IS NOT NULL`),
  ],
);

/** One invited family's answer: the family of the invited children (null: a child of no family, alone). */
export const invitationResponses = sqliteTable(
  "invitation_response",
  {
    ...record,
    schoolId: schoolId(),
    invitationId: integer("invitation_id")
      .notNull()
      .references(() => invitations.id, { onDelete: "cascade" }),
    familyId: integer("family_id").references(() => families.id, { onDelete: "set null" }),
    status: text("status", { enum: RESPONSE_STATUSES }).notNull().default("pending"),
    respondedBy: integer("responded_by").references(() => users.id, { onDelete: "set null" }),
    respondedAt: text("responded_at"),
  },
  (t) => [
    uniqueIndex("invitation_response_family_uq").on(t.invitationId, t.familyId),
    index("invitation_response_school_idx").on(t.schoolId, t.createdAt),
    index("invitation_response_invitation_idx").on(t.invitationId, t.createdAt),
    index("invitation_response_status_idx").on(t.invitationId, t.status, t.createdAt),
  ],
);

/** One invited child's answer, and what it made: the exit permission, or the rules' refusal. */
export const invitationStudentResponses = sqliteTable(
  "invitation_student_response",
  {
    ...record,
    schoolId: schoolId(),
    invitationId: integer("invitation_id")
      .notNull()
      .references(() => invitations.id, { onDelete: "cascade" }),
    responseId: integer("response_id")
      .notNull()
      .references(() => invitationResponses.id, { onDelete: "cascade" }),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    answer: text("answer", { enum: ANSWERS }).notNull().default("pending"),
    answeredBy: integer("answered_by").references(() => users.id, { onDelete: "set null" }),
    answeredAt: text("answered_at"),
    /** The exit permission the acceptance made (no foreign key: the permission is another area's record). */
    exitPermissionId: integer("exit_permission_id"),
    /** The rules' refusal of the acceptance: `[{ code, message, ... }]`. */
    failures: text("failures", { mode: "json" }).$type<{ code: string; message: string }[]>(),
  },
  (t) => [
    uniqueIndex("invitation_student_response_uq").on(t.invitationId, t.studentId),
    index("invitation_student_response_response_idx").on(t.responseId, t.createdAt),
    index("invitation_student_response_response_answer_idx").on(t.responseId, t.answer, t.createdAt),
    index("invitation_student_response_school_idx").on(t.schoolId, t.createdAt),
    index("invitation_student_response_student_idx").on(t.studentId, t.createdAt),
    index("invitation_student_response_answer_idx").on(t.invitationId, t.answer, t.createdAt),
    index("invitation_student_response_invitation_idx").on(t.invitationId, t.createdAt),
    index("invitation_student_response_school_answer_idx").on(t.schoolId, t.answer, t.createdAt),
  ],
);

export const Invitations = dataTable(invitations, { entity: "invitation" });
export const InvitationResponses = dataTable(invitationResponses, { entity: "invitation-response" });
export const InvitationStudentResponses = dataTable(invitationStudentResponses, {
  entity: "invitation-student-response",
});
