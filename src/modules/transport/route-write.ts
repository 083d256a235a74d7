/**
 * Writing routes: create with its stops, update (the stops, when sent, replace the list: a stop
 * sent with its `id` is kept, with its riders; a stop left out is removed, which a stop with
 * riders refuses: 409 naming how many), delete (not while students ride it: 409).
 *
 * What is checked first, in one read: the vehicle is this school's (404) and in service (422); the
 * levels are the school's (422); a stop's trusted address is this school's (404) and approved
 * (422); a kept stop is on the route (422); a route with riders keeps its direction and the
 * weekdays they ride (409), and a new vehicle seats the route's busiest weekday (422).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Schools, schools } from "../../db/schema/core";
import {
  RouteAvailabilities,
  RouteStops,
  RouteStudents,
  routeAvailabilities,
  routeStops,
  routeStudentDays,
  routeStudents,
  Transports,
  transports,
} from "../../db/schema/transport";
import { TrustedAddresses, trustedAddresses } from "../../db/schema/trusted-address";
import { and, eq, gt, gte, isNull, type SQL, sql } from "../../db/sql";
import { joinTable } from "../../db/table";
import { GuardFailed, guard, inList, insertedId, type Statement } from "../../db/write";
import { now, type SchoolCtx } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { factChanged } from "../../lib/facts";
import { m, zodMessage } from "../../lib/message";
import { stateName } from "../../lib/names";
import { IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, noContent, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { maskOf, weekdayName } from "../../lib/weekdays";
import { addDays, dateIn } from "../../lib/zoned-time";
import { LEVELS, type Level, notOfferedMessage, readLevels } from "../school/api";
import { permissions } from "./permissions";
import { Direction, routeResource, Time, Weekday } from "./route";

export const MAX_STOPS = 50;

const Weekdays = z
  .array(Weekday)
  .min(1)
  .max(7)
  .refine((v) => new Set(v).size === v.length, zodMessage(m`Each weekday at most once`))
  .openapi({
    uniqueItems: true,
    example: [1, 2, 3, 4, 5],
    description: "The ISO weekdays it runs (1 Monday .. 7 Sunday)",
  });

const Levels = z
  .array(z.enum(LEVELS))
  .max(LEVELS.length)
  .refine((v) => new Set(v).size === v.length, zodMessage(m`Each level at most once`))
  .openapi({
    uniqueItems: true,
    example: ["elementary"],
    description: "Levels of the school it serves; empty or absent: every level",
  });

const StopInput = z
  .strictObject({
    id: z
      .number()
      .int()
      .min(1)
      .optional()
      .openapi({ description: "On update: an existing stop of the route, kept (with its riders)" }),
    name: text({ max: 100 }).openapi({ example: "Maple & 3rd" }),
    time: Time,
    address: text({ max: 300 }).nullable().optional().openapi({ example: "301 Maple Ave" }),
    trustedAddressId: z
      .number()
      .int()
      .min(1)
      .nullable()
      .optional()
      .openapi({ description: "An approved trusted address" }),
  })
  .openapi("RouteStopInput");

const Stops = z
  .array(StopInput)
  .min(1)
  .max(MAX_STOPS)
  .refine((stops) => stops.every((s, i) => i === 0 || (stops[i - 1]?.time ?? "") <= s.time), {
    ...zodMessage(m`Stops are in route order: each stop's time is at or after the previous one's`),
  })
  .refine(
    (stops) => {
      const ids = stops.flatMap((s) => (s.id === undefined ? [] : [s.id]));
      return new Set(ids).size === ids.length;
    },
    { ...zodMessage(m`Each stop id at most once`) },
  )
  .openapi({ description: `The stops in order, 1 to ${MAX_STOPS}` });

type StopIn = z.infer<typeof StopInput>;

const Name = text({ max: 100 }).openapi({ example: "North 1 home" });
const TransportId = z.number().int().min(1).openapi({ example: 1, description: "The vehicle (an active one)" });

const created = routeResource.create({
  access: permissions.routeWrite,
  input: z.object({
    name: Name,
    transportId: TransportId,
    direction: Direction,
    weekdays: Weekdays,
    levels: Levels.optional(),
    stops: Stops,
  }),
  summary: "Create a route with its stops",
  description:
    "404 for a vehicle or trusted address that is not this school's; 422 for a vehicle out of service, a level " +
    "the school does not offer, or a trusted address not approved; 409 for a name the school already has.",
  errors: [404, 422],
  examples: {
    422: [
      {
        name: "vehicleOut",
        summary: "The vehicle is out of service",
        detail: "Vehicle Bus 3 is out of service: a vehicle out of service cannot serve a route that runs",
      },
      {
        name: "seats",
        summary: "The vehicle has fewer seats than the route's riders",
        detail: "Vehicle Bus 3 has 30 seats; the route carries 34 riders on Monday",
      },
      {
        name: "level",
        summary: "A level the school does not offer",
        detail: "The school does not offer the level high; it offers preschool, elementary, middle",
      },
    ],
  },
});

const updated = routeResource.update({
  access: permissions.routeWrite,
  input: z.object({
    name: Name.optional(),
    transportId: TransportId.optional(),
    direction: Direction.optional(),
    weekdays: Weekdays.optional(),
    levels: Levels.optional(),
    stops: Stops.optional(),
  }),
  summary: "Update a route; `stops` replaces its stops",
  description:
    "`stops` replaces the list: a stop sent with its `id` is kept (its riders stay), one without is new, one left " +
    "out is removed; removing a stop that students board or leave at is a 409 naming how many, an id that is not " +
    "a stop of the route a 422. A route with riders cannot change direction, nor drop a weekday they ride (409); " +
    "a new vehicle must be in service and seat the route's busiest weekday (422). Fewer weekdays or levels withdraw, in " +
    "the same write, the route changes to it from today on that no longer hold (a day it no longer runs, a student of " +
    "a level it no longer serves): their seats come back, the families and the office are told.",
  errors: [404, 422],
  examples: {
    422: [
      {
        name: "vehicleOut",
        summary: "The vehicle is out of service",
        detail: "Vehicle Bus 3 is out of service: a vehicle out of service cannot serve a route that runs",
      },
      {
        name: "seats",
        summary: "The vehicle has fewer seats than the route's riders",
        detail: "Vehicle Bus 3 has 30 seats; the route carries 34 riders on Monday",
      },
      {
        name: "level",
        summary: "A level the school does not offer",
        detail: "The school does not offer the level high; it offers preschool, elementary, middle",
      },
    ],
    409: [
      {
        name: "weekdays",
        summary: "A weekday its students ride is dropped",
        detail: "Route 42 carries 12 riders on Monday: it keeps the weekdays its students ride",
      },
      {
        name: "stop",
        summary: "A stop with riders is removed",
        detail: "Stop 7 (Maple & 3rd) has 3 rider(s): move them to another stop before removing it",
      },
    ],
  },
});

interface Wanted {
  routeId?: number;
  transportId?: number;
  levels?: readonly Level[];
  stops?: readonly StopIn[];
}

/** Everything a write checks, read in one round trip. */
async function readChecks(ctx: SchoolCtx, want: Wanted) {
  const batch = new Batch(ctx);
  const trustedIds = (want.stops ?? []).flatMap((s) => (s.trustedAddressId ? [s.trustedAddressId] : []));
  const vehicle =
    want.transportId === undefined
      ? undefined
      : batch.read(
          Transports.select(ctx, {
            id: transports.id,
            name: transports.name,
            status: transports.status,
            seats: transports.seats,
          })
            .where(eq(transports.id, want.transportId))
            .limit(1),
        );
  const school = want.levels?.length
    ? batch.read(Schools.select(ctx, { levels: schools.levels }).where(eq(schools.id, ctx.schoolId)).limit(1))
    : undefined;
  const trusted = trustedIds.length
    ? batch.read(
        TrustedAddresses.select(ctx, { id: trustedAddresses.id, status: trustedAddresses.status }).where(
          inList(trustedAddresses.id, trustedIds),
        ),
      )
    : undefined;
  const stops =
    want.routeId === undefined
      ? undefined
      : batch.read(
          RouteStops.select(ctx, {
            id: routeStops.id,
            name: routeStops.name,
            riders: sql<number>`(SELECT count(*) FROM "route_student" "r" WHERE "r"."stop_id" = ${routeStops.id})`,
          }).where(eq(routeStops.routeId, want.routeId)),
        );
  const days =
    want.routeId === undefined
      ? undefined
      : batch.read(
          RouteStudents.select(ctx, { weekday: routeStudentDays.weekday, riders: sql<number>`count(*)` })
            .join(joinTable(routeStudentDays), eq(routeStudentDays.routeStudentId, routeStudents.id))
            .where(eq(routeStudents.routeId, want.routeId))
            .groupBy(routeStudentDays.weekday),
        );
  // Another vehicle: the days from today on whose joins its seats count (no seats of their own).
  const joinDays =
    want.transportId === undefined || want.routeId === undefined
      ? undefined
      : batch.read(
          RouteAvailabilities.select(ctx, { date: routeAvailabilities.date }).where(
            eq(routeAvailabilities.routeId, want.routeId),
            isNull(routeAvailabilities.seats),
            gt(routeAvailabilities.taken, 0),
            gte(routeAvailabilities.date, addDays(dateIn("UTC", ctx.deps.clock.now()), -1)),
          ),
        );
  const results = batch.size ? await batch.commit() : undefined;
  return {
    joinDays: joinDays && results ? results.get(joinDays).map((d) => d.date) : [],
    vehicle: vehicle && results ? results.get(vehicle)[0] : undefined,
    levels: school && results ? readLevels(results.get(school)[0]?.levels ?? []) : [],
    trusted: trusted && results ? results.get(trusted) : [],
    stops: stops && results ? results.get(stops) : [],
    days: days && results ? results.get(days) : [],
  };
}

