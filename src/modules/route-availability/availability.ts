/**
 * Route availability: the seats a route offers on a date for changes. A row exists for a day the
 * school overrode (`seats`) or that has changes (`taken`, the list's version); a day without a row
 * offers the vehicle's seats minus its riders. Readers without the write permission (drivers) see
 * only the routes of the vehicles they drive.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import {
  RouteAvailabilities,
  RouteAvailabilityStudents,
  Routes,
  routeAvailabilities,
  routeAvailabilityStudents,
  routes,
  Transports,
  transports,
} from "../../db/schema/transport";
import { and, desc, eq, gte, isNotNull, lt, lte, sql } from "../../db/sql";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { factChanged, type Redecision } from "../../lib/facts";
import { m } from "../../lib/message";
import { Listing, PageQuery, pageOf } from "../../lib/pagination";
import { idFilter, recordId } from "../../lib/params";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { compareText } from "../../lib/text";
import { addDays, isoWeekday } from "../../lib/zoned-time";
import { DayOffReason, RouteOffReason, routeOff } from "../school-schedule/api";
import {
  assertRuns,
  drivenBy,
  type RouteDay,
  riders,
  routeDays,
  runsOnWeekday,
  schoolToday,
  seatsOf,
  withSchoolDay,
  withSchoolDays,
} from "./day";
import { permissions } from "./permissions";

/** A day's seats: at most a large coach's; more is a typo. */
export const MAX_SEATS = 500;
const Seats = z.number().int().min(0).max(MAX_SEATS);

const Record = RecordBase.extend({
  routeId: z.number().int().openapi({ example: 1 }),
  routeName: z.string().openapi({ example: "North loop" }),
  date: z.iso.date().openapi({ example: "2027-03-01", description: "The school-local day" }),
  seats: z.number().int().nullable().openapi({ description: "The school's override for the day; null: the vehicle's" }),
  cancelled: z.boolean().openapi({
    description:
      "The school cancelled the route that day: nobody joins it (route changes to it were withdrawn), its riders go home another way",
  }),
  vehicleSeats: z.number().int().openapi({ example: 40 }),
  taken: z.number().int().openapi({ description: "Seats taken by students joining for the day" }),
  version: z.number().int().openapi({ description: "The day's final list version" }),
  printedVersion: z.number().int().nullable().openapi({ description: "The version last downloaded" }),
  printedAt: z.string().nullable().openapi({ description: "When the printed copy was last downloaded; null: never" }),
});

export const availability = defineResource({
  name: "routeAvailability",
  plural: "routeAvailabilities",
  label: m`Route availability`,
  path: "/api/v1/route-availability",
  tag: "Transport",
  scope: "school",
  module: "transport",
  data: RouteAvailabilities,
  record: Record,
  view: {
    fields: {
      id: routeAvailabilities.id,
      createdAt: routeAvailabilities.createdAt,
      updatedAt: routeAvailabilities.updatedAt,
      routeId: routeAvailabilities.routeId,
      routeName: routes.name,
      date: routeAvailabilities.date,
      seats: routeAvailabilities.seats,
      cancelled: routeAvailabilities.cancelled,
      vehicleSeats: transports.seats,
      taken: routeAvailabilities.taken,
      version: routeAvailabilities.version,
      printedVersion: routeAvailabilities.printedVersion,
      printedAt: routeAvailabilities.printedAt,
    },
    join: (q) =>
      q
        .join(Routes, eq(routes.id, routeAvailabilities.routeId))
        .join(Transports, eq(transports.id, routes.transportId)),
  },
  toRecord: (_ctx, row) => ({ ...timestamps(row), ...row }),
  visibleTo: (ctx) => drivenBy(ctx, routeAvailabilities.routeId),
  conflictMessage: m`The route already has an availability for this date`,
});

const window = {
  from: {
    schema: schoolDate("Only days on or after this date", "2027-03-01").optional(),
    where: (_ctx: Ctx, v: string) => gte(routeAvailabilities.date, v),
    example: "2027-03-01",
  },
  to: {
    schema: schoolDate("Only days on or before this date", "2027-03-31").optional(),
    where: (_ctx: Ctx, v: string) => lte(routeAvailabilities.date, v),
    example: "2027-03-31",
  },
};

