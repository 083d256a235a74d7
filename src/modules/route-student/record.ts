/**
 * A route student ("rider"): a student on a route, boarding or leaving at one of its stops, on some
 * of its weekdays, maybe suspended for a date range. The record, the resource, who sees which rows,
 * and the weekday helpers every operation of the module shares.
 */
import { z } from "@hono/zod-openapi";
import { Students, students } from "../../db/schema/student";
import {
  ROUTE_DIRECTIONS,
  RouteStops,
  RouteStudents,
  Routes,
  routeStops,
  routeStudentDays,
  routeStudents,
  routes,
  Transports,
  transports,
} from "../../db/schema/transport";
import { and, eq, isNull, type SQL, type SQLWrapper, sql } from "../../db/sql";
import { abortIf, inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { factChanged, type Redecision, type RiderFacts } from "../../lib/facts";
import { LEVELS } from "../../lib/levels";
import { m, zodMessage } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { routeVisible } from "../transport/api";
import { daysOf } from "./weekdays";

export const Weekdays = z
  .array(
    z
      .number()
      .int()
      .min(1)
      .max(7)
      .openapi({ enum: [1, 2, 3, 4, 5, 6, 7] }),
  )
  .min(1)
  .max(7)
  .refine((days) => new Set(days).size === days.length, zodMessage(m`Each weekday at most once`))
  .openapi({
    uniqueItems: true,
    example: [1, 2, 3, 4, 5],
    description: "ISO weekdays (1 Monday .. 7 Sunday), each once, within the route's",
  });

const Day = z.iso.date().openapi({ example: "2026-12-01", description: "YYYY-MM-DD" });

export const RouteStudentRecord = RecordBase.extend({
  routeId: z.number().int().openapi({ example: 1 }),
  studentId: z.number().int().openapi({ example: 1 }),
  stopId: z.number().int().openapi({ example: 1 }),
  student: z
    .object({
      id: z.number().int(),
      firstName: z.string().openapi({ example: "Pablo" }),
      lastName: z.string().openapi({ example: "Parent" }),
      idNumber: z.string().nullable().openapi({ example: "S-0042" }),
      level: z.enum(LEVELS).nullable(),
    })
    .openapi({ description: "The student who rides" }),
  route: z
    .object({
      id: z.number().int(),
      name: z.string().openapi({ example: "Route 3 home", description: "The route's name" }),
      direction: z.enum(ROUTE_DIRECTIONS),
    })
    .openapi({ description: "The route they ride" }),
  stop: z
    .object({
      id: z.number().int(),
      name: z.string().openapi({ example: "Main square", description: "The stop's name" }),
      time: z.string().openapi({ example: "15:40", description: "School-local HH:mm" }),
      position: z.number().int().openapi({ description: "1-based order on the route" }),
    })
    .openapi({ description: "The stop where they get on or off" }),
  weekdays: z.array(z.number().int()).openapi({ example: [1, 2, 3, 4, 5], description: "ISO weekdays it rides" }),
  suspension: z
    .object({
      from: Day.openapi({ description: "The first day without riding" }),
      until: Day.openapi({ description: "The last day without riding" }),
      reason: z.string().openapi({ description: "Why, as the school wrote it" }),
    })
    .nullable()
    .openapi({ description: "A suspension (both dates included), or null" }),
}).openapi({ description: "A student on a route, at a stop, on given weekdays" });

export type RouteStudentOut = z.output<typeof RouteStudentRecord>;

export const fields = {
  id: routeStudents.id,
  createdAt: routeStudents.createdAt,
  updatedAt: routeStudents.updatedAt,
  routeId: routeStudents.routeId,
  studentId: routeStudents.studentId,
  stopId: routeStudents.stopId,
  weekdays: routeStudents.weekdays,
  suspendedFrom: routeStudents.suspendedFrom,
  suspendedUntil: routeStudents.suspendedUntil,
  suspensionReason: routeStudents.suspensionReason,
  firstName: students.firstName,
  lastName: students.lastName,
  idNumber: students.idNumber,
  level: students.level,
  routeName: routes.name,
  direction: routes.direction,
  stopName: routeStops.name,
  stopTime: routeStops.time,
  stopPosition: routeStops.position,
};

/**
 * Riders are seen on the routes the caller sees (`routeVisible`, the transport module's one rule:
 * a driver the routes of the vehicles they drive, everyone else every route). The riders of
 * deleted students are kept (a restore brings them back) but not shown.
 */
export function riderVisible(ctx: SchoolCtx, access: "read" | "write"): SQL | undefined {
  const live = Students.exists(ctx, eq(students.id, routeStudents.studentId), isNull(students.deletedAt));
  const route = access === "read" ? visibleRoutes(ctx) : undefined;
  return route ? and(live, inList(routeStudents.routeId, route)) : live;
}

/** The ids of the routes the caller sees, or undefined when they see every route. */
export function visibleRoutes(ctx: SchoolCtx) {
  const visible = routeVisible(ctx, routes.transportId);
  return visible ? Routes.pick(ctx, routes.id, visible) : undefined;
}

export const resource = defineResource({
  name: "routeStudent",
  plural: "routeStudents",
  label: m`Route student`,
  path: "/api/v1/route-student",
  tag: "Transport",
  scope: "school",
  module: "transport",
  data: RouteStudents,
  record: RouteStudentRecord,
  view: {
    fields,
    join: (q) =>
      q
        .join(Students, eq(students.id, routeStudents.studentId))
        .join(Routes, eq(routes.id, routeStudents.routeId))
        .join(RouteStops, eq(routeStops.id, routeStudents.stopId)),
  },
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    routeId: row.routeId,
    studentId: row.studentId,
    stopId: row.stopId,
    student: {
      id: row.studentId,
      firstName: row.firstName,
      lastName: row.lastName,
      idNumber: row.idNumber,
      level: row.level,
    },
    route: { id: row.routeId, name: row.routeName, direction: row.direction },
    stop: { id: row.stopId, name: row.stopName, time: row.stopTime, position: row.stopPosition },
    weekdays: daysOf(row.weekdays),
    suspension:
      row.suspendedFrom !== null && row.suspendedUntil !== null
        ? { from: row.suspendedFrom, until: row.suspendedUntil, reason: row.suspensionReason ?? "" }
        : null,
  }),
  visibleTo: riderVisible,
  conflictMessage: m`This student is already on this route`,
});

