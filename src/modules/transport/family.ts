/**
 * Route information for the current parent (`GET /api/v1/route/mine`): the routes their children
 * ride, each with the child, the child's stop and time, the route's stops, the vehicle and its
 * driver, and for the date asked (default: today in the school's time zone) whether it runs for
 * the child: the route runs that day (the school's calendar for its levels, its weekdays: the one
 * rule, school-schedule's `routeOff`), the child rides on that weekday, and is not suspended then
 * (a suspended ride is listed, `suspended`). A delegate sees what the parent they act for today
 * sees. One D1 call: the delegations, the school's calendar around the date and the rides, in one
 * batch.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Delegates } from "../../db/schema/delegate";
import { Parents, parents } from "../../db/schema/parent";
import { Students, students } from "../../db/schema/student";
import {
  RouteAvailabilities,
  RouteAvailabilityStudents,
  RouteStudents,
  Routes,
  routeAvailabilities,
  routeAvailabilityStudents,
  routeStudents,
  routes,
  Transports,
  transports,
} from "../../db/schema/transport";
import { eq, gte, isNull, lte, type SQLWrapper, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { parseJson } from "../../lib/json";
import { orNull } from "../../lib/nullable";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { compareText } from "../../lib/text";
import { daysOf } from "../../lib/weekdays";
import { dateIn, isoWeekday } from "../../lib/zoned-time";
import { actedForBy, delegationsHere } from "../delegate/api";
import { calendarOf, calendarReads, DayOffReason, dayOff, routeOff } from "../school-schedule/api";
import { permissions } from "./permissions";
import { suspendedOn } from "./riders";
import { Direction, parseStops, RouteStop, stopsOf, Weekday } from "./route";

const DAY_MS = 24 * 3600 * 1000;
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const MAX_RIDES = 200;

const Day = z.iso.date().openapi({ example: "2026-11-23", description: "A school-local date, YYYY-MM-DD" });

const Ride = z
  .object({
    routeStudentId: z.number().int().openapi({ example: 1 }),
    student: z
      .object({
        id: z.number().int().openapi({ example: 1 }),
        firstName: z.string().openapi({ example: "Pablo" }),
        lastName: z.string().openapi({ example: "Parent" }),
      })
      .openapi({ description: "The child" }),
    route: z
      .object({
        id: z.number().int().openapi({ example: 1 }),
        name: z.string().openapi({ example: "North 1 home", description: "The route's name" }),
        direction: Direction,
        weekdays: z.array(Weekday).openapi({ description: "The weekdays the route runs" }),
      })
      .openapi({ description: "The route the child rides" }),
    weekdays: z.array(Weekday).openapi({ description: "The weekdays the child rides it", example: [1, 3, 5] }),
    stop: orNull(RouteStop).openapi({ description: "Where the child boards (to school) or leaves (home)" }),
    stops: z.array(RouteStop).openapi({ description: "Every stop of the route, in order" }),
    vehicle: z
      .object({
        name: z.string().openapi({ example: "Bus 3", description: "The vehicle's name" }),
        plate: z.string().nullable().openapi({ example: "ABC-123" }),
        driverName: z.string().nullable().openapi({ example: "Dora Driver" }),
        driverPhone: z.string().nullable().openapi({ example: "+15550000005" }),
      })
      .openapi({ description: "The vehicle that runs the route, and its driver" }),
    runs: z.boolean().openapi({
      description:
        "Whether the child rides it on the date: the route runs (a school day of its levels, one of its weekdays), the child's weekday, not suspended",
    }),
    suspended: z.boolean().openapi({ description: "Whether the child's ride is suspended on the date" }),
    suspension: z
      .object({
        from: Day.openapi({ description: "The first day without riding" }),
        until: Day.nullable().openapi({ description: "The last day suspended; null: until the school lifts it" }),
        reason: z.string().nullable().openapi({ description: "Why, as the school wrote it" }),
      })
      .nullable()
      .openapi({ description: "The suspension that covers the date or comes later, if any" }),
  })
  .openapi("FamilyRide");

const FamilyRoutes = z
  .object({
    date: Day,
    weekday: Weekday,
    holiday: z
      .boolean()
      .openapi({ description: "Whether the date is in one of the school's holiday cycles (no routes run)" }),
    schoolDay: z.boolean().openapi({ description: "Whether the school has school that day (for some level)" }),
    reason: DayOffReason,
    data: z.array(Ride).openapi({ description: "Each ride of the family's children, by child and route" }),
  })
  .openapi("FamilyRoutes");

const route = defineRoute({
  method: "get",
  path: "/api/v1/route/mine",
  tag: "Transport",
  operationId: "getFamilyRoutes",
  summary: "Route information for the current parent: their children's routes, stops and times on a date",
  description:
    "The routes the caller's children ride (a guardian's children; a delegate: those of the parent they act for " +
    "today), with the child's stop and time, every stop, the vehicle and its driver, and whether the route runs " +
    "for the child on `date` (default: today in the school's time zone): a school day of the route's levels, the " +
    `route's and the child's weekday, no suspension. At most ${MAX_RIDES} rides; one D1 call.`,
  access: permissions.routeFamily,
  module: "transport",
  request: {
    query: z.strictObject({
      date: schoolDate("The school-local day (default: the school's today)", "2026-11-23").optional(),
    }),
  },
  responses: { 200: json(FamilyRoutes, "The children's rides") },
});

const delegateAlias = Delegates.alias("d");

export async function familyRoutes(ctx: SchoolCtx, input: InputOf<typeof route>) {
  const { changes, ...answer } = await familyRides(ctx, input);
  return answer;
}

/**
 * The family's rides on the date (`GET /api/v1/route/mine`) and, with `dayChanges`, the children's
 * confirmed changes of that day (a route change's `join` of another bus, an `away` from their own),
 * read in the same batch: the live view follows the bus a child takes that day.
 */
