/**
 * Excel downloads of exit permissions: every permission the filters keep
 * (`GET /api/v1/exit-permission/download`), and the route changes with the route and stop each
 * student leaves and the one they go to (`GET /api/v1/exit-permission/route-change/download`).
 *
 * Who sees which: holders of `exit-permission.manage` every permission of the school; anyone else
 * with `exit-permission.read` (parents) the permissions of the students they are a guardian of,
 * themself or as a valid delegate of a guardian today. Rows come in date order, then state, then
 * as asked, read by keyset 500 at a time while the file streams.
 */
import { z } from "@hono/zod-openapi";
import type { RowOf } from "../../db/query";
import { Users } from "../../db/schema/core";
import {
  EXIT_PERMISSION_KINDS,
  EXIT_PERMISSION_STATUSES,
  ExitPermissions,
  exitPermissions,
} from "../../db/schema/exit-permission";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { RouteStops, RouteStudents, Routes, routeStudentDays, routeStudents } from "../../db/schema/transport";
import { eq, type SQL, sql } from "../../db/sql";
import { joinTable } from "../../db/table";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { badRequest } from "../../lib/errors";
import { type Message, m } from "../../lib/message";
import { keyFields, keysetRows, type OrderKey, orderTerms } from "../../lib/pagination";
import { idFilter } from "../../lib/params";
import { defineRoute, type InputOf, operation } from "../../lib/route";
import { type Cell, XLSX_TYPE, xlsxResponse } from "../../lib/xlsx";
import { actedFor, actingLoader } from "../delegate/api";
import { addressLine, collectorOf, permissionDetail, withTargets } from "../transportation-summary/api";
import { copyOf, copyTable, identity } from "../user/api";
import { permissions } from "./permissions";

const filters = {
  date: schoolDate("Only this school-local date", "2027-03-01").optional(),
  from: schoolDate("Only dates on or after this one", "2027-03-01").optional(),
  to: schoolDate("Only dates on or before this one", "2027-03-01").optional(),
  status: z.enum(EXIT_PERMISSION_STATUSES).optional().openapi({ description: "Only permissions in this state" }),
  studentId: idFilter("Only this student's permissions"),
};

/** A range that ends before it starts is a 400 (not an empty file that hides the typo). */
function checkRange(q: { from?: string; to?: string }) {
  if (q.from !== undefined && q.to !== undefined && q.from > q.to) {
    throw badRequest(m`\`from\` must not be after \`to\``, [{ path: "from", message: m`Must not be after \`to\`` }]);
  }
}

const File = (description: string) => ({
  200: { description, content: { [XLSX_TYPE]: { schema: z.string().openapi({ format: "binary" }) } } },
});

/** For a caller who does not manage every permission: whom they act for (one D1 call), in `ctx.actingFor`. */
const actingContext = actingLoader(permissions.manage);

/**
 * The permissions the caller may download: all for `exit-permission.manage`, else their children's.
 * The unary + keeps the student out of the index choice: the date order's index serves the read.
 */
function visible(ctx: SchoolCtx): SQL | undefined {
  if (ctx.can(permissions.manage)) return undefined;
  const users = ctx.actingFor ?? (ctx.userId === null ? [] : [ctx.userId]);
  const own = Guardians.select(ctx, { id: guardians.studentId })
    .join(Parents, eq(parents.id, guardians.parentId))
    .where(actedFor(parents.userId, users));
  return sql`+${exitPermissions.studentId} IN ${own}`;
}

// Date, then state, then as asked: the index (school, date, status) ends with the rowid.
const ORDER: OrderKey[] = [{ by: exitPermissions.date }, { by: exitPermissions.status }, { by: exitPermissions.id }];

const askerUser = Users.alias("asker_user");
const askerCopy = copyTable("asker_copy");
const askerName = identity(askerUser.table, askerCopy.table);
const usualRoute = Routes.alias("usual_route");
const usualStop = RouteStops.alias("usual_stop");
const days = joinTable(routeStudentDays);