/**
 * The statements that make a rider's `route_student_day` rows from its weekday mask (one per
 * weekday it rides): the unique index (student, direction, weekday) refuses a second route on a
 * day, which aborts the batch they are in. `id` may be the id a batch just inserted.
 */
export function dayRows(ctx: SchoolCtx, id: number | SQL<number>) {
  const rs = RouteStudents.alias("rs");
  const t = rs.table;
  return ctx.deps.db.insert(routeStudentDays).select(
    sql`SELECT ${rs.schoolOf()}, ${t.id}, ${t.studentId}, ${t.direction}, d.value
      FROM ${rs.from} CROSS JOIN json_each(${"[1,2,3,4,5,6,7]"}) d
      WHERE ${rs.where(ctx, sql`${t.id} = ${id} AND ((${t.weekdays} >> (d.value - 1)) & 1) = 1`)}`,
  );
}

/** Removes the `route_student_day` rows of riders of this school (before writing them anew). */
export function removeDayRows(ctx: SchoolCtx, where: SQL) {
  return ctx.deps.db
    .delete(routeStudentDays)
    .where(inList(routeStudentDays.routeStudentId, RouteStudents.pick(ctx, routeStudents.id, where)));
}

/** The riders of a route on each weekday (`w.value` of the `json_each` of weekdays around it). */
const ridersOn = (ctx: SchoolCtx, routeId: number | SQLWrapper) =>
  RouteStudents.select(ctx, { n: sql<number>`count(*)` }).where(
    eq(routeStudents.routeId, routeId),
    sql`((${routeStudents.weekdays} >> (w.value - 1)) & 1) = 1`,
  );

/** The seats of a route's vehicle. */
const seatsOf = (ctx: SchoolCtx, routeId: number | SQLWrapper) =>
  Routes.select(ctx, { seats: transports.seats })
    .join(Transports, eq(transports.id, routes.transportId))
    .where(eq(routes.id, routeId));

/**
 * Aborts the batch when, after its writes, a weekday of the route has more riders than its vehicle
 * has seats: the rule the vehicle's seats keep (never fewer seats than a day's riders), checked by
 * the same batch that adds riders, so two admins filling the last seat at once cannot both win.
 */
export const seatsHold = (ctx: SchoolCtx, routeId: number | SQLWrapper) =>
  abortIf(
    ctx.deps.db,
    sql`EXISTS (SELECT 1 FROM json_each(${"[1,2,3,4,5,6,7]"}) w WHERE ${ridersOn(ctx, routeId)} > ${seatsOf(ctx, routeId)})`,
  );

/** The weekdays (of `days`) on which the route has no seat left, with its seats: why `seatsHold` refused. */
export async function fullDays(ctx: SchoolCtx, routeId: number, days: readonly number[]) {
  const [route] = await seatsOf(ctx, routeId).select({ seats: transports.seats, name: routes.name }).all();
  if (!route) return undefined;
  const counts = await RouteStudents.select(ctx, { weekdays: routeStudents.weekdays })
    .where(eq(routeStudents.routeId, routeId))
    .all();
  const full = days.filter((d) => counts.filter((r) => (r.weekdays >> (d - 1)) & 1).length >= route.seats);
  return { ...route, full };
}

/** The rider `id` as a subquery (what a change does to the lists already made reads it). */
export const rider = (ctx: SchoolCtx, id: number | SQL<number>) =>
  RouteStudents.pick(ctx, routeStudents.id, eq(routeStudents.id, id));

/**
 * A ride home put on, changed or taken off moves the day changes of the student's confirmed exit
 * permissions with it (src/lib/facts.ts): prepared before the write, added to its batch (after the
 * ride's own statements), keyed by the body (or, for a delete, the request's context).
 */
export const rides = new WeakMap<object, Redecision>();
export async function rideChanged(
  ctx: SchoolCtx,
  key: object,
  change: { studentId: number; routeId: number; direction: string; rider: Partial<RiderFacts> | null },
) {
  if (change.direction !== "home") return;
  const { studentId, routeId, rider } = change;
  rides.set(key, await factChanged(ctx, { fact: "riders", rides: [{ studentId, routeId, rider }] }));
}
