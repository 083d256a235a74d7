/**
 * What trusted people and trusted addresses share: who sees which (visibility through the caller's
 * children, delegates included), who registered a request, and the decision (`PATCH .../status`).
 *
 * Visibility: holders of `trusted.manage` (school admins, staff) see and change every record of the
 * school; anyone else only the records of students they are a guardian of, themself or as a valid
 * delegate of a guardian today (`actingFor`, src/modules/delegate/acting.ts). A teacher holds no
 * trusted permission: 403, unless the school grants them.
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Schools, schools } from "../../db/schema/core";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { TRUSTED_STATUSES } from "../../db/schema/trusted-person";
import { desc, eq, isNull, type SQL, sql } from "../../db/sql";
import type { Data, RecordTable } from "../../db/table";
import { inList } from "../../db/write";
import { actedUsers, type SchoolCtx } from "../../lib/context";
import { forbidden, notFound, unprocessable } from "../../lib/errors";
import { type Message, m } from "../../lib/message";
import { stateName } from "../../lib/names";
import { idFilter } from "../../lib/params";
import type { Filter } from "../../lib/resource";
import { text } from "../../lib/text";
import { dateIn } from "../../lib/zoned-time";
import { actedFor, actingLoader } from "../delegate/api";
import { permissions } from "./permissions";

/**
 * The context loader of every trusted route: for a caller who does not manage every record, whom
 * they act for (one D1 call), in `ctx.actingFor`.
 */
export const actingContext = actingLoader(permissions.manage);

/** The students the caller is a guardian of (or a delegate of a guardian of), as a sub-select. */
export function ownStudents(ctx: SchoolCtx) {
  return Guardians.select(ctx, { id: guardians.studentId })
    .join(Parents, eq(parents.id, guardians.parentId))
    .where(actedFor(parents.userId, actedUsers(ctx)));
}

/** The resources' `visibleTo`: everything for `trusted.manage`, else one's own children's. */
export const visibleThrough =
  (studentId: SQLiteColumn) =>
  (ctx: SchoolCtx): SQL | undefined =>
    ctx.can(permissions.manage) ? undefined : inList(studentId, ownStudents(ctx));

/** What of a guardian link decides whether its parent may authorise trusted people and addresses. */
interface GuardianRights {
  canRequestChanges: boolean;
  restricted: boolean;
  restrictionUntil: string | null;
}

/**
 * Why a guardian may not authorise trusted people or addresses for the student today, or null when
 * they may. Whom a child may leave with is a change to the way home: the guardian must be allowed to
 * request changes, and not be under a school restriction that holds today or later (a court order;
 * a restriction that ended no longer counts). The one rule of registering, changing, withdrawing and
 * uploading images of a request (`registrant`, `mayAlter`).
 */
function barred(link: GuardianRights, today: string): Message | null {
  if (link.restricted && (link.restrictionUntil === null || link.restrictionUntil >= today)) {
    return m`the school has restricted this guardian (may not pick up)`;
  }
  return link.canRequestChanges ? null : m`this guardian may not request changes to the student's way home`;
}

/** The 422 of a guardian (`parentId`'s link) `barred` for the student today. */
const barredProblem = (link: GuardianRights & { parentId: number }, studentId: number, today: string) =>
  unprocessable(
    m`Parent ${link.parentId} may not authorise trusted people or addresses for student ${studentId}: ${barred(link, today)}`,
  );

/**
 * The student a request is for, and the parent profile registering it:
 * - a manager (staff): any student of the school (404 otherwise); `parentId`, when given, must be a
 *   guardian of that student (422), else the request is the school's own (null);
 * - anyone else: a student they (or the parent they are a delegate of) are a guardian of. Another
 *   student, of this school or not, is a 404 "Student n not found": a parent cannot tell a child who
 *   is not theirs from one who does not exist. `parentId`, when given, must be one of those guardians
 *   (another, such as the child's other parent, is a 403: a parent registers in their own name).
 *   That guardian must not be `barred` (422).
 */
export async function registrant(ctx: SchoolCtx, studentId: number, parentId?: number): Promise<number | null> {
  const student = [eq(students.id, studentId), isNull(students.deletedAt)];
  if (ctx.can(permissions.manage)) {
    const row = await Students.select(ctx, { id: students.id, guardian: guardians.parentId })
      .leftJoin(Guardians, sql`${eq(guardians.studentId, students.id)} AND ${eq(guardians.parentId, parentId ?? 0)}`)
      .where(...student)
      .first();
    if (!row) throw notFound(m`Student ${studentId} not found`);
    if (parentId === undefined) return null;
    if (row.guardian === null) throw unprocessable(m`Parent ${parentId} is not a guardian of student ${studentId}`);
    return parentId;
  }
  const ids = actedUsers(ctx);
  const rows = await Guardians.select(ctx, {
    parentId: guardians.parentId,
    canRequestChanges: guardians.canRequestChanges,
    restricted: guardians.restricted,
    restrictionUntil: guardians.restrictionUntil,
    timeZone: schools.timeZone,
  })
    .join(Parents, eq(parents.id, guardians.parentId))
    .join(Students, eq(students.id, guardians.studentId))
    // The student is of the current school: its time zone.
    .join(Schools, eq(schools.id, ctx.schoolId))
    .where(...student, eq(guardians.studentId, studentId), actedFor(parents.userId, ids))
    // The caller's own profile first, then a parent they act for.
    .orderBy(desc(sql`${parents.userId} = ${ctx.userId ?? 0}`))
    .all();
  if (!rows[0]) throw notFound(m`Student ${studentId} not found`);
  const named = parentId === undefined ? rows : rows.filter((r) => r.parentId === parentId);
  const first = named[0];
  if (!first)
    throw forbidden(m`Parent ${parentId} is not you or a parent you act for: a parent registers in their own name`);
  const today = dateIn(first.timeZone, ctx.deps.clock.now());
  const allowed = named.find((r) => barred(r, today) === null);
  if (!allowed) throw barredProblem(first, studentId, today);
  return allowed.parentId;
}