export const listRouteAvailabilities = availability.list({
  access: permissions.read,
  filters: {
    // route_availability_uq (route_id, date)
    routeId: {
      schema: idFilter("Only this route's days"),
      where: (_ctx, v: number) => eq(routeAvailabilities.routeId, v),
      example: "1",
    },
    ...window,
  },
  // In date order, then route: a unique key route_availability_school_idx (school, date, route) serves.
  defaultOrder: [{ by: routeAvailabilities.date }, { by: routeAvailabilities.routeId }],
  summary: "List the routes' days with an override or changes (paginated), in date order",
});

export const getRouteAvailability = availability.get({ access: permissions.read });

/** The route's day on `date` (404 unknown here, 422 when it does not run), read in one batch. */
async function routeDayOf(ctx: SchoolCtx, routeId: number, date: string): Promise<RouteDay> {
  const read = await withSchoolDay(ctx, date, (b) => b.read(routeDays(ctx, date, eq(routes.id, routeId))));
  const [day] = read.results.get(read.slots);
  if (!day) throw notFound(m`Route ${routeId} not found`);
  assertRuns(read.calendar, day, date);
  return day;
}

const tooFew = (day: RouteDay, seats: number, date: string) =>
  m`${seats} seats are fewer than the ${day.riders} riders of ${day.routeName} on ${date}`;

/**
 * A route cancelled for a day: the route changes to it that day are withdrawn in the same batch
 * (their seats given back, families and office told: exit-permission `redecide`). Prepared before
 * the write, dispatched after the commit.
 */
const cancelling = new WeakMap<object, Redecision>();
const CANCELLED =
  "`cancelled: true` cancels the route that day: the exit permissions that change a student to it that day are withdrawn in the same write (`route-cancelled`), their seats given back, their families and the office told; no route change to it is accepted; its own riders are shown in the transportation summary with their home route cancelled (`usualRoute.cancelled`), and the driver's list and its PDF say the route is cancelled, for the office to arrange their way home.";

const created = availability.create({
  access: permissions.write,
  input: z.object({
    routeId: recordId().openapi({ example: 1 }),
    date: schoolDate("The day the seats are for", "2027-03-01"),
    seats: Seats.nullable().optional().openapi({ description: "The day's seats; omitted or null: the vehicle's" }),
    cancelled: z.boolean().optional().openapi({ description: "The route does not run that day (default false)" }),
  }),
  description: CANCELLED,
  errors: [422],
  examples: {
    422: [
      {
        name: "seats",
        summary: "Fewer seats than riders",
        detail: "30 seats are fewer than the 34 riders of North loop on 2027-03-01",
      },
      { name: "holiday", summary: "A holiday", detail: "2027-03-01 is a school holiday: no route runs" },
    ],
  },
  values: async (ctx, { body }) => {
    const day = await routeDayOf(ctx, body.routeId, body.date);
    const seats = body.seats ?? null;
    const cancelled = body.cancelled ?? false;
    if (!cancelled && seats !== null && seats < day.riders) throw unprocessable(tooFew(day, seats, body.date));
    if (cancelled)
      cancelling.set(body, await factChanged(ctx, { fact: "route-day", routeId: body.routeId, date: body.date }));
    return { routeId: body.routeId, date: body.date, seats, cancelled };
  },
  also: (_ctx, { body }) => cancelling.get(body)?.statements ?? [],
  summary: "Set a route's seats for a date (an override of the vehicle's), or cancel it that day",
});
export const createRouteAvailability = operation(created.route, async (ctx, input) => {
  const record = await created.run(ctx, input);
  await cancelling.get(input.body)?.dispatch();
  return record;
});

