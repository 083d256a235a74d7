/**
 * What the invitation operations share: whom the caller acts for, who sees an invitation (its
 * creator, its recipients, `invitation.manage`), the records and their schemas, a paginated read.
 *
 * Recipients are the guardians of the invited children, and the valid delegates of those guardians
 * today (`actingFor`). Creators are the inviting user, and, for an invitation made as a guardian,
 * that guardian and their delegates.
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Batch } from "../../db/batch";
import type { Query } from "../../db/query";
import {
  ANSWERS,
  INVITATION_KINDS,
  INVITATION_PICKUPS,
  type INVITATION_STATUSES,
  InvitationStudentResponses,
  invitationStudentResponses,
  invitations,
  RESPONSE_STATUSES,
} from "../../db/schema/invitation";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians } from "../../db/schema/student";
import { eq, or, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import { actedUsers, type SchoolCtx } from "../../lib/context";
import { parseJson } from "../../lib/json";
import { Listing, type OrderKey, orderTerms, type PageInput } from "../../lib/pagination";
import { RecordBase, timestamps } from "../../lib/resource";
import { actedFor, actingLoader } from "../delegate/api";
import { permissions } from "./permissions";

/** The context loader of every invitation route: whom a caller who does not manage invitations acts for. */
export const actingContext = actingLoader(permissions.manage);

export { actedUsers };

/**
 * `column` is one of the users the caller acts for: one user (the usual case) is an equality, which an
 * index serves with no list to walk.
 */
export function byActed(ctx: SchoolCtx, column: SQLiteColumn): SQL {
  const users = actedUsers(ctx);
  const [only] = users;
  return users.length === 1 && only !== undefined ? eq(column, only) : actedFor(column, users);
}

/** The students the caller is a guardian of (or a delegate of a guardian of), as a sub-select. */
export function ownStudents(ctx: SchoolCtx) {
  return Guardians.select(ctx, { id: guardians.studentId })
    .join(Parents, eq(parents.id, guardians.parentId))
    .where(byActed(ctx, parents.userId));
}

/**
 * Invitations the caller owns: made by themself or as their guardian profile, or by or for the
 * parent they are a valid delegate of. One user (the usual case) is an equality, which the owner
 * index serves in the lists' order.
 */
export function createdByMe(ctx: SchoolCtx): SQL {
  const users = actedUsers(ctx);
  const [only] = users;
  return users.length === 1 && only !== undefined
    ? eq(invitations.ownerId, only)
    : actedFor(invitations.ownerId, users);
}

/** Invitations that invite a child of the caller's (a recipient). */
export const receivedByMe = (ctx: SchoolCtx): SQL =>
  InvitationStudentResponses.exists(
    ctx,
    eq(invitationStudentResponses.invitationId, invitations.id),
    inList(invitationStudentResponses.studentId, ownStudents(ctx)),
  );

/** Who sees an invitation: `invitation.manage` every one; anyone else the ones they created or received. */
export const visibleInvitation = (ctx: SchoolCtx): SQL | undefined =>
  ctx.can(permissions.manage) ? undefined : or(createdByMe(ctx), receivedByMe(ctx));

// ---- Records ------------------------------------------------------------------------------------

const Day = z.iso.date().openapi({ example: "2026-12-04", description: "School-local YYYY-MM-DD" });

export const Counts = z.object({
  invited: z.number().int().openapi({ example: 2, description: "Children invited" }),
  accepted: z.number().int().openapi({ example: 1, description: "Children whose family accepted" }),
  declined: z.number().int().openapi({ example: 0, description: "Children whose family declined" }),
  pending: z.number().int().openapi({ example: 1, description: "Children not answered yet" }),
});

/**
 * The statuses an invitation shows: its stored one, except that an open invitation past its
 * `expiresAt` shows `expired` (computed on the clock when read: no sweep, so it is exact to the
 * second and costs nothing; it takes no answers either way).
 */
export const SHOWN_INVITATION_STATUSES = ["open", "expired", "closed", "cancelled"] as const;

export const InvitationRecord = RecordBase.extend({
  kind: z.enum(INVITATION_KINDS).openapi({
    example: "go_home",
    description: "go_home (the child goes home with the inviter: an exit permission per acceptance) or another kind",
  }),
  title: z.string().openapi({ example: "Ana comes home with us", description: "What the families see first" }),
  message: z.string().nullable().openapi({ description: "More words for the families; null if none" }),
  createdBy: z.number().int().nullable().openapi({ description: "The inviting user" }),
  parentId: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "The guardian profile the invitation was made as; null for staff and teachers" }),
  date: Day,
  pickup: z.enum(INVITATION_PICKUPS).nullable().openapi({
    description: "go_home: auto_pickup (the inviting guardian collects) or route_change (the inviter's route and stop)",
  }),
  routeId: z.number().int().nullable(),
  stopId: z.number().int().nullable(),
  expiresAt: z.iso.datetime().nullable().openapi({ description: "No answer is taken after it (null: until closed)" }),
  status: z.enum(SHOWN_INVITATION_STATUSES).openapi({
    example: "open",
    description:
      "open (takes answers), expired (open, but its expiresAt has passed: it takes no answers), closed or cancelled",
  }),
  counts: Counts.openapi({ description: "The invited children and their answers" }),
});
export type InvitationRecordOf = z.output<typeof InvitationRecord>;

