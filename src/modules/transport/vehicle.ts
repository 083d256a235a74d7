/**
 * Vehicles (`/api/v1/transport`): a name or number unique in the school, a plate, seats (1 to 100),
 * the driver's name and phone and, when the driver signs in, their user (given the built-in
 * `driver` role here), and a status (`active`, `out_of_service`).
 *
 * Rules: seats never fall below the riders any route of the vehicle carries on a weekday (or on a
 * date with its own seats row): a 422 naming the day and the counts. A vehicle that serves a route
 * cannot go out of service (422 naming the routes: move them to another vehicle first), and cannot
 * be deleted (409). Both rules are conditions of the UPDATE itself, so a rider or a route added
 * meanwhile still refuses it.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { users } from "../../db/schema/core";
import {
  RouteAvailabilities,
  RouteStudents,
  Routes,
  routeAvailabilities,
  routeStudentDays,
  routeStudents,
  routes,
  TRANSPORT_STATUSES,
  Transports,
  transports,
} from "../../db/schema/transport";
import { SchoolUsers, schoolUsers } from "../../db/schema/user";
import { asc, desc, eq, gte, isNull, type SQL, sql } from "../../db/sql";
import { joinTable } from "../../db/table";
import type { Statement } from "../../db/write";
import { BUILTIN_ROLES } from "../../lib/access";
import type { SchoolCtx } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { joinMessages, m } from "../../lib/message";
import { idFilter, recordId } from "../../lib/params";
import { Phone } from "../../lib/phone";
import { defineResource, type Filter, RecordBase, type Rule, timestamps } from "../../lib/resource";
import { type InputOf, operation } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import { weekdayName } from "../../lib/weekdays";
import { isoWeekday } from "../../lib/zoned-time";
import { mayAssign } from "../role/api";
import { giveRoles } from "../user/api";
import { permissions } from "./permissions";

export const MAX_SEATS = 100;

const Status = z
  .enum(TRANSPORT_STATUSES)
  .openapi({ example: "active", description: "active, or out of service (it may then serve no route)" });
const Seats = z
  .number()
  .int()
  .min(1)
  .max(MAX_SEATS)
  .openapi({ example: 40, description: `Seats for riders, 1 to ${MAX_SEATS}` });

export const TransportRecord = RecordBase.extend({
  name: z.string().openapi({ example: "Bus 3", description: "Its name or number, unique in the school" }),
  plate: z.string().nullable().openapi({ example: "ABC-123" }),
  seats: z.number().int().openapi({ example: 40, description: "Seats for riders" }),
  driverName: z.string().nullable().openapi({ example: "Dora Driver" }),
  driverPhone: z.string().nullable().openapi({ example: "+15550000005" }),
  driverUserId: z
    .number()
    .int()
    .nullable()
    .openapi({ example: 6, description: "The driver's user when they sign in (role driver): they read its routes" }),
  status: Status,
});

export const vehicleResource = defineResource({
  name: "transport",
  plural: "transports",
  label: m`Transport`,
  path: "/api/v1/transport",
  tag: "Transport",
  scope: "school",
  module: "transport",
  data: Transports,
  record: TransportRecord,
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    name: row.name,
    plate: row.plate,
    seats: row.seats,
    driverName: row.driverName,
    driverPhone: row.driverPhone,
    driverUserId: row.driverUserId,
    status: row.status,
  }),
  conflictMessage: m`A vehicle with this name already exists in this school (names that differ in case or accents are one)`,
});

export const listTransports = vehicleResource.list({
  access: permissions.read,
  filters: {
    name: {
      schema: searchTerm("Part of the name or number"),
      where: (_ctx, v) => contains(transports.nameSearch, v),
      example: "Bus",
    } satisfies Filter<string>,
    status: {
      schema: Status.optional(),
      // Unary plus: read in the school's order (transport_school_idx), not sorted after a filter.
      where: (_ctx, v) => sql`+${transports.status} = ${v}`,
      example: "active",
    } satisfies Filter<(typeof TRANSPORT_STATUSES)[number]>,
    driver: {
      schema: idFilter("Vehicles this user drives (user id)"),
      where: (_ctx, v) => eq(transports.driverUserId, v),
      example: "6",
    } satisfies Filter<number>,
  },
  sort: { createdAt: transports.createdAt },
  summary: "List the school's vehicles (paginated)",
});

export const getTransport = vehicleResource.get({ access: permissions.read });

const fields = {
  name: text({ max: 100 }).openapi({ example: "Bus 3" }),
  plate: text({ max: 20 }).nullable().optional().openapi({ example: "ABC-123" }),
  seats: Seats,
  driverName: text({ max: 100 }).nullable().optional().openapi({ example: "Dora Driver" }),
  driverPhone: Phone.nullable().optional(),
  driverUserId: recordId()
    .nullable()
    .optional()
    .openapi({ description: "A user of this school who drives it: given the driver role if they lack it" }),
  status: Status.optional().openapi({ description: "Default active" }),
};

const DRIVER_DOC =
  "`driverUserId` must be one of this school's people (404 otherwise); they are given the built-in driver role " +
  "(the caller must be allowed to give it: 403) and read only the routes of the vehicles they drive.";

/**
 * The driver's user: one of this school's people (404 otherwise), given the `driver` role here if
 * they do not hold it (the escalation rule applies), as statements for the write's batch.
 */