const updateRoute = availability.update({
  access: permissions.write,
  input: z.object({
    seats: Seats.nullable().optional().openapi({ description: "The day's seats; null: back to the vehicle's" }),
    cancelled: z.boolean().optional().openapi({ description: "The route does not run that day; false: it runs again" }),
  }),
  errors: [422],
  examples: { 422: "30 seats are fewer than the 34 riders of North loop on 2027-03-01" },
  summary: "Change a route's seats for a date (null resets to the vehicle's), or cancel it that day",
  description: `Seats below the day's riders and manual joins are a 422. Below the joins of confirmed exit permissions, those beyond the seats lose theirs, the latest confirmed first: withdrawn in the same write, their families and the office told. ${CANCELLED}`,
});

/**
 * A guarded update: the seats are not below the day's own riders and the school's manual joins when
 * the write happens. Below the riders and every join, the joins of confirmed exit permissions beyond
 * the seats lose theirs, the latest confirmed first: those permissions are withdrawn in the same
 * batch (their seats given back, families and office told: exit-permission `redecide`).
 */
export async function updateRouteAvailability(ctx: SchoolCtx, { params, body }: InputOf<typeof updateRoute.route>) {
  const row = await availability.find(ctx, params.id);
  const day = await routeDayOf(ctx, row.routeId, row.date);
  if (body.cancelled === true && !row.cancelled) {
    const redecided = await factChanged(ctx, { fact: "route-day", routeId: row.routeId, date: row.date });
    await availability.change(ctx, params.id, {
      action: "update",
      set: { cancelled: true, ...(body.seats === undefined ? {} : { seats: body.seats }) },
      also: redecided.statements,
    });
    await redecided.dispatch();
    return;
  }
  const seats = body.seats === undefined ? row.seats : body.seats;
  const held = RouteAvailabilityStudents.select(ctx, { n: sql<number>`count(*)` }).where(
    eq(routeAvailabilityStudents.routeAvailabilityId, params.id),
    eq(routeAvailabilityStudents.kind, "join"),
    eq(routeAvailabilityStudents.confirmed, true),
    isNotNull(routeAvailabilityStudents.exitPermissionId),
  );
  const permitted = (await held.first())?.n ?? 0;
  if (seats !== null && seats < day.riders - permitted) throw unprocessable(tooFew(day, seats, row.date));
  const enough =
    seats === null
      ? []
      : [
          {
            when: sql`${seats} >= ${riders(ctx, routeAvailabilities.routeId, row.date)} - (${held})`,
            message: tooFew(day, seats, row.date),
          },
        ];
  const redecided =
    seats !== null && seats < day.riders
      ? await factChanged(ctx, { fact: "seats", routeId: row.routeId, dates: [row.date], seats })
      : undefined;
  await availability.change(ctx, params.id, {
    action: "update",
    set: { seats, ...(body.cancelled === undefined ? {} : { cancelled: body.cancelled }) },
    rules: enough,
    also: redecided?.statements ?? [],
  });
  await redecided?.dispatch();
}
export const updateRouteAvailabilityOperation = operation(updateRoute.route, updateRouteAvailability);

export const deleteRouteAvailability = availability.delete({
  access: permissions.write,
  errors: [409],
  examples: { 409: "The day has changes (students joining or away): delete them first" },
  // The day's changes hang off the row: removing it would drop them silently.
  check: async (ctx, { id }) => {
    const change = await RouteAvailabilityStudents.select(ctx, { id: routeAvailabilityStudents.id })
      .where(eq(routeAvailabilityStudents.routeAvailabilityId, id))
      .first();
    if (change) throw conflict(m`The day has changes (students joining or away): delete them first`);
  },
  summary: "Delete a route's day (its seats go back to the vehicle's)",
});

const DayOfRoute = z
  .object({
    routeId: z.number().int(),
    routeName: z.string(),
    direction: z.enum(["to_school", "home"]),
    vehicle: z.string().openapi({ description: "The vehicle's name" }),
    vehicleSeats: z.number().int(),
    availabilityId: z.number().int().nullable().openapi({ description: "The day's row, when it has one" }),
    override: z.number().int().nullable().openapi({ description: "The school's seats for the day; null: none" }),
    cancelled: z.boolean().openapi({ description: "The school cancelled the route that day" }),
    seats: z.number().int().openapi({ description: "The override, or the vehicle's seats" }),
    riders: z.number().int().openapi({ description: "Riders that day, joining students included" }),
    taken: z.number().int().openapi({ description: "Seats taken by students joining for the day" }),
    available: z.number().int().openapi({ description: "Seats left: seats less riders" }),
    version: z.number().int().openapi({ description: "The day's final list version" }),
  })
  .openapi("RouteDay", { description: "A route's seats and riders on one day" });