/** The columns of a trusted table the rule of a change reads. */
export type RequestTable = RecordTable & Record<"studentId" | "parentId", SQLiteColumn>;

/**
 * Whether the caller may change, withdraw or upload an image of request `id` (else it throws):
 * holders of `trusted.manage` (staff) any request of the school; anyone else only a request they
 * see (else 404) that was registered by themself or by the parent they act for as a valid delegate
 * (another guardian's, or the school's own, is a 403), and only while that guardian is not `barred`
 * for the student (422), as when registering: a delegate has no more rights than their parent.
 * One D1 call for a non-manager: the request, its registrant's guardian link and the school's time
 * zone; none for staff.
 */
export async function mayAlter<T extends RequestTable>(
  ctx: SchoolCtx,
  request: { data: Data<T>; label: Message },
  id: number,
) {
  if (ctx.can(permissions.manage)) return;
  const { data, label } = request;
  const table = data.table;
  const row = await data
    .select(ctx, {
      studentId: sql<number>`${table.studentId}`,
      parentId: sql<number | null>`${table.parentId}`,
      userId: parents.userId,
      canRequestChanges: guardians.canRequestChanges,
      restricted: guardians.restricted,
      restrictionUntil: guardians.restrictionUntil,
      timeZone: schools.timeZone,
    })
    // The request is of the current school: its time zone.
    .join(Schools, eq(schools.id, ctx.schoolId))
    .leftJoin(Guardians, sql`${eq(guardians.studentId, table.studentId)} AND ${eq(guardians.parentId, table.parentId)}`)
    .leftJoin(Parents, eq(parents.id, guardians.parentId))
    .where(eq(table.id, id), visibleThrough(table.studentId)(ctx))
    .first();
  if (!row) throw notFound(m`${label} ${id} not found`);
  const { parentId, userId } = row;
  if (parentId === null || userId === null || !actedUsers(ctx).includes(userId)) {
    throw forbidden(
      parentId === null
        ? m`${label} ${id} was registered by the school; only the school may change or withdraw it`
        : m`${label} ${id} was registered by another guardian; only they or the school may change or withdraw it`,
    );
  }
  // A left-joined link that is absent reads as nulls: no right to request changes.
  const link = {
    canRequestChanges: row.canRequestChanges === true,
    restricted: row.restricted === true,
    restrictionUntil: row.restrictionUntil,
  };
  const today = dateIn(row.timeZone, ctx.deps.clock.now());
  if (barred(link, today) !== null) throw barredProblem({ ...link, parentId }, row.studentId, today);
}

export const Status = z
  .enum(TRUSTED_STATUSES)
  .openapi({ example: "pending", description: "pending until the school approves or rejects it" });

/** The decision fields of both records. */
export const decisionFields = {
  status: Status,
  decidedBy: z.number().int().nullable().openapi({ description: "The user who approved or rejected it" }),
  decidedAt: z.iso.datetime().nullable(),
  reason: z.string().nullable().openapi({ description: "Why, as the reviewer wrote it" }),
};

/** `PATCH .../status`: approve or reject a pending request. */
export const DecisionBody = z.object({
  status: z.enum(["approved", "rejected"]).openapi({ example: "approved", description: "The school's decision" }),
  reason: text({ max: 500 }).optional().openapi({ example: "ID checked at the front desk" }),
});

/** The columns a decision sets: the status, who, when and why. */
export const decided = (ctx: SchoolCtx, input: z.output<typeof DecisionBody>) => ({
  status: input.status,
  decidedBy: ctx.userId,
  decidedAt: ctx.deps.clock.now().toISOString(),
  reason: input.reason ?? null,
});

/** The 409 of a decision or change of a request no longer pending. */
export const notPending = (label: Message, id: number) => (state: string) =>
  m`${label} ${id} is ${stateName(state)}; only a pending request can be changed or decided`;

/** Filters both lists offer. */
export const studentIdFilter = (column: SQLiteColumn): Filter<number> => ({
  schema: idFilter("A student id"),
  where: (_ctx, v) => eq(column, v),
  example: "1",
});

export const statusFilter = (column: SQLiteColumn): Filter<string> => ({
  schema: Status.optional().openapi({ description: "pending, approved or rejected" }),
  where: (_ctx, v) => eq(column, v),
  example: "pending",
});

export const RecordId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