export async function familyRides(
  ctx: SchoolCtx,
  { query }: InputOf<typeof route>,
  options: { dayChanges?: boolean } = {},
) {
  const self = ctx.userId ?? 0;
  const now = ctx.deps.clock.now();
  const d = delegateAlias.table;
  // The parents the caller may act for: themself, and those whose delegate they may be today
  // (delegate_user_idx); checked in the school's time zone below.
  const delegatedBy = delegateAlias
    .select(ctx, { parentId: d.parentId })
    .where(
      eq(d.userId, self),
      gte(d.validUntil, utcDate(now.getTime() - DAY_MS)),
      lte(d.validFrom, utcDate(now.getTime() + DAY_MS)),
    );
  // Guardian links through the caller's own parent profile (parent_user_uq) or a parent they may
  // act for (guardian_parent_idx on each side of the OR).
  const own = Parents.pick(ctx, parents.id, eq(parents.userId, self));
  const candidate = sql`("fg"."parent_id" IN ${own} OR "fg"."parent_id" IN ${delegatedBy})`;
  const children = sql`(SELECT "fg"."student_id" FROM "guardian" "fg" WHERE ${candidate})`;
  const linkedUsersOf = (student: SQLWrapper) =>
    sql<string>`(SELECT json_group_array("fp"."user_id") FROM "guardian" "fg" INNER JOIN "parent" "fp" ON "fp"."id" = "fg"."parent_id" WHERE "fg"."student_id" = ${student} AND ${candidate})`;
  const linkedUsers = linkedUsersOf(routeStudents.studentId);
  // The day asked, or today in the school's zone: one of the UTC dates around now.
  const first = query.date ?? utcDate(now.getTime() - DAY_MS);
  const last = query.date ?? utcDate(now.getTime() + DAY_MS);

  const batch = new Batch(ctx);
  const delegations = batch.read(delegationsHere(ctx, self, now));
  const day = calendarReads(ctx, batch, first, last);
  const rides = batch.read(
    RouteStudents.select(ctx, {
      id: routeStudents.id,
      studentId: students.id,
      firstName: students.firstName,
      lastName: students.lastName,
      routeId: routes.id,
      routeName: routes.name,
      direction: routes.direction,
      routeWeekdays: routes.weekdays,
      routeLevels: routes.levels,
      weekdays: routeStudents.weekdays,
      stopId: routeStudents.stopId,
      suspendedFrom: routeStudents.suspendedFrom,
      suspendedUntil: routeStudents.suspendedUntil,
      suspensionReason: routeStudents.suspensionReason,
      stops: stopsOf(routes.id),
      vehicleName: transports.name,
      plate: transports.plate,
      driverName: transports.driverName,
      driverPhone: transports.driverPhone,
      via: linkedUsers,
    })
      .join(Students, eq(students.id, routeStudents.studentId))
      .join(Routes, eq(routes.id, routeStudents.routeId))
      .join(Transports, eq(transports.id, routes.transportId))
      .where(isNull(students.deletedAt), sql`${routeStudents.studentId} IN ${children}`)
      .limit(MAX_RIDES),
  );
  const changes = options.dayChanges
    ? batch.read(
        RouteAvailabilityStudents.select(ctx, {
          kind: routeAvailabilityStudents.kind,
          date: routeAvailabilities.date,
          studentId: students.id,
          firstName: students.firstName,
          lastName: students.lastName,
          routeId: routes.id,
          routeName: routes.name,
          direction: routes.direction,
          routeWeekdays: routes.weekdays,
          routeLevels: routes.levels,
          stopId: routeAvailabilityStudents.stopId,
          stops: stopsOf(routes.id),
          via: linkedUsersOf(routeAvailabilityStudents.studentId),
        })
          .join(RouteAvailabilities, eq(routeAvailabilities.id, routeAvailabilityStudents.routeAvailabilityId))
          .join(Students, eq(students.id, routeAvailabilityStudents.studentId))
          .join(Routes, eq(routes.id, routeAvailabilities.routeId))
          .where(
            isNull(students.deletedAt),
            sql`${routeAvailabilityStudents.studentId} IN ${children}`,
            eq(routeAvailabilityStudents.confirmed, true),
            eq(routeAvailabilities.cancelled, false),
            gte(routeAvailabilities.date, first),
            lte(routeAvailabilities.date, last),
          )
          .limit(MAX_RIDES),
      )
    : undefined;
  const results = await batch.commit();
  const { calendar } = calendarOf(results, day);
  const date = query.date ?? dateIn(calendar.timeZone, now);
  const weekday = isoWeekday(date);
  const off = dayOff(date, calendar);
  const actingFor = new Set(actedForBy(self, results.get(delegations), now));
  const via = (r: { via: string }) => parseJson(z.array(z.number()), r.via || "[]");
  const bit = 1 << (weekday - 1);
  // A route's stops, parsed once for all the rides on it (siblings, both directions of a family).
  const parsed = new Map<string | null, ReturnType<typeof parseStops>>();
  const stopsOfRide = (json: string | null) => {
    const known = parsed.get(json);
    if (known) return known;
    const stops = parseStops(json);
    parsed.set(json, stops);
    return stops;
  };

  const data = results
    .get(rides)
    .filter((r) => via(r).some((u) => actingFor.has(u)))
    .map((r) => {
      const stops = stopsOfRide(r.stops);
      const covers = suspendedOn(r, date);
      const current = r.suspendedFrom !== null && (r.suspendedUntil === null || r.suspendedUntil >= date);
      const routeRuns = routeOff(date, calendar, { weekdays: r.routeWeekdays, levels: r.routeLevels }) === null;
      return {
        routeStudentId: r.id,
        student: { id: r.studentId, firstName: r.firstName, lastName: r.lastName },
        route: { id: r.routeId, name: r.routeName, direction: r.direction, weekdays: daysOf(r.routeWeekdays) },
        weekdays: daysOf(r.weekdays),
        stop: stops.find((s) => s.id === r.stopId) ?? null,
        stops,
        vehicle: { name: r.vehicleName, plate: r.plate, driverName: r.driverName, driverPhone: r.driverPhone },
        runs: routeRuns && !covers && (r.weekdays & bit) !== 0,
        suspended: covers,
        suspension:
          current && r.suspendedFrom !== null
            ? { from: r.suspendedFrom, until: r.suspendedUntil, reason: r.suspensionReason }
            : null,
      };
    })
    .sort(
      (a, b) =>
        compareText(a.student.lastName, b.student.lastName) ||
        compareText(a.student.firstName, b.student.firstName) ||
        a.student.id - b.student.id ||
        (a.route.direction === b.route.direction
          ? a.route.id - b.route.id
          : a.route.direction === "to_school"
            ? -1
            : 1),
    );
  const dayChanges = (changes ? results.get(changes) : [])
    .filter((c) => c.date === date && via(c).some((u) => actingFor.has(u)))
    .map((c) => {
      const stops = stopsOfRide(c.stops);
      return {
        kind: c.kind,
        student: { id: c.studentId, firstName: c.firstName, lastName: c.lastName },
        route: { id: c.routeId, name: c.routeName, direction: c.direction },
        stop: stops.find((s) => s.id === c.stopId) ?? null,
        stops,
        runs: routeOff(date, calendar, { weekdays: c.routeWeekdays, levels: c.routeLevels }) === null,
      };
    });
  return {
    date,
    weekday,
    holiday: off === "holiday",
    schoolDay: off === null,
    reason: off,
    data,
    changes: dayChanges,
  };
}

export const getFamilyRoutes = operation(route, familyRoutes);