const toDay = (d: RouteDay) => ({
  routeId: d.routeId,
  routeName: d.routeName,
  direction: d.direction,
  vehicle: d.vehicle,
  vehicleSeats: d.vehicleSeats,
  availabilityId: d.availabilityId,
  override: d.override,
  cancelled: Boolean(d.cancelled),
  taken: d.taken,
  riders: d.riders,
  version: d.version,
  ...seatsOf(d),
});

const SchoolDay = z
  .object({
    date: z.iso.date().openapi({ description: "The school-local day" }),
    weekday: z.number().int().openapi({ description: "ISO weekday, 1 Monday .. 7 Sunday" }),
    holiday: z.boolean().openapi({ description: "A holiday cycle covers the date: no route runs" }),
    schoolDay: z.boolean().openapi({ description: "The school has school that day (for some level): routes may run" }),
    reason: DayOffReason,
    routes: z
      .array(
        DayOfRoute.openapi({
          description: "A route running that day: one of its weekdays, a school day of its levels",
        }),
      )
      .openapi({ description: "Every route that runs that day" }),
  })
  .openapi("RouteAvailabilitySchoolDay");

const schoolRoute = defineRoute({
  method: "get",
  path: "/api/v1/route-availability/school",
  tag: "Transport",
  operationId: "getSchoolRouteAvailability",
  summary: "Every route running on a date with its seats, riders and what is left (default: the school's today)",
  access: permissions.read,
  module: "transport",
  request: {
    query: z.strictObject({ date: schoolDate("The date (default: the school's today)", "2027-03-01").optional() }),
  },
  responses: { 200: json(SchoolDay, "The school's routes on the date") },
});

/** The school's running routes on a date; a holiday lists none. One round trip (the school's zone, for today, is kept per isolate). */
export async function getSchoolRouteAvailability(ctx: SchoolCtx, { query }: InputOf<typeof schoolRoute>) {
  const date = query.date ?? (await schoolToday(ctx));
  const read = await withSchoolDay(ctx, date, (b) =>
    b.read(routeDays(ctx, date, runsOnWeekday(routes.weekdays, date))),
  );
  // A school's few routes sorted here, by name: no sort step in the database.
  const days = read.results
    .get(read.slots)
    .filter((d) => routeOff(date, read.calendar, d) === null)
    .sort((a, b) => compareText(a.routeName, b.routeName));
  const off = read.off;
  return {
    date,
    weekday: isoWeekday(date),
    holiday: off === "holiday",
    schoolDay: off === null,
    reason: off,
    routes: days.map(toDay),
  };
}
export const getSchoolRouteAvailabilityOperation = operation(schoolRoute, getSchoolRouteAvailability);

const MAX_RANGE_DAYS = 31;
const RouteRange = z
  .object({
    routeId: z.number().int(),
    routeName: z.string(),
    days: z
      .array(
        z.object({
          date: z.iso.date().openapi({ description: "The school-local day" }),
          runs: z
            .boolean()
            .openapi({ description: "The route runs that day: one of its weekdays, a school day of its levels" }),
          holiday: z.boolean().openapi({ description: "A holiday cycle covers the date" }),
          reason: RouteOffReason,
          day: DayOfRoute,
        }),
      )
      .openapi({ description: "Each day of the range, in order" }),
  })
  .openapi("RouteAvailabilityRange");