/** The answers to an invitation, counted in one sub-select (index invitation_student_response_answer_idx). */
export const countsJson = sql<string>`(SELECT json_object('invited', count(*), 'accepted', coalesce(sum(s.answer = 'accepted'), 0), 'declined', coalesce(sum(s.answer = 'declined'), 0), 'pending', coalesce(sum(s.answer = 'pending'), 0)) FROM invitation_student_response s WHERE s.invitation_id = "invitation"."id")`;

type InvitationRow = typeof invitations.$inferSelect & { counts: string };

/** The status an invitation shows at `now`. */
export const shownStatus = (
  row: { status: (typeof INVITATION_STATUSES)[number]; expiresAt: string | null },
  now: Date,
) => (row.status === "open" && row.expiresAt !== null && row.expiresAt <= now.toISOString() ? "expired" : row.status);

export function toInvitation(row: InvitationRow, now: Date): InvitationRecordOf {
  const counts = parseJson(Counts, row.counts || "{}", { invited: 0, accepted: 0, declined: 0, pending: 0 });
  return {
    ...timestamps(row),
    kind: row.kind,
    title: row.title,
    message: row.message,
    createdBy: row.createdBy,
    parentId: row.parentId,
    date: row.date,
    pickup: row.pickup,
    routeId: row.routeId,
    stopId: row.stopId,
    expiresAt: row.expiresAt,
    status: shownStatus(row, now),
    counts,
  };
}

export const ResponseRecord = RecordBase.extend({
  invitationId: z.number().int(),
  familyId: z.number().int().nullable().openapi({ description: "The invited family; null for a child of no family" }),
  status: z.enum(RESPONSE_STATUSES).openapi({
    example: "partial",
    description: "Its children's answers: all pending, all accepted, all declined, or partial (mixed)",
  }),
  respondedBy: z.number().int().nullable(),
  respondedAt: z.iso.datetime().nullable(),
});

export const Failure = z
  .object({
    code: z.string().openapi({ description: "The rule that failed, stable across versions and languages" }),
    message: z.string().openapi({ description: "Why, in the caller's language" }),
  })
  .catchall(z.unknown())
  .openapi("InvitationRuleFailure", {
    description:
      "A rule the child's exit permission did not pass: its code, why, and the facts behind it as further fields",
    example: {
      code: "too-late",
      message: "Too late: changes for 2026-11-27 had to arrive by 2026-11-27T13:00:00-06:00 (dismissal 15:00)",
      date: "2026-11-27",
      deadline: "2026-11-27T13:00:00-06:00",
      dismissal: "15:00",
    },
  });

export const StudentResponseRecord = RecordBase.extend({
  invitationId: z.number().int(),
  responseId: z.number().int(),
  studentId: z.number().int(),
  answer: z.enum(ANSWERS).openapi({ example: "accepted", description: "pending, accepted or declined" }),
  answeredBy: z.number().int().nullable(),
  answeredAt: z.iso.datetime().nullable(),
  exitPermissionId: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "go_home, accepted: the exit permission the acceptance made" }),
  failures: z
    .array(Failure)
    .nullable()
    .openapi({ description: "go_home, accepted: why the rules refused the exit permission (null: not refused)" }),
});

/** A family's status from its children's answers, as SQL over the UPDATE's own row. */
export const familyStatus = sql`(SELECT CASE WHEN count(*) = 0 THEN 'pending' WHEN sum(s.answer = 'pending') = count(*) THEN 'pending' WHEN sum(s.answer = 'accepted') = count(*) THEN 'accepted' WHEN sum(s.answer = 'declined') = count(*) THEN 'declined' ELSE 'partial' END FROM invitation_student_response s WHERE s.response_id = "invitation_response"."id")`;

export const Answer = z
  .enum(["accepted", "declined"])
  .openapi({ example: "accepted", description: "The family's answer for the child" });

// ---- A paginated read of a verb of its own ------------------------------------------------------

/**
 * A page of `rows` in `order` and the total of `total`, in one D1 round trip; with `parent`, the
 * record the rows belong to is read in the same round trip, and `missing` is thrown when it is not
 * there for the caller.
 */
export async function pageOfRows<Row, T>(
  ctx: SchoolCtx,
  query: {
    rows: Query<Row>;
    total: Query<{ n: number }>;
    order: readonly OrderKey[];
    parent?: { read: Query<unknown>; missing: () => Error };
  },
  page: PageInput,
  toRecord: (row: Row) => T,
): Promise<Listing<T>> {
  const batch = new Batch(ctx);
  const parent = query.parent && batch.read(query.parent.read);
  const read = batch.read(
    query.rows
      .orderBy(...orderTerms(query.order))
      .limit(page.pageSize)
      .offset((page.page - 1) * page.pageSize),
  );
  const count = batch.read(query.total);
  const results = await batch.commit();
  if (parent && query.parent && results.get(parent).length === 0) throw query.parent.missing();
  return new Listing(results.get(read).map(toRecord), results.get(count)[0]?.n ?? 0, page);
}

/** Lists of invitations: the day it is for, latest first, then the newest. */
export const INVITATION_ORDER: OrderKey[] = [
  { by: invitations.date, desc: true },
  { by: invitations.createdAt, desc: true },
  { by: invitations.id, desc: true },
];