/** The checks of a write against what `readChecks` read; throws the problem of the first that fails. */
function refuse(
  want: Wanted & { routeName?: string; direction?: string; weekdays?: readonly number[] },
  read: Awaited<ReturnType<typeof readChecks>>,
  before?: { direction: string; weekdays: readonly number[] },
) {
  if (want.transportId !== undefined) {
    if (!read.vehicle) throw notFound(m`Transport ${want.transportId} not found`);
    if (read.vehicle.status !== "active") {
      throw unprocessable(
        m`Vehicle ${read.vehicle.name} is out of service: a vehicle out of service cannot serve a route that runs`,
      );
    }
    const busiest = [...read.days].sort((a, b) => Number(b.riders) - Number(a.riders))[0];
    if (busiest && Number(busiest.riders) > read.vehicle.seats) {
      throw unprocessable(
        m`Vehicle ${read.vehicle.name} has ${read.vehicle.seats} seats; the route carries ${busiest.riders} riders on ${weekdayName(busiest.weekday)}`,
      );
    }
  }
  const offered = read.levels;
  const missing = (want.levels ?? []).find((l) => !offered.includes(l));
  if (missing) throw unprocessable(notOfferedMessage(missing, offered));
  for (const stop of want.stops ?? []) {
    const id = stop.trustedAddressId;
    if (!id) continue;
    const found = read.trusted.find((t) => t.id === id);
    if (!found) throw notFound(m`Trusted address ${id} not found`);
    if (found.status !== "approved")
      throw unprocessable(m`Trusted address ${id} is ${stateName(found.status)}; a stop serves an approved one`);
  }
  if (want.routeId === undefined || !before) return;
  const riders = read.days.reduce((n, d) => Math.max(n, Number(d.riders)), 0);
  if (want.direction !== undefined && want.direction !== before.direction && riders > 0) {
    throw conflict(m`Route ${want.routeId} has riders: it cannot change direction (take them off the route first)`);
  }
  if (want.weekdays) {
    const dropped = read.days.filter((d) => !want.weekdays?.includes(d.weekday) && Number(d.riders) > 0);
    const first = dropped[0];
    if (first) {
      throw conflict(
        m`Route ${want.routeId} carries ${first.riders} riders on ${weekdayName(first.weekday)}: it keeps the weekdays its students ride`,
      );
    }
  }
  if (want.stops) {
    const known = new Set(read.stops.map((s) => s.id));
    const unknown = want.stops.find((s) => s.id !== undefined && !known.has(s.id));
    if (unknown?.id !== undefined) throw unprocessable(m`Stop ${unknown.id} is not a stop of route ${want.routeId}`);
    const kept = new Set(want.stops.flatMap((s) => (s.id === undefined ? [] : [s.id])));
    const removed = read.stops.find((s) => !kept.has(s.id) && Number(s.riders) > 0);
    if (removed) {
      throw conflict(
        m`Stop ${removed.id} (${removed.name}) has ${removed.riders} rider(s): move them to another stop before removing it`,
      );
    }
  }
}