const byRoute = defineRoute({
  method: "get",
  path: "/api/v1/route-availability/route/{routeId}",
  tag: "Transport",
  operationId: "getRouteAvailabilityByRoute",
  errors: [422],
  examples: { 422: "Give `from` and `to` together, without `date`" },
  summary: `A route's seats on a date, or on each date of a range (at most ${MAX_RANGE_DAYS} days)`,
  access: permissions.read,
  module: "transport",
  request: {
    params: z.object({ routeId: recordId().openapi({ param: { name: "routeId", in: "path" }, example: 1 }) }),
    query: z.strictObject({
      date: schoolDate("One date (default: the school's today)", "2027-03-01").optional(),
      from: schoolDate("A range's first date (with `to`)", "2027-03-01").optional(),
      to: schoolDate("A range's last date (with `from`)", "2027-03-07").optional(),
    }),
  },
  responses: { 200: json(RouteRange, "The route's days") },
});

/** The dates asked for: one date, or a range of at most MAX_RANGE_DAYS. */
async function datesOf(ctx: SchoolCtx, q: { date?: string; from?: string; to?: string }): Promise<string[]> {
  if (q.from || q.to) {
    if (!q.from || !q.to || q.date) throw unprocessable(m`Give \`from\` and \`to\` together, without \`date\``);
    const dates: string[] = [];
    for (let d = q.from; d <= q.to; d = addDays(d, 1)) {
      dates.push(d);
      if (dates.length > MAX_RANGE_DAYS) throw unprocessable(m`A range is at most ${MAX_RANGE_DAYS} days`);
    }
    if (dates.length === 0) throw unprocessable(m`\`from\` is after \`to\``);
    return dates;
  }
  return [q.date ?? (await schoolToday(ctx))];
}

export async function getRouteAvailabilityByRoute(ctx: SchoolCtx, { params, query }: InputOf<typeof byRoute>) {
  const dates = await datesOf(ctx, query);
  const first = dates[0] ?? "";
  const last = dates[dates.length - 1] ?? first;
  // One batch: the school, the cycles around the range, and the route's day for each date.
  const read = await withSchoolDays(ctx, first, last, (batch) =>
    dates.map((d) => batch.read(routeDays(ctx, d, eq(routes.id, params.routeId)))),
  );
  const days = dates.map((date, i) => {
    const slot = read.slots[i];
    const [row] = slot ? read.results.get(slot) : [];
    if (!row) throw notFound(m`Route ${params.routeId} not found`);
    const why = routeOff(date, read.calendar, row);
    return { date, runs: why === null, holiday: why === "holiday", reason: why, day: toDay(row) };
  });
  const head = days[0]?.day;
  if (!head) throw notFound(m`Route ${params.routeId} not found`);
  return { routeId: head.routeId, routeName: head.routeName, days };
}
export const getRouteAvailabilityByRouteOperation = operation(byRoute, getRouteAvailabilityByRoute);

const History = pageOf(Record, "RouteAvailabilityPage");
const historyRoute = defineRoute({
  method: "get",
  path: "/api/v1/route-availability/history",
  tag: "Transport",
  operationId: "listRouteAvailabilityHistory",
  summary: "The school's past days with an override or changes, newest first (paginated)",
  access: permissions.read,
  module: "transport",
  request: { query: z.strictObject({ ...PageQuery.shape, routeId: idFilter("Only this route's days") }) },
  responses: { 200: json(History, "A page of past days") },
});

export async function listRouteAvailabilityHistory(ctx: SchoolCtx, { query }: InputOf<typeof historyRoute>) {
  const today = await schoolToday(ctx);
  const where = [
    lt(routeAvailabilities.date, today),
    query.routeId === undefined ? undefined : eq(routeAvailabilities.routeId, query.routeId),
    and(drivenBy(ctx, routeAvailabilities.routeId)),
  ];
  const batch = new Batch(ctx);
  const rows = batch.read(
    availability
      .select(ctx)
      .where(...where)
      .orderBy(desc(routeAvailabilities.date), desc(routeAvailabilities.routeId))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
  );
  const total = batch.read(
    RouteAvailabilities.select(ctx)
      .where(...where)
      .count(),
  );
  const results = await batch.commit();
  return new Listing(
    results.get(rows).map((r) => availability.toRecord(ctx, r)),
    results.get(total)[0]?.n ?? 0,
    query,
  );
}
export const listRouteAvailabilityHistoryOperation = operation(historyRoute, listRouteAvailabilityHistory);