function fieldsOf() {
  return {
    ...permissionDetail(),
    date: exitPermissions.date,
    status: exitPermissions.status,
    studentIdNumber: students.idNumber,
    studentFirstName: students.firstName,
    studentLastName: students.lastName,
    level: students.level,
    askerFirstName: askerName.firstName,
    askerLastName: askerName.lastName,
    askedAt: exitPermissions.createdAt,
    decidedAt: exitPermissions.decidedAt,
    decisionReason: exitPermissions.decisionReason,
    usualRouteName: usualRoute.table.name,
    usualStopName: usualStop.table.name,
    usualStopTime: usualStop.table.time,
    ...keyFields(ORDER),
  };
}

type Row = RowOf<ReturnType<typeof fieldsOf>>;

type Query = { date?: string; from?: string; to?: string; kind?: string; status?: string; studentId?: number };

/** The rows of a download, page by page in the date order. */
async function* rowsOf(ctx: SchoolCtx, q: Query): AsyncGenerator<Row> {
  const conditions: (SQL | undefined)[] = [
    visible(ctx),
    q.date === undefined ? undefined : eq(exitPermissions.date, q.date),
    q.from === undefined ? undefined : sql`${exitPermissions.date} >= ${q.from}`,
    q.to === undefined ? undefined : sql`${exitPermissions.date} <= ${q.to}`,
    // Unary +: the state never picks the index; the date order's (school, date, status) serves it.
    q.status === undefined ? undefined : sql`+${exitPermissions.status} = ${q.status}`,
    q.kind === undefined ? undefined : sql`+${exitPermissions.kind} = ${q.kind}`,
    q.studentId === undefined ? undefined : sql`+${exitPermissions.studentId} = ${q.studentId}`,
    sql`${students.deletedAt} IS NULL`,
  ];
  // The student's home route on the permission's weekday (ISO: SQLite's %w is 0 for Sunday).
  const weekday = sql`((CAST(strftime('%w', ${exitPermissions.date}) AS INTEGER) + 6) % 7) + 1`;
  const read = (after: SQL | undefined, limit: number) =>
    withTargets(
      ctx,
      ExitPermissions.select(ctx, fieldsOf())
        .join(Students, eq(students.id, exitPermissions.studentId))
        .join(askerUser, eq(askerUser.table.id, exitPermissions.askedBy), "left")
        .join(askerCopy, copyOf(askerCopy, askerUser.table.id, ctx.schoolId), "left")
        .join(
          days,
          sql`${routeStudentDays.studentId} = ${exitPermissions.studentId} AND ${routeStudentDays.direction} = 'home' AND ${routeStudentDays.weekday} = ${weekday}`,
          "left",
        )
        .join(RouteStudents, eq(routeStudents.id, routeStudentDays.routeStudentId), "left")
        .join(usualRoute, eq(usualRoute.table.id, routeStudents.routeId), "left")
        .join(usualStop, eq(usualStop.table.id, routeStudents.stopId), "left"),
    )
      .where(...conditions, after)
      .orderBy(...orderTerms(ORDER))
      .limit(limit)
      .all();
  yield* keysetRows(ORDER, read);
}

const KIND_NAMES: Record<string, Message> = {
  route_change: m`Route change`,
  no_after_school: m`No after-school`,
  auto_pickup: m`Pickup`,
  absence: m`Absence`,
};

const name = (first: string | null, last: string | null) => `${first ?? ""} ${last ?? ""}`.trim() || null;

const downloadRoute = defineRoute({
  method: "get",
  path: "/api/v1/exit-permission/download",
  tag: "Permissions and tasks",
  operationId: "downloadExitPermissions",
  summary:
    "Download exit permissions as Excel (.xlsx): every student's for exit-permission.manage, else one's children's",
  access: permissions.read,
  module: "exit-permissions",
  context: actingContext,
  request: {
    query: z.strictObject({
      ...filters,
      kind: z.enum(EXIT_PERMISSION_KINDS).optional().openapi({ description: "Only permissions of this kind" }),
    }),
  },
  responses: File("An .xlsx of exit permissions, by date"),
  extensions: { "x-filters": { date: "2027-03-01", kind: "absence", status: "confirmed" } },
});

