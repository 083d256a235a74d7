/**
 * Exit permissions as a resource: the record, who sees which, the lists and the read by id.
 *
 * Visibility: holders of `exit-permission.manage` (staff) see every permission of the school;
 * anyone else the permissions of the students they are a guardian of (themself, or as a valid
 * delegate of a guardian today), and those they asked themself (a parent collecting a friend's
 * child sees that request). Another family's permission is a 404.
 */
import { z } from "@hono/zod-openapi";
import {
  ASKED_AS,
  EXIT_PERMISSION_KINDS,
  EXIT_PERMISSION_STATUSES,
  ExitPermissions,
  exitPermissions,
} from "../../db/schema/exit-permission";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { RouteStops, Routes, routeStops, routes } from "../../db/schema/transport";
import { TrustedPeople, trustedPeople } from "../../db/schema/trusted-person";
import { eq, gte, lte, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import { actedUsers, type Ctx, type SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { m } from "../../lib/message";
import { PageQuery, pageOf } from "../../lib/pagination";
import { idFilter } from "../../lib/params";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { actedFor, actingLoader } from "../delegate/api";
import { permissions } from "./permissions";
import { isStaff } from "./snapshot";

export const Kind = z.enum(EXIT_PERMISSION_KINDS).openapi({
  example: "route_change",
  description: "route_change (another route or a trusted address), no_after_school, auto_pickup (collected) or absence",
});
export const Status = z.enum(EXIT_PERMISSION_STATUSES).openapi({
  example: "pending",
  description:
    "awaiting_family (another family must answer) -> pending -> confirmed or rejected; cancelled or superseded; " +
    "needs_review (a fixed permission's day the rules refused on that day: the office decides, see failures); " +
    "withdrawn (a fact it stood on changed: see failures)",
});

/** A refusal by the rules, as the exit permission routes show it (src/modules/exit-permission/service.ts `refusal`). */
export const TOO_LATE = {
  name: "rules",
  summary: "The rules refuse it: every failed rule, with its code",
  detail: "Too late: changes for 2026-11-27 had to arrive by 2026-11-27T13:00:00-06:00 (dismissal 15:00)",
  errors: [
    {
      path: "date",
      message: "Too late: changes for 2026-11-27 had to arrive by 2026-11-27T13:00:00-06:00 (dismissal 15:00)",
    },
  ],
  members: {
    failures: [
      {
        code: "too-late",
        message: "Too late: changes for 2026-11-27 had to arrive by 2026-11-27T13:00:00-06:00 (dismissal 15:00)",
        date: "2026-11-27",
        deadline: "2026-11-27T13:00:00-06:00",
        dismissal: "15:00",
      },
    ],
  },
};
/** The school-local date a permission is for (a calendar date in range, else a 400 before the rules run). */
export const permissionDate = (description = "The school-local date it is for") =>
  schoolDate(description, "2026-11-27");

const idOrNull = () => z.number().int().nullable();

const StoredFailureSchema = z
  .looseObject({
    code: z.string().openapi({ example: "pickup-not-allowed", description: "The rule, stable across versions" }),
    message: z.string().openapi({ description: "Why, as written when it was decided (its language then)" }),
  })
  .openapi("ExitPermissionStoredFailure", {
    description: "A failed rule with its facts (which facts depends on the rule: docs/domain.md)",
    example: {
      code: "pickup-not-allowed",
      message: "Parent 7 may not pick the student up on 2026-11-27: restricted",
      date: "2026-11-27",
      pickupParentId: 7,
      reason: "restricted",
    },
  });

export const ExitPermissionRecord = RecordBase.extend({
  studentId: z.number().int(),
  studentName: z.string().nullable().openapi({
    example: "Ana Gómez",
    description:
      "The child's name; null for a parent collecting another family's child until that family accepts (who may learn a child's name: docs/domain.md)",
  }),
  date: z.iso.date().openapi({ example: "2026-11-27", description: "The school-local day it is for" }),
  kind: Kind,
  status: Status,
  routeId: idOrNull().openapi({ description: "Route change: the route the student takes home" }),
  routeName: z.string().nullable(),
  stopId: idOrNull().openapi({ description: "Route change: the stop where the student leaves the bus" }),
  stopName: z.string().nullable(),
  trustedAddressId: idOrNull().openapi({ description: "Route change: the approved trusted address" }),
  pickupParentId: idOrNull().openapi({ description: "Auto pickup: the parent who collects" }),
  trustedPersonId: idOrNull().openapi({ description: "Auto pickup: the approved trusted person who collects" }),
  trustedPersonName: z.string().nullable(),
  askedBy: idOrNull().openapi({ description: "The user who asked" }),
  parentId: idOrNull().openapi({ description: "The guardian profile the asker asked as; null when the school did" }),
  askedAs: z.enum(ASKED_AS).nullable().openapi({
    description:
      "How the asker stood to the student: school, guardian (or their delegate), collector (another family's parent), invitation (the child's guardian accepting one)",
  }),
  acceptedAt: z.string().nullable().openapi({
    description: "When the child's family accepted another family's collector; null until then (an edit clears it)",
  }),
  failures: z.array(StoredFailureSchema).nullable().openapi({
    description: "needs_review and withdrawn: the rules it fails (as written then); null otherwise",
  }),
  reason: z.string().nullable().openapi({ description: "Why, as the family or the school wrote it" }),
  decidedBy: idOrNull(),
  decidedAt: z.string().nullable(),
  decisionReason: z.string().nullable(),
  supersededBy: idOrNull().openapi({ description: "The later confirmed permission that replaced this one" }),
  fixedId: idOrNull().openapi({ description: "The fixed (recurring) permission it was made from" }),
  invitationId: idOrNull(),
  slug: z.string().openapi({ description: "The public pass's key" }),
});

/** The context loader: for a caller who does not see every permission, whom they act for (one D1 call). */
export const actingContext = actingLoader(permissions.manage);

/** The students the caller is a guardian of (or a valid delegate of a guardian of), as a sub-select. */
export const ownStudents = (ctx: SchoolCtx) =>
  Guardians.select(ctx, { id: guardians.studentId })
    .join(Parents, eq(parents.id, guardians.parentId))
    .where(actedFor(parents.userId, actedUsers(ctx)));

/**
 * Who may learn a child's name from a permission: staff, the child's guardians and their delegates
 * (they see it through `visible`), and a parent collecting another family's child only once that
 * family accepted. The collector is the one caller who sees a permission of a child not theirs: the
 * asker of a `collector` request not (or no longer) accepted.
 */
function learnsName(
  ctx: SchoolCtx,
  row: { askedAs: string | null; acceptedAt: string | null; askedBy: number | null },
) {
  if (isStaff(ctx) || row.askedAs !== "collector" || row.acceptedAt !== null) return true;
  return row.askedBy === null || !actedUsers(ctx).includes(row.askedBy);
}

/** What a caller sees: everything for staff; else their children's permissions and their own asks. */
export function visible(ctx: SchoolCtx): SQL | undefined {
  if (isStaff(ctx)) return undefined;
  return sql`(${inList(exitPermissions.studentId, ownStudents(ctx))} OR ${exitPermissions.askedBy} = ${ctx.userId ?? 0})`;
}

export const exitPermission = defineResource({
  name: "exitPermission",
  plural: "exitPermissions",
  label: m`Exit permission`,
  path: "/api/v1/exit-permission",
  tag: "Permissions and tasks",
  scope: "school",
  module: "exit-permissions",
  data: ExitPermissions,
  record: ExitPermissionRecord,
  view: {
    fields: {
      id: exitPermissions.id,
      createdAt: exitPermissions.createdAt,
      updatedAt: exitPermissions.updatedAt,
      studentId: exitPermissions.studentId,
      studentName: sql<string>`${students.firstName} || ' ' || ${students.lastName}`,
      date: exitPermissions.date,
      kind: exitPermissions.kind,
      status: exitPermissions.status,
      routeId: exitPermissions.routeId,
      routeName: routes.name,
      stopId: exitPermissions.stopId,
      stopName: routeStops.name,
      trustedAddressId: exitPermissions.trustedAddressId,
      pickupParentId: exitPermissions.pickupParentId,
      trustedPersonId: exitPermissions.trustedPersonId,
      trustedPersonName: trustedPeople.name,
      askedBy: exitPermissions.askedBy,
      parentId: exitPermissions.parentId,
      askedAs: exitPermissions.askedAs,
      acceptedAt: exitPermissions.acceptedAt,
      failures: exitPermissions.failures,
      reason: exitPermissions.reason,
      decidedBy: exitPermissions.decidedBy,
      decidedAt: exitPermissions.decidedAt,
      decisionReason: exitPermissions.decisionReason,
      supersededBy: exitPermissions.supersededBy,
      fixedId: exitPermissions.fixedId,
      invitationId: exitPermissions.invitationId,
      slug: exitPermissions.slug,
    },
    join: (q) =>
      q
        .join(Students, eq(students.id, exitPermissions.studentId))
        .join(Routes, eq(routes.id, exitPermissions.routeId), "left")
        .join(RouteStops, eq(routeStops.id, exitPermissions.stopId), "left")
        .join(TrustedPeople, eq(trustedPeople.id, exitPermissions.trustedPersonId), "left"),
  },
  toRecord: (ctx, row) => ({
    ...timestamps(row),
    ...row,
    studentName: learnsName(ctx, row) ? row.studentName : null,
  }),
  visibleTo: visible,
  context: actingContext,
  conflictMessage: m`The student already has a confirmed exit permission that day`,
});

const filters = {
  // exit_permission_day_idx (school_id, date)
  date: {
    schema: schoolDate("Only this date's permissions", "2026-11-27").optional(),
    where: (_ctx: Ctx, v: string) => eq(exitPermissions.date, v),
    example: "2026-11-27",
  },
  from: {
    schema: schoolDate("Dates from this one on", "2026-11-23").optional(),
    where: (_ctx: Ctx, v: string) => gte(exitPermissions.date, v),
    example: "2026-11-23",
  },
  to: {
    schema: schoolDate("Dates up to this one", "2026-12-31").optional(),
    where: (_ctx: Ctx, v: string) => lte(exitPermissions.date, v),
    example: "2026-12-31",
  },
  // exit_permission_student_idx (school_id, student_id, date)
  studentId: {
    schema: idFilter("Only this student's permissions"),
    where: (_ctx: Ctx, v: number) => eq(exitPermissions.studentId, v),
    example: "1",
  },
  // exit_permission_kind_idx (school_id, kind, date)
  kind: {
    schema: Kind.optional().openapi({ description: "Only this kind" }),
    where: (_ctx: Ctx, v: (typeof EXIT_PERMISSION_KINDS)[number]) => eq(exitPermissions.kind, v),
    example: "absence",
  },
  // exit_permission_status_idx (school_id, status, date)
  status: {
    schema: Status.optional().openapi({ description: "Only this status" }),
    where: (_ctx: Ctx, v: (typeof EXIT_PERMISSION_STATUSES)[number]) => eq(exitPermissions.status, v),
    example: "pending",
  },
};

export const listExitPermissions = exitPermission.list({
  access: permissions.read,
  filters,
  // By day, then in the order asked: exit_permission_day_idx, and each filter's index ends with the date.
  defaultOrder: [{ by: exitPermissions.date }, { by: exitPermissions.id }],
  summary: "List exit permissions (paginated; a parent sees their children's)",
});

export const getExitPermission = exitPermission.get({ access: permissions.read });

const { kind: _kind, ...typeFilters } = filters;
const Page = pageOf(ExitPermissionRecord, "ExitPermissionByTypePage");

const byTypeRoute = defineRoute({
  method: "get",
  // The kind is a query parameter: `/exit-permission/type/{kind}` would be ambiguous with `/exit-permission/{id}/confirm`.
  path: "/api/v1/exit-permission/type",
  tag: "Permissions and tasks",
  operationId: "listExitPermissionsByType",
  summary: "List exit permissions of one kind (paginated)",
  access: permissions.read,
  module: "exit-permissions",
  context: actingContext,
  request: {
    query: z.strictObject({
      kind: Kind.openapi({ description: "The kind of exit permission to list" }),
      ...PageQuery.shape,
      ...Object.fromEntries(Object.entries(typeFilters).map(([k, f]) => [k, f.schema])),
    }),
  },
  responses: { 200: json(Page, "A page of exit permissions of that kind") },
  // No x-filters: the list's own filters (the same query) are checked through GET /exit-permission.
});

export function listExitPermissionsByType(ctx: SchoolCtx, { query }: InputOf<typeof byTypeRoute>) {
  return listExitPermissions.run(ctx, { query });
}
export const listExitPermissionsByTypeOperation = operation(byTypeRoute, listExitPermissionsByType);