/**
 * New stops of route `routeId` (a number, or the id a create just wrote) at their positions, as ONE
 * statement over a JSON parameter, and their audit rows.
 */
function insertStops(
  ctx: SchoolCtx,
  routeId: number | SQL<number>,
  stops: { stop: StopIn; position: number }[],
): Statement[] {
  if (!stops.length) return [];
  const at = now(ctx);
  const rows = JSON.stringify(
    stops.map(({ stop, position }) => ({
      position,
      name: stop.name,
      time: stop.time,
      address: stop.address ?? null,
      trustedAddressId: stop.trustedAddressId ?? null,
    })),
  );
  return RouteStops.insertMany(
    ctx,
    RouteStops.insertFrom(
      ctx,
      (row) =>
        sql`SELECT ${row({ routeId, position: sql`j.value->>'position'`, name: sql`j.value->>'name'`, time: sql`j.value->>'time'`, address: sql`j.value->>'address'`, trustedAddressId: sql`j.value->>'trustedAddressId'` })} FROM json_each(${rows}) j`,
      at,
    ),
    // The rows the insert just wrote take the last ids (AUTOINCREMENT).
    sql`${routeStops.id} > ${insertedId(routeStops)} - changes()`,
    ["routeId", "position", "name", "time", "address", "trustedAddressId"],
  );
}

