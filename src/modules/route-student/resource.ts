/**
 * Route students: `/api/v1/route-student`. The list (filters: route, student, stop, weekday,
 * direction, suspension, who rides on a date, the student's name), a route's riders in stop order,
 * the record, create, update, delete, delete several, and the Excel export. Suspensions:
 * ./suspension.ts.
 *
 * Rules of a write: the route, stop and student are this school's (else 404; a deleted student
 * too); the stop is one of the route's (422); the weekdays are the route's (422); the student is
 * active (422) and of a level the route serves, when it names levels (422). A student rides one
 * route per direction and weekday: the `route_student_day` rows are written in the rider's own
 * batch, and their unique index refuses a second route, so two admins assigning the same student at
 * once give one 201 and one 409; the 409 names the route the student already rides.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Students, students } from "../../db/schema/student";
import {
  ROUTE_DIRECTIONS,
  type RouteDirection,
  RouteStops,
  RouteStudents,
  Routes,
  routeStops,
  routeStudentDays,
  routeStudents,
  routes,
} from "../../db/schema/transport";
import { and, asc, eq, isNotNull, isNull, ne, type SQL, sql } from "../../db/sql";
import { joinTable } from "../../db/table";
import { GuardFailed, guardCount, inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { ApiError, conflict, notFound, unprocessable } from "../../lib/errors";
import { factChanged } from "../../lib/facts";
import { joinMessages, m } from "../../lib/message";
import { Listing, PageQuery, pageOf } from "../../lib/pagination";
import { Deleted, DeleteMany, idFilter, integerString, recordId } from "../../lib/params";
import { type Filter, filterConditions } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { containsName, searchTerm } from "../../lib/search";
import { isoWeekday } from "../../lib/zoned-time";
import { ridersChanged } from "../route-availability/api";
import { mayRide } from "../transport/api";
import { permissions } from "./permissions";
import {
  dayRows,
  fullDays,
  removeDayRows,
  resource,
  rideChanged,
  rider,
  riderVisible,
  rides,
  seatsHold,
  visibleRoutes,
  Weekdays,
} from "./record";
import { dayList, daysOf, maskOf, weekdayShort } from "./weekdays";

const Id = recordId();

export const filters = {
  route: {
    schema: idFilter("A route id: its riders"),
    where: (_ctx, v) => eq(routeStudents.routeId, v),
    example: "1",
  } satisfies Filter<number>,
  student: {
    schema: idFilter("A student id: the routes they ride"),
    where: (_ctx, v) => eq(routeStudents.studentId, v),
    example: "1",
  } satisfies Filter<number>,
  stop: {
    schema: idFilter("A stop id: who boards or leaves there"),
    where: (_ctx, v) => eq(routeStudents.stopId, v),
    example: "1",
  } satisfies Filter<number>,
  weekday: {
    schema: integerString(z.number().int().min(1).max(7)).optional().openapi({
      description: "An ISO weekday (1 Monday .. 7 Sunday): who rides that day",
      type: "integer",
      minimum: 1,
      maximum: 7,
    }),
    where: (_ctx, v) => sql`(${routeStudents.weekdays} & ${1 << (v - 1)}) <> 0`,
    example: "1",
  } satisfies Filter<number>,
  direction: {
    schema: z.enum(ROUTE_DIRECTIONS).optional().openapi({ description: "Riders of routes going this way" }),
    where: (_ctx, v) => eq(routeStudents.direction, v),
    example: "home",
  } satisfies Filter<RouteDirection>,
  suspended: {
    schema: z
      .enum(["true", "false"])
      .optional()
      .openapi({ description: "true: riders with a suspension recorded (past, current or future); false: without" }),
    where: (_ctx, v) => (v === "true" ? isNotNull(routeStudents.suspendedFrom) : isNull(routeStudents.suspendedFrom)),
    example: "true",
  } satisfies Filter<"true" | "false">,
  suspendedOn: {
    schema: schoolDate("Riders suspended on that date").optional(),
    where: (_ctx, v) => and(sql`${routeStudents.suspendedFrom} <= ${v}`, sql`${routeStudents.suspendedUntil} >= ${v}`),
    example: "2026-12-01",
  } satisfies Filter<string>,
  ridesOn: {
    schema: schoolDate("Who rides that day (its weekday is theirs, and they are not suspended)").optional(),
    where: (_ctx, v) =>
      and(
        sql`(${routeStudents.weekdays} & ${1 << (isoWeekday(v) - 1)}) <> 0`,
        sql`NOT (${routeStudents.suspendedFrom} IS NOT NULL AND ${routeStudents.suspendedFrom} <= ${v} AND ${routeStudents.suspendedUntil} >= ${v})`,
      ),
    example: "2026-12-01",
  } satisfies Filter<string>,
  name: {
    schema: searchTerm("Part of the student's first or last name"),
    where: (ctx, term) =>
      Students.exists(
        ctx,
        eq(students.id, routeStudents.studentId),
        containsName(students.firstNameSearch, students.lastNameSearch, term),
      ),
    example: "Pablo",
  } satisfies Filter<string>,
};

const READ =
  "Staff see every rider of the school; a driver the riders of the routes whose vehicle they drive (other " +
  "riders and routes are 404s to them). Riders of deleted students are not shown.";

export const listRouteStudents = resource.list({
  access: permissions.read,
  filters,
  sort: { createdAt: routeStudents.createdAt },
  summary: "List the students on the school's routes (paginated), with filters",
  description: READ,
});

export const getRouteStudent = resource.get({ access: permissions.read, description: READ });

// ---------------------------------------------------------------------------- a route's riders

const { route: _route, ...routeFilters } = filters;
// The route is a query parameter: `/route-student/route/{routeId}` would be ambiguous with `/route-student/{id}/suspend`.
const byRouteQuery = z.strictObject({
  routeId: Id.openapi({ example: 1, description: "The route whose riders to list" }),
  ...PageQuery.shape,
  ...Object.fromEntries(Object.entries(routeFilters).map(([k, f]) => [k, f.schema])),
});

const byRoute = defineRoute({
  method: "get",
  path: "/api/v1/route-student/route",
  tag: "Transport",
  operationId: "listRouteStudentsByRoute",
  summary: "List a route's riders (paginated), in stop order",
  description: `The list's filters but \`route\` apply. 404 for a route not of this school. ${READ}`,
  access: permissions.read,
  module: "transport",
  examples: { 404: "Route 42 not found" },
  request: { query: byRouteQuery },
  responses: { 200: json(pageOf(resource.record, "RouteStudentPage"), "A page of the route's riders") },
});

/** A route's riders in stop order, then by name: one round trip (the page, its total and the route). */
export async function listByRoute(ctx: SchoolCtx, { query }: InputOf<typeof byRoute>) {
  const { routeId } = query;
  const where = resource.scoped(
    ctx,
    and(eq(routeStudents.routeId, routeId), ...filterConditions(routeFilters, query, ctx)),
    "read",
  );
  const batch = new Batch(ctx);
  // A route's riders are a few dozen rows found by the (school, route) index; ordering them by stop
  // sorts only those.
  const rows = batch.read(
    resource
      .select(ctx)
      .where(where)
      .orderBy(asc(routeStops.position), asc(students.lastName), asc(students.firstName), asc(routeStudents.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
  );
  const total = batch.read(RouteStudents.select(ctx, { id: routeStudents.id }).where(where).count());
  const visible = visibleRoutes(ctx);
  const visibleRoute = visible ? inList(routes.id, visible) : undefined;
  const route = batch.read(Routes.select(ctx, { id: routes.id }).where(eq(routes.id, routeId), visibleRoute).limit(1));
  const results = await batch.commit();
  if (results.get(route).length === 0) throw notFound(m`Route ${routeId} not found`);
  const data = results.get(rows).map((row) => resource.toRecord(ctx, row));
  return new Listing(data, results.get(total)[0]?.n ?? 0, query);
}

export const listRouteStudentsByRoute = operation(byRoute, listByRoute);

// ---------------------------------------------------------------------------- writes

const BodyId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const RouteRef = BodyId.openapi({ example: 1, description: "A route of this school" });
const StopRef = BodyId.openapi({ example: 1, description: "A stop of that route" });
const StudentRef = BodyId.openapi({ example: 1, description: "An active student of this school" });

/** What a write needs to know about the route, stop and student it names, read in one round trip. */
async function references(ctx: SchoolCtx, ids: { routeId: number; stopId: number; studentId: number }) {
  const batch = new Batch(ctx);
  const route = batch.read(
    Routes.select(ctx, {
      id: routes.id,
      name: routes.name,
      direction: routes.direction,
      weekdays: routes.weekdays,
      levels: routes.levels,
    })
      .where(eq(routes.id, ids.routeId))
      .limit(1),
  );
  const stop = batch.read(
    RouteStops.select(ctx, { id: routeStops.id, routeId: routeStops.routeId })
      .where(eq(routeStops.id, ids.stopId))
      .limit(1),
  );
  const student = batch.read(
    Students.select(ctx, {
      id: students.id,
      firstName: students.firstName,
      lastName: students.lastName,
      level: students.level,
      status: students.status,
    })
      .where(eq(students.id, ids.studentId), isNull(students.deletedAt))
      .limit(1),
  );
  const results = await batch.commit();
  return { route: results.get(route)[0], stop: results.get(stop)[0], student: results.get(student)[0] };
}

type Refs = Awaited<ReturnType<typeof references>>;

/** The rules of a rider's route, stop, student and weekdays (see the file's comment). */
function checkRefs(refs: Refs, ids: { routeId: number; stopId: number; studentId: number }, days: number[]) {
  const { route, stop, student } = refs;
  if (!route) throw notFound(m`Route ${ids.routeId} not found`);
  if (!student) throw notFound(m`Student ${ids.studentId} not found`);
  if (!stop) throw notFound(m`Stop ${ids.stopId} not found`);
  if (stop.routeId !== route.id) throw unprocessable(m`Stop ${stop.id} is not a stop of route '${route.name}'`);
  const outside = days.filter((d) => (route.weekdays & (1 << (d - 1))) === 0);
  if (outside.length) {
    throw unprocessable(
      m`Route '${route.name}' does not run on ${dayList(outside)}; it runs on ${dayList(daysOf(route.weekdays))}`,
    );
  }
  mayRide(route, { ...student, name: `${student.firstName} ${student.lastName}` });
  return { route, stop, student };
}

/**
 * Why a write about a student's route was refused by a unique index: the route they already ride
 * on some of these weekdays in this direction (named, with its id), or this route itself.
 */
async function whyTaken(
  ctx: SchoolCtx,
  rider: { studentId: number; routeId: number; direction: RouteDirection; days: number[]; self?: number },
  name: string,
): Promise<ApiError | undefined> {
  const days = joinTable(routeStudentDays);
  const taken = await RouteStudents.select(ctx, {
    id: routeStudents.id,
    routeId: routes.id,
    routeName: routes.name,
    weekday: routeStudentDays.weekday,
  })
    .join(days, eq(routeStudentDays.routeStudentId, routeStudents.id))
    .join(Routes, eq(routes.id, routeStudents.routeId))
    .where(
      eq(routeStudents.studentId, rider.studentId),
      eq(routeStudentDays.direction, rider.direction),
      inList(routeStudentDays.weekday, rider.days),
      // This route itself is the other 409 (below).
      ne(routeStudents.routeId, rider.routeId),
    )
    .orderBy(asc(routeStudentDays.weekday))
    .all();
  const first = taken[0];
  if (first) {
    const on = taken.filter((r) => r.id === first.id).map((r) => r.weekday);
    return conflict(
      m`${name} already rides '${first.routeName}' (route ${first.routeId}, route student ${first.id}) on ${dayList(on)}`,
    );
  }
  const same = await RouteStudents.select(ctx, { id: routeStudents.id })
    .where(eq(routeStudents.routeId, rider.routeId), eq(routeStudents.studentId, rider.studentId))
    .first();
  if (same && same.id !== rider.self) {
    return conflict(
      m`${name} is already on this route (route student ${same.id}); change its stop or weekdays with PUT /api/v1/route-student/${same.id}`,
    );
  }
  return undefined;
}

/** Runs a write; a unique index's 409 becomes the one that names the route taken. */
/**
 * Runs a rider's write; a 409 is answered with what the student already rides (when it names
 * one), a full route (`seatsHold`) with the weekdays without a seat left.
 */
async function naming<T>(
  ctx: SchoolCtx,
  write: () => Promise<T>,
  why: () => Promise<ApiError | undefined>,
  seats: () => Promise<{ routeId: number; days: readonly number[] }>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    // A refused guard is a 409 to the resource block's update and a GuardFailed to its create.
    if (!(err instanceof GuardFailed) && !(err instanceof ApiError && err.status === 409)) throw err;
    throw (await why()) ?? (await noSeat()) ?? err;
  }

  /** The 422 naming the weekdays without a seat left, when that is why the batch was refused. */
  async function noSeat() {
    const asked = await seats();
    const route = await fullDays(ctx, asked.routeId, asked.days);
    if (!route?.full.length) return undefined;
    return unprocessable(
      m`Route '${route.name}' has no seat left on ${dayList(route.full)}: its vehicle seats ${route.seats}`,
    );
  }
}

const created = resource.create({
  access: permissions.write,
  input: z.object({ routeId: RouteRef, studentId: StudentRef, stopId: StopRef, weekdays: Weekdays }),
  values: async (ctx, { body }) => {
    const { route } = checkRefs(await references(ctx, body), body, body.weekdays);
    await rideChanged(ctx, body, {
      studentId: body.studentId,
      routeId: body.routeId,
      direction: route.direction,
      rider: { direction: route.direction, weekdays: maskOf(body.weekdays), suspendedFrom: null, suspendedUntil: null },
    });
    return {
      routeId: body.routeId,
      studentId: body.studentId,
      stopId: body.stopId,
      weekdays: maskOf(body.weekdays),
      direction: route.direction,
    };
  },
  also: (ctx, { id, body }) => [
    dayRows(ctx, id),
    seatsHold(ctx, body.routeId),
    ...(rides.get(body)?.statements ?? []),
    ...ridersChanged(ctx, rider(ctx, id), "added", null),
  ],
  errors: [422],
  examples: {
    409: "Pablo Parent already rides 'North 1 home' (route 3, route student 42) on Monday, Tuesday",
    422: [
      {
        name: "full",
        summary: "No seat left",
        detail: "Route 'North 1 home' has no seat left on Monday: its vehicle seats 40",
      },
      {
        name: "weekday",
        summary: "A weekday the route does not run",
        detail:
          "Route 'North 1 home' does not run on Saturday; it runs on Monday, Tuesday, Wednesday, Thursday, Friday",
      },
      { name: "stop", summary: "Another route's stop", detail: "Stop 7 is not a stop of route 'North 1 home'" },
    ],
  },
  summary: "Put a student on a route, at a stop, on some of its weekdays",
  description:
    "404 for a route, stop or student not of this school (or a deleted student); 422 for a stop not on the route, " +
    "a weekday the route does not run, a student not active or of a level the route does not serve, a weekday on " +
    "which the route's vehicle has no seat left; 409 when the " +
    "student already rides another route in the same direction on one of these weekdays (the problem names it), or " +
    "is already on this route.",
});

export const createRouteStudent = operation(created.route, async (ctx, input) => {
  const { body } = input;
  return naming(
    ctx,
    () => created.run(ctx, input),
    async () => {
      const refs = await references(ctx, body);
      if (!refs.route || !refs.student) return undefined;
      const name = `${refs.student.firstName} ${refs.student.lastName}`;
      const rider = { ...body, direction: refs.route.direction, days: body.weekdays };
      return whyTaken(ctx, rider, name);
    },
    async () => ({ routeId: body.routeId, days: body.weekdays }),
  );
});

/** The rider as a write sees it, with its route's weekdays: 404 when it is not this caller's to change. */
async function riderForWrite(ctx: SchoolCtx, id: number) {
  const row = await resource
    .select(ctx, "write")
    .where(resource.scoped(ctx, eq(routeStudents.id, id), "write"))
    .select({
      routeId: routeStudents.routeId,
      studentId: routeStudents.studentId,
      stopId: routeStudents.stopId,
      weekdays: routeStudents.weekdays,
      direction: routeStudents.direction,
      firstName: students.firstName,
      lastName: students.lastName,
    })
    .first();
  if (!row) throw notFound(m`Route student ${id} not found`);
  return row;
}

const updated = resource.update({
  access: permissions.write,
  input: z.object({ stopId: StopRef.optional(), weekdays: Weekdays.optional() }),
  values: async (ctx, { id, body }) => {
    const rider = await riderForWrite(ctx, id);
    const ids = { routeId: rider.routeId, studentId: rider.studentId, stopId: body.stopId ?? rider.stopId };
    checkRefs(await references(ctx, ids), ids, body.weekdays ?? daysOf(rider.weekdays));
    if (body.weekdays !== undefined)
      await rideChanged(ctx, body, { ...rider, rider: { weekdays: maskOf(body.weekdays) } });
    return {
      ...(body.stopId !== undefined ? { stopId: body.stopId } : {}),
      ...(body.weekdays !== undefined ? { weekdays: maskOf(body.weekdays) } : {}),
    };
  },
  // The weekday rows are written anew from the rider's mask, after its update in the same batch.
  also: (ctx, { id, body }) => [
    ...(body.weekdays === undefined
      ? []
      : [
          removeDayRows(ctx, eq(routeStudents.id, id)),
          dayRows(ctx, id),
          seatsHold(ctx, RouteStudents.pick(ctx, routeStudents.routeId, eq(routeStudents.id, id))),
        ]),
    // The lists of the days the rider now rides record it (a new stop, or new weekdays).
    ...ridersChanged(ctx, rider(ctx, id), body.stopId !== undefined ? "stop" : "added", null),
    ...(rides.get(body)?.statements ?? []),
  ],
  errors: [422],
  examples: {
    409: "Pablo Parent already rides 'North 1 home' (route 3, route student 42) on Monday, Tuesday",
    422: [
      {
        name: "full",
        summary: "No seat left",
        detail: "Route 'North 1 home' has no seat left on Monday: its vehicle seats 40",
      },
      {
        name: "weekday",
        summary: "A weekday the route does not run",
        detail:
          "Route 'North 1 home' does not run on Saturday; it runs on Monday, Tuesday, Wednesday, Thursday, Friday",
      },
      { name: "stop", summary: "Another route's stop", detail: "Stop 7 is not a stop of route 'North 1 home'" },
    ],
  },
  summary: "Change a rider's stop or weekdays",
  description:
    "The route and the student stay: to move a student to another route, delete this rider and create one on " +
    "the other route. The rules of a create apply (404, 422); 409 when a new weekday is taken by another route " +
    "of the student's in the same direction (named).",
});

export const updateRouteStudent = operation(updated.route, async (ctx, input) => {
  const { params, body } = input;
  return naming(
    ctx,
    () => updated.run(ctx, input),
    async () => {
      if (!body.weekdays) return undefined;
      const rider = await riderForWrite(ctx, params.id);
      const name = `${rider.firstName} ${rider.lastName}`;
      return whyTaken(ctx, { ...rider, days: body.weekdays, self: params.id }, name);
    },
    async () => ({ routeId: (await riderForWrite(ctx, params.id)).routeId, days: body.weekdays ?? [] }),
  );
});

export const deleteRouteStudent = resource.delete({
  access: permissions.write,
  check: async (ctx, { id }) => rideChanged(ctx, ctx, { ...(await riderForWrite(ctx, id)), rider: null }),
  before: (ctx, { id }) => ridersChanged(ctx, rider(ctx, id), "removed", null),
  also: (ctx) => rides.get(ctx)?.statements ?? [],
  summary: "Take a student off a route",
});

// ---------------------------------------------------------------------------- delete several

/**
 * Deletes the riders all at once, or none: ids that are not riders of this school are a 404 naming
 * them. One batch: the DELETE, then a guard that aborts it unless every id was deleted.
 */
export async function deleteMany(ctx: SchoolCtx, ids: number[]): Promise<number[]> {
  const where: SQL | undefined = and(inList(routeStudents.id, ids), riderVisible(ctx, "write"));
  // Their rides home taken off move the day changes of their confirmed exit permissions.
  const home = await RouteStudents.select(ctx, { studentId: routeStudents.studentId, routeId: routeStudents.routeId })
    .where(where, eq(routeStudents.direction, "home"))
    .all();
  const again = home.length
    ? (await factChanged(ctx, { fact: "riders", rides: home.map((r) => ({ ...r, rider: null })) })).statements
    : [];
  const batch = new Batch(ctx).add(
    ...ridersChanged(ctx, RouteStudents.pick(ctx, routeStudents.id, where), "removed", null),
    ...RouteStudents.delete(ctx, where),
    guardCount(ctx.deps.db, ids.length),
    ...again,
  );
  try {
    await batch.commit();
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    const here = new Set(
      (await RouteStudents.select(ctx, { id: routeStudents.id }).where(where).all()).map((r) => r.id),
    );
    const gone = ids.filter((id) => !here.has(id));
    if (gone.length === 0) throw conflict(m`The riders changed while they were being deleted; try again`);
    throw new ApiError(
      404,
      gone.length > 1
        ? m`Route students ${gone.join(", ")} not found; nothing was deleted`
        : m`Route student ${gone.join(", ")} not found; nothing was deleted`,
    );
  }
  return ids;
}

export const deleteRouteStudents = operation(
  defineRoute({
    method: "post",
    path: "/api/v1/route-student/delete-multiple",
    tag: "Transport",
    operationId: "deleteRouteStudents",
    summary: "Take several students off their routes at once (all or none)",
    description: "Ids not of this school are a 404 naming them, and nothing is deleted.",
    access: permissions.write,
    module: "transport",
    audit: "route-student",
    errors: [409],
    examples: { 409: "The riders changed while they were being deleted; try again" },
    request: { body: jsonBody(DeleteMany("Route student"), "RouteStudentDeleteMany") },
    responses: { 200: json(Deleted, "The ids deleted") },
  }),
  async (ctx, { body }) => ({ deleted: await deleteMany(ctx, body.ids) }),
);

// ---------------------------------------------------------------------------- the export

export const exportRouteStudents = resource.export({
  access: permissions.read,
  list: listRouteStudents,
  filename: m`route-students.xlsx`,
  sheet: m`Route students`,
  columns: [
    m`Id`,
    m`Route`,
    m`Direction`,
    m`Stop`,
    m`Stop time`,
    m`Student id number`,
    m`Student`,
    m`Level`,
    m`Weekdays`,
    m`Suspended from`,
    m`Suspended until`,
    m`Suspension reason`,
  ],
  cells: (_ctx, r) => [
    r.id,
    r.routeName,
    r.direction,
    r.stopName,
    r.stopTime,
    r.idNumber,
    `${r.firstName} ${r.lastName}`,
    r.level,
    joinMessages(daysOf(r.weekdays).map(weekdayShort), ", "),
    r.suspendedFrom,
    r.suspendedUntil,
    r.suspensionReason,
  ],
  description: `The list's filters and sort apply. ${READ} The file is streamed as it is read.`,
  file: "An .xlsx workbook with one sheet, Route students",
});