const COLUMNS = [
  m`Id`,
  m`Date`,
  m`Student id number`,
  m`Student`,
  m`Level`,
  m`Kind`,
  m`Status`,
  m`Route`,
  m`Stop`,
  m`Trusted address`,
  m`Collected by`,
  m`Reason`,
  m`Asked by`,
  m`Asked at`,
  m`Decided at`,
  m`Decision reason`,
  m`Fixed permission`,
];

async function* cells(ctx: SchoolCtx, q: Query): AsyncGenerator<Cell[]> {
  for await (const r of rowsOf(ctx, q)) {
    yield [
      r.permissionId,
      r.date,
      r.studentIdNumber,
      name(r.studentFirstName, r.studentLastName),
      r.level,
      KIND_NAMES[r.kind ?? ""] ?? r.kind,
      r.status,
      r.toRouteName,
      r.toStopName,
      r.trustedAddressId === null ? null : addressLine(r),
      collectorOf(r)?.name ?? null,
      r.reason,
      name(r.askerFirstName, r.askerLastName),
      r.askedAt,
      r.decidedAt,
      r.decisionReason,
      r.fixedId,
    ];
  }
}

export const downloadExitPermissionsOperation = operation(
  downloadRoute,
  (ctx, { query }: InputOf<typeof downloadRoute>) => {
    checkRange(query);
    return xlsxResponse(m`exit-permissions.xlsx`, {
      name: m`Exit permissions`,
      columns: COLUMNS,
      rows: cells(ctx, query),
    });
  },
);

const routeChangeRoute = defineRoute({
  method: "get",
  path: "/api/v1/exit-permission/route-change/download",
  tag: "Permissions and tasks",
  operationId: "downloadRouteChanges",
  summary: "Download route changes as Excel (.xlsx), with the route and stop left and the one taken",
  access: permissions.read,
  module: "exit-permissions",
  context: actingContext,
  request: { query: z.strictObject(filters) },
  responses: File("An .xlsx of route changes, by date"),
  extensions: { "x-filters": { date: "2027-03-01", status: "confirmed" } },
});

const ROUTE_CHANGE_COLUMNS = [
  m`Id`,
  m`Date`,
  m`Student id number`,
  m`Student`,
  m`Level`,
  m`Status`,
  m`From route`,
  m`From stop`,
  m`From stop time`,
  m`To route`,
  m`To stop`,
  m`To stop time`,
  m`To trusted address`,
  m`Reason`,
  m`Asked by`,
  m`Asked at`,
  m`Decided at`,
];

async function* routeChangeCells(ctx: SchoolCtx, q: Query): AsyncGenerator<Cell[]> {
  for await (const r of rowsOf(ctx, { ...q, kind: "route_change" })) {
    yield [
      r.permissionId,
      r.date,
      r.studentIdNumber,
      name(r.studentFirstName, r.studentLastName),
      r.level,
      r.status,
      r.usualRouteName,
      r.usualStopName,
      r.usualStopTime,
      r.toRouteName,
      r.toStopName,
      r.toStopTime,
      r.trustedAddressId === null ? null : addressLine(r),
      r.reason,
      name(r.askerFirstName, r.askerLastName),
      r.askedAt,
      r.decidedAt,
    ];
  }
}

export const downloadRouteChangesOperation = operation(
  routeChangeRoute,
  (ctx, { query }: InputOf<typeof routeChangeRoute>) => {
    checkRange(query);
    return xlsxResponse(m`route-changes.xlsx`, {
      name: m`Route changes`,
      columns: ROUTE_CHANGE_COLUMNS,
      rows: routeChangeCells(ctx, query),
    });
  },
);