/**
 * The statements that make the route's stops `stops`: removed ones deleted, kept ones moved and
 * changed (positions go negative first, so the unique position never clashes midway), new ones
 * inserted; each stop's change audited.
 */
function replaceStops(ctx: SchoolCtx, routeId: number, stops: readonly StopIn[]): Statement[] {
  const kept = stops.flatMap((s, i) => (s.id === undefined ? [] : [{ id: s.id, stop: s, position: i + 1 }]));
  const keptIds = kept.map((k) => k.id);
  const ofRoute = eq(routeStops.routeId, routeId);
  const changes = kept.map((k) =>
    RouteStops.update(ctx, eq(routeStops.id, k.id), {
      position: k.position,
      name: k.stop.name,
      time: k.stop.time,
      address: k.stop.address ?? null,
      trustedAddressId: k.stop.trustedAddressId ?? null,
    }),
  );
  const fresh = stops.flatMap((s, i) => (s.id === undefined ? [{ stop: s, position: i + 1 }] : []));
  return [
    ...RouteStops.delete(ctx, keptIds.length ? and(ofRoute, sql`NOT ${inList(routeStops.id, keptIds)}`) : ofRoute),
    ...changes.map(([audit]) => audit),
    ctx.deps.db
      .update(routeStops)
      .set({ position: sql`-${routeStops.position}` })
      .where(RouteStops.where(ctx, ofRoute)),
    ...changes.map(([, update]) => update),
    ...insertStops(ctx, routeId, fresh),
  ];
}

/**
 * Aborts the batch unless vehicle `id` is still in service when it commits: a vehicle going out of
 * service meanwhile (its own UPDATE refuses a vehicle that serves a route) cannot end up serving
 * this one. A no-op UPDATE (status kept) counts the row it matched; nothing is audited.
 */
function stillActive(ctx: SchoolCtx, id: number): Statement[] {
  return [
    ctx.deps.db
      .update(transports)
      .set({ status: sql`${transports.status}` })
      .where(Transports.where(ctx, and(eq(transports.id, id), eq(transports.status, "active")))),
    guard(ctx.deps.db),
  ];
}

/** Creates the route and its stops: one batch. */
export async function createRoute(ctx: SchoolCtx, { body }: InputOf<typeof created.route>) {
  refuse(body, await readChecks(ctx, body));
  const levels = LEVELS.filter((l) => body.levels?.includes(l));
  const id = routeResource.data.insertedId();
  const batch = new Batch(ctx)
    .add(
      ...routeResource.writes.insert(ctx, {
        name: body.name,
        transportId: body.transportId,
        direction: body.direction,
        weekdays: maskOf(body.weekdays),
        levels,
      }),
    )
    .add(
      ...insertStops(
        ctx,
        id,
        body.stops.map((stop, i) => ({ stop, position: i + 1 })),
      ),
    )
    .add(...stillActive(ctx, body.transportId));
  const read = batch.read(routeResource.readOne(ctx, id));
  const results = await batch.commit(routeResource.messages).catch((err: unknown) => {
    if (err instanceof GuardFailed) throw unprocessable(m`Vehicle ${body.transportId} went out of service meanwhile`);
    throw err;
  });
  const [row] = results.get(read);
  if (!row) throw new Error("route: the created route was not read back");
  return routeResource.toRecord(ctx, row);
}