async function driverStatements(ctx: SchoolCtx, userId: number | null | undefined): Promise<Statement[]> {
  if (userId === undefined || userId === null) return [];
  await mayAssign(ctx, [BUILTIN_ROLES.driver.id]);
  const member = await SchoolUsers.select(ctx, { id: schoolUsers.id })
    .where(eq(schoolUsers.userId, userId), isNull(schoolUsers.deletedAt))
    .first();
  if (!member) throw notFound(m`User ${userId} not found`);
  return giveRoles(ctx, eq(users.id, userId), ["driver"]);
}

const created = vehicleResource.create({
  access: permissions.write,
  input: z.object(fields),
  summary: "Create a vehicle",
  description: `409 when the school has a vehicle of this name. ${DRIVER_DOC}`,
  errors: [403, 404],
});

/** Creates the vehicle and, for a driver user, their role: one batch. */
export async function createTransport(ctx: SchoolCtx, { body }: InputOf<typeof created.route>) {
  const also = await driverStatements(ctx, body.driverUserId);
  const batch = new Batch(ctx).add(...vehicleResource.writes.insert(ctx, body)).add(...also);
  const read = batch.read(vehicleResource.readOne(ctx, Transports.insertedId()));
  const [row] = (await batch.commit(vehicleResource.messages)).get(read);
  if (!row) throw new Error("transport: the created vehicle was not read back");
  return vehicleResource.toRecord(ctx, row);
}

export const createTransportOperation = operation(created.route, createTransport);

const updated = vehicleResource.update({
  access: permissions.write,
  input: z.object({ ...fields, name: fields.name.optional(), seats: Seats.optional() }),
  summary: "Update a vehicle",
  description:
    "Seats below the riders a route of the vehicle carries on some weekday (or on a date with its own seats row) " +
    "are a 422 naming the day and the counts. `out_of_service` while the vehicle serves a route is a 422 naming " +
    `the routes. ${DRIVER_DOC}`,
  errors: [403, 404, 422],
  examples: {
    422: [
      {
        name: "seats",
        summary: "Fewer seats than a route of it carries",
        detail: "Vehicle Bus 3 cannot have 30 seats: it carries 34 riders on Monday (route North 1 home)",
      },
      {
        name: "outOfService",
        summary: "Out of service while it serves a route",
        detail: "Vehicle Bus 3 serves route(s) North 1 home: a vehicle out of service cannot serve a route",
      },
    ],
  },
});

/** One day's riders of a route of the vehicle: on a weekday, or on a date that has its own seats row. */
interface DayLoad {
  route: string;
  weekday: number;
  date: string | null;
  riders: number;
}

/**
 * The riders each route of vehicle `id` carries per weekday (`route_student_day`, suspensions
 * aside), and on each date from `since` with a seats row of its own (that weekday's riders plus
 * the seats taken by changes). One round trip.
 */
async function loads(ctx: SchoolCtx, id: number, since: string): Promise<DayLoad[]> {
  const days = joinTable(routeStudentDays);
  const perWeekday = RouteStudents.select(ctx, {
    routeId: routes.id,
    route: routes.name,
    weekday: routeStudentDays.weekday,
    riders: sql<number>`count(*)`,
  })
    .join(Routes, eq(routes.id, routeStudents.routeId))
    .join(days, eq(routeStudentDays.routeStudentId, routeStudents.id))
    .where(eq(routes.transportId, id))
    .groupBy(routes.id, routeStudentDays.weekday);
  const dated = RouteAvailabilities.select(ctx, {
    routeId: routes.id,
    date: routeAvailabilities.date,
    taken: routeAvailabilities.taken,
  })
    .join(Routes, eq(routes.id, routeAvailabilities.routeId))
    .where(eq(routes.transportId, id), isNull(routeAvailabilities.seats), gte(routeAvailabilities.date, since))
    .orderBy(asc(routeAvailabilities.date));
  const batch = new Batch(ctx);
  const weekdaySlot = batch.read(perWeekday);
  const datedSlot = batch.read(dated);
  const results = await batch.commit();
  const weekly = results.get(weekdaySlot);
  const out: DayLoad[] = weekly.map((r) => ({
    route: r.route,
    weekday: r.weekday,
    date: null,
    riders: Number(r.riders),
  }));
  for (const d of results.get(datedSlot)) {
    const weekday = isoWeekday(d.date);
    const base = weekly.find((w) => w.routeId === d.routeId && w.weekday === weekday);
    const route = base?.route ?? weekly.find((w) => w.routeId === d.routeId)?.route;
    if (route === undefined && d.taken === 0) continue;
    out.push({
      route: route ?? `route ${d.routeId}`,
      weekday,
      date: d.date,
      riders: Number(base?.riders ?? 0) + d.taken,
    });
  }
  return out;
}

