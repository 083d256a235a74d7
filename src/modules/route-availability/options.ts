/**
 * The routes a child may change to on a date (`GET /api/v1/route-availability/options`): the home
 * routes an exit permission's route change may name, by the rules' own test (exit-permission's
 * `routeRules`): the route runs that day (one of its weekdays, a school day of its levels), goes
 * home, serves the child's level (a route with no levels serves every level), its vehicle is in
 * service. A full route is listed with `available` 0 (a parent sees it is full; asking for it is
 * the rules' 422 `no-seat`), unless the child already rides it that day. Who may ask: a guardian
 * of the student or a delegate acting for one today, or staff with route-availability.read (a
 * driver: their routes); anyone else is told the student does not exist. One D1 round trip.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import {
  RouteAvailabilities,
  RouteStudents,
  Routes,
  routeAvailabilities,
  routeStudents,
  routes,
  Transports,
  transports,
} from "../../db/schema/transport";
import { eq, isNull, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { recordId } from "../../lib/params";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { compareText } from "../../lib/text";
import { actedForBy, delegationsHere } from "../delegate/api";
import { calendarOf, calendarReads, routeOff } from "../school-schedule/api";
import { parseStops, ridesOn, stopsOf } from "../transport/api";
import { dayFields, drivenBy, runsOnWeekday, seatsOf } from "./day";
import { permissions } from "./permissions";

const Option = z
  .object({
    id: z.number().int().openapi({ example: 1, description: "The route" }),
    name: z.string().openapi({ example: "North 1 home", description: "The route's name" }),
    stops: z
      .array(
        z.object({
          id: z.number().int().openapi({ example: 1 }),
          name: z.string().openapi({ example: "Maple & 3rd", description: "The stop's name" }),
          position: z.number().int().openapi({ example: 1, description: "1-based order on the route" }),
          time: z.string().openapi({ example: "15:10", description: "When the bus is there, HH:MM" }),
        }),
      )
      .openapi({ description: "The route's stops, in order" }),
    seats: z.number().int().openapi({ example: 40, description: "The day's seats (the override, or the vehicle's)" }),
    available: z
      .number()
      .int()
      .openapi({ example: 3, description: "Seats left that day; 0: full (a route change to it is refused)" }),
    rides: z.boolean().openapi({ description: "The child already rides it home that day (needs no seat)" }),
  })
  .openapi("RouteOption", { description: "A home route a child may change to on a date" });

const optionsRoute = defineRoute({
  method: "get",
  path: "/api/v1/route-availability/options",
  tag: "Transport",
  operationId: "listRouteOptions",
  summary: "The home routes a child may change to on a date, with stops, times and free seats",
  description:
    "The routes a route change of the student may name on `date`: running that day, going home, serving the " +
    "student's level, the vehicle in service. A full route is listed with `available` 0 (asking for it is refused) " +
    "unless the child rides it already. For a guardian of the student (or a delegate acting for one today) or staff " +
    "with route-availability.read; anyone else: 404. One D1 call.",
  access: "member",
  module: "transport",
  examples: { 404: "Student 42 not found" },
  request: {
    query: z.strictObject({
      studentId: recordId().openapi({
        example: 1,
        description: "The child",
        type: "integer",
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
      }),
      date: schoolDate("The school-local day of the change", "2027-03-01"),
    }),
  },
  responses: { 200: json(z.array(Option), "The routes, by name") },
});

export async function listRouteOptions(ctx: SchoolCtx, { query }: InputOf<typeof optionsRoute>) {
  const { studentId, date } = query;
  const self = ctx.userId ?? 0;
  const now = ctx.deps.clock.now();
  const staff = ctx.actor.type !== "user" || ctx.can(permissions.read);
  const batch = new Batch(ctx);
  const day = calendarReads(ctx, batch, date, date);
  const delegations = batch.read(delegationsHere(ctx, self, now));
  const student = batch.read(
    Students.select(ctx, { id: students.id, level: students.level }).where(
      eq(students.id, studentId),
      isNull(students.deletedAt),
    ),
  );
  const links = batch.read(
    Guardians.select(ctx, { userId: parents.userId })
      .join(Parents, eq(parents.id, guardians.parentId))
      .where(eq(guardians.studentId, studentId)),
  );
  const rides = batch.read(
    RouteStudents.select(ctx, {
      routeId: routeStudents.routeId,
      weekdays: routeStudents.weekdays,
      suspendedFrom: routeStudents.suspendedFrom,
      suspendedUntil: routeStudents.suspendedUntil,
    }).where(eq(routeStudents.studentId, studentId), eq(routeStudents.direction, "home")),
  );
  const candidates = batch.read(
    // routeDays' rows (the same joins, fields and visibility) with the route's stops.
    Routes.select(ctx, { ...dayFields(ctx, date), stops: stopsOf(routes.id) })
      .join(Transports, eq(transports.id, routes.transportId))
      .join(
        RouteAvailabilities,
        sql`${routeAvailabilities.routeId} = ${routes.id} AND ${routeAvailabilities.date} = ${date}`,
        "left",
      )
      .where(
        drivenBy(ctx, routes.id),
        eq(routes.direction, "home"),
        eq(transports.status, "active"),
        runsOnWeekday(routes.weekdays, date),
      ),
  );
  const results = await batch.commit();
  const [child] = results.get(student);
  const acting = new Set(actedForBy(self, results.get(delegations), now));
  const mine = results.get(links).some((l) => acting.has(l.userId));
  if (!child || !(staff || mine)) throw notFound(m`Student ${studentId} not found`);
  const { calendar } = calendarOf(results, day);
  const riding = new Set(
    results
      .get(rides)
      .filter((r) => ridesOn(r, date))
      .map((r) => r.routeId),
  );
  return results
    .get(candidates)
    .filter((d) => routeOff(date, calendar, d) === null)
    .filter((d) => d.levels.length === 0 || (child.level !== null && d.levels.includes(child.level)))
    .sort((a, b) => compareText(a.routeName, b.routeName) || a.routeId - b.routeId)
    .map((d) => ({
      id: d.routeId,
      name: d.routeName,
      stops: parseStops(d.stops).map((s) => ({ id: s.id, name: s.name, position: s.position, time: s.time })),
      ...seatsOf(d),
      rides: riding.has(d.routeId),
    }));
}
export const listRouteOptionsOperation = operation(optionsRoute, listRouteOptions);