export const createRouteOperation = operation(created.route, createRoute);

/** Updates the route and replaces its stops when sent: one batch. */
export async function updateRoute(ctx: SchoolCtx, { params, body }: InputOf<typeof updated.route>) {
  const { id } = params;
  const before = await routeResource.find(ctx, id);
  const want = {
    ...body,
    routeId: id,
    transportId: body.transportId === before.transportId ? undefined : body.transportId,
  };
  const read = await readChecks(ctx, want);
  refuse(want, read, before);
  const set = {
    name: body.name,
    transportId: body.transportId,
    direction: body.direction,
    weekdays: body.weekdays ? maskOf(body.weekdays) : undefined,
    levels: body.levels ? LEVELS.filter((l) => body.levels?.includes(l)) : undefined,
  };
  // Fewer weekdays or levels, or another direction: the route changes to it that no longer hold go,
  // in the same batch (exit-permission `redecide`).
  const narrowed =
    (body.weekdays !== undefined && before.weekdays.some((d) => !body.weekdays?.includes(d))) ||
    (body.levels !== undefined &&
      body.levels.length > 0 &&
      (before.levels.length === 0 || before.levels.some((l) => !body.levels?.includes(l)))) ||
    (body.direction !== undefined && body.direction !== before.direction);
  const redecided = narrowed
    ? await factChanged(ctx, {
        fact: "route",
        routeId: id,
        weekdays: body.weekdays ?? before.weekdays,
        levels: set.levels ?? before.levels,
        direction: body.direction ?? before.direction,
      })
    : undefined;
  // A vehicle with fewer seats: on each day with joins, those beyond its seats go, latest confirmed first.
  const seats = read.vehicle?.seats ?? null;
  const reseated = read.joinDays.length
    ? await factChanged(ctx, { fact: "seats", routeId: id, dates: read.joinDays, seats })
    : undefined;
  const batch = new Batch(ctx)
    .add(...routeResource.writes.update(ctx, id, set))
    .add(...(body.stops ? replaceStops(ctx, id, body.stops) : []))
    .add(...(want.transportId === undefined ? [] : stillActive(ctx, want.transportId)))
    .add(...(redecided?.statements ?? []))
    .add(...(reseated?.statements ?? []));
  await routeResource.commit(ctx, id, batch, {
    messages: {
      ...routeResource.messages,
      reference: m`Route ${id} changed while it was being written (a stop got riders); try again`,
    },
  });
  await redecided?.dispatch();
  await reseated?.dispatch();
}

export const updateRouteOperation = operation(updated.route, updateRoute);

const deleted = defineRoute({
  method: "delete",
  path: "/api/v1/route/{id}",
  tag: "Transport",
  operationId: "deleteRoute",
  summary: "Delete a route (not while students ride it: 409)",
  description:
    "Its stops, days' seats and list changes go with it. A route that students still ride is a 409 naming how " +
    "many: take them off the route first.",
  access: permissions.routeWrite,
  module: "transport",
  audit: "route",
  errors: [409, 422],
  examples: {
    409: "Route 42 has 12 student(s) on it; take them off the route first",
    422: "Route 42 got students meanwhile; take them off the route first",
  },
  request: { params: IdParams },
  responses: { 204: noContent },
});

/**
 * Deletes a route no student rides: the check names how many do, and the DELETE's own condition
 * refuses a rider added meanwhile. Its stops' audit rows are written before the cascade removes them.
 */
export async function deleteRoute(ctx: SchoolCtx, { params }: InputOf<typeof deleted>) {
  const { id } = params;
  const record = await routeResource.find(ctx, id);
  if (record.studentCount > 0) {
    throw conflict(m`Route ${id} has ${record.studentCount} student(s) on it; take them off the route first`);
  }
  await routeResource.change(ctx, id, {
    action: "delete",
    remove: true,
    before: [RouteStops.auditRemoved(ctx, eq(routeStops.routeId, id))],
    rules: [
      {
        when: sql`NOT ${RouteStudents.exists(ctx, eq(routeStudents.routeId, id))}`,
        message: m`Route ${id} got students meanwhile; take them off the route first`,
      },
    ],
  });
}

export const deleteRouteOperation = operation(deleted, deleteRoute);