const dayName = (l: DayLoad) => (l.date ? m`${l.date} (${weekdayName(l.weekday)})` : weekdayName(l.weekday));

/** The 422 of seats below some day's riders, naming the fullest days (at most three). */
function tooFewSeats(name: string, seats: number, over: DayLoad[]) {
  const worst = [...over].sort((a, b) => b.riders - a.riders).slice(0, 3);
  const days = joinMessages(
    worst.map((l) => m`${l.riders} riders on ${dayName(l)} (route ${l.route})`),
    "; ",
  );
  return unprocessable(m`Vehicle ${name} cannot have ${seats} seats: it carries ${days}`);
}

/**
 * No route of the vehicle being updated carries more than `seats` riders on a weekday: the
 * UPDATE's own condition (a rider added meanwhile refuses it).
 */
function seatsHold(ctx: SchoolCtx, id: number, seats: number): SQL {
  const days = joinTable(routeStudentDays);
  const counts = RouteStudents.select(ctx, { n: sql<number>`count(*)` })
    .join(Routes, eq(routes.id, routeStudents.routeId))
    .join(days, eq(routeStudentDays.routeStudentId, routeStudents.id))
    .where(eq(routes.transportId, id))
    .groupBy(routes.id, routeStudentDays.weekday);
  return sql`NOT EXISTS (SELECT 1 FROM ${counts} "c" WHERE "c"."n" > ${seats})`;
}

/** The routes the vehicle serves (a sub-select over `route`). */
const servedBy = (ctx: SchoolCtx, id: number) =>
  Routes.select(ctx, { name: routes.name }).where(eq(routes.transportId, id));

export async function updateTransport(ctx: SchoolCtx, { params, body }: InputOf<typeof updated.route>) {
  const { id } = params;
  const before = await vehicleResource.find(ctx, id);
  const rules: Rule[] = [];
  if (body.seats !== undefined && body.seats < before.seats) {
    const since = new Date(ctx.deps.clock.now().getTime() - 24 * 3600 * 1000).toISOString().slice(0, 10);
    const seats = body.seats;
    const over = (await loads(ctx, id, since)).filter((l) => l.riders > seats);
    if (over.length) throw tooFewSeats(before.name, seats, over);
    rules.push({
      when: seatsHold(ctx, id, seats),
      message: m`Vehicle ${before.name} cannot have ${seats} seats: riders were added meanwhile; try again`,
    });
  }
  if (body.status === "out_of_service" && before.status !== "out_of_service") {
    const serving = await servedBy(ctx, id).orderBy(asc(routes.name)).limit(5).all();
    if (serving.length) {
      throw unprocessable(
        m`Vehicle ${before.name} serves route(s) ${serving.map((r) => r.name).join(", ")}: a vehicle out of service cannot serve a route that runs; move them to another vehicle first`,
      );
    }
    rules.push({
      when: sql`NOT ${Routes.exists(ctx, eq(routes.transportId, id))}`,
      message: m`Vehicle ${before.name} now serves a route; it cannot go out of service`,
    });
  }
  const also = await driverStatements(ctx, body.driverUserId);
  await vehicleResource.change(ctx, id, { action: "update", set: body, rules, also });
}

export const updateTransportOperation = operation(updated.route, updateTransport);

export const deleteTransport = vehicleResource.delete({
  access: permissions.write,
  summary: "Delete a vehicle (not while it serves a route: 409)",
  check: async (ctx, { id }) => {
    const serving = await servedBy(ctx, id).orderBy(desc(routes.createdAt)).limit(5).all();
    if (serving.length) {
      throw conflict(
        m`Transport ${id} serves route(s) ${serving.map((r) => r.name).join(", ")}; delete or move them first`,
      );
    }
  },
  errors: [409],
  examples: { 409: "Transport 42 serves route(s) North 1 home; delete or move them first" },
});
