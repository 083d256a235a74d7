/**
 * Routes (`/api/v1/route`): a vehicle going one way (`to_school` or `home`) on given ISO weekdays,
 * for given levels, through ordered stops at school-local times. The record carries its vehicle's
 * summary, its stops in order and how many students ride it, in one D1 call. Who sees which:
 * ./visibility.ts (a driver: the routes of the vehicles they drive). Create and update (the stops
 * replaced as a list): ./route-write.ts; a parent's view: ./family.ts.
 */
import { z } from "@hono/zod-openapi";
import {
  ROUTE_DIRECTIONS,
  RouteStops,
  Routes,
  routeStops,
  routes,
  Transports,
  transports,
} from "../../db/schema/transport";
import { eq, type SQL, sql } from "../../db/sql";
import { parseJson } from "../../lib/json";
import { LEVELS, type Level } from "../../lib/levels";
import { m, zodMessage } from "../../lib/message";
import { idFilter } from "../../lib/params";
import { defineResource, type Filter, RecordBase, type RowOf, timestamps } from "../../lib/resource";
import { contains, searchTerm } from "../../lib/search";
import { daysOf } from "../../lib/weekdays";
import { permissions } from "./permissions";
import { routeVisible } from "./visibility";

export const Direction = z
  .enum(ROUTE_DIRECTIONS)
  .openapi({ example: "home", description: "to_school: picks students up; home: takes them home" });
export const Weekday = z
  .number()
  .int()
  .min(1)
  .max(7)
  .openapi({ example: 1, description: "ISO weekday, 1 Monday .. 7 Sunday" });
export const Time = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, zodMessage(m`Expected a school-local time HH:mm`))
  .openapi({ example: "15:40", description: "When the bus is at the stop, school-local HH:mm" });

/** ISO weekdays as the stored bit mask (bit d-1) and back. */

export const RouteStop = z
  .object({
    id: z.number().int().openapi({ example: 1 }),
    position: z.number().int().min(1).openapi({ example: 1, description: "1-based order on the route" }),
    name: z.string().openapi({ example: "Maple & 3rd", description: "The stop's name" }),
    time: Time,
    address: z.string().nullable().openapi({ example: "301 Maple Ave", description: "Where the stop is, as written" }),
    trustedAddressId: z.number().int().nullable().openapi({ description: "An approved trusted address it serves" }),
  })
  .openapi("RouteStop", { description: "A stop of a route: where and when the bus stops" });

export const VehicleSummary = z
  .object({
    id: z.number().int().openapi({ example: 1 }),
    name: z.string().openapi({ example: "Bus 3", description: "The vehicle's name" }),
    plate: z.string().nullable().openapi({ example: "ABC-123" }),
    seats: z.number().int().openapi({ example: 40, description: "Seats for riders" }),
    status: z.string().openapi({ example: "active", description: "active, or out_of_service" }),
    driverName: z.string().nullable().openapi({ example: "Dora Driver" }),
    driverPhone: z.string().nullable().openapi({ example: "+15550000005" }),
  })
  .openapi("RouteVehicle", { description: "The vehicle that runs a route" });

export const RouteRecord = RecordBase.extend({
  name: z.string().openapi({ example: "North 1 home", description: "The route's name" }),
  transportId: z.number().int().openapi({ example: 1 }),
  transport: VehicleSummary,
  direction: Direction,
  weekdays: z.array(Weekday).openapi({ example: [1, 2, 3, 4, 5] }),
  levels: z.array(z.enum(LEVELS)).openapi({ example: ["elementary"], description: "Empty: every level" }),
  stops: z.array(RouteStop).openapi({ description: "The route's stops, in order" }),
  studentCount: z.number().int().min(0).openapi({ description: "Students on the route (suspended ones too)" }),
});

export type RouteOut = z.infer<typeof RouteRecord>;
export type StopOut = z.infer<typeof RouteStop>;

/** The stops of the route, each as the record's object (ordered in `toRoute`). */
export const stopsOf = (routeId: SQL | typeof routes.id) =>
  sql<string>`(SELECT json_group_array(json_object('id', "s"."id", 'position', "s"."position", 'name', "s"."name", 'time', "s"."time", 'address', "s"."address", 'trustedAddressId', "s"."trusted_address_id")) FROM "route_stop" "s" WHERE "s"."route_id" = ${routeId})`;

export const fields = {
  id: routes.id,
  createdAt: routes.createdAt,
  updatedAt: routes.updatedAt,
  name: routes.name,
  transportId: routes.transportId,
  direction: routes.direction,
  weekdays: routes.weekdays,
  levels: routes.levels,
  vehicleName: transports.name,
  vehiclePlate: transports.plate,
  vehicleSeats: transports.seats,
  vehicleStatus: transports.status,
  driverName: transports.driverName,
  driverPhone: transports.driverPhone,
  stops: stopsOf(routes.id),
  studentCount: sql<number>`(SELECT count(*) FROM "route_student" "rs" WHERE "rs"."route_id" = ${routes.id})`,
};

/** A stops JSON array (from `stopsOf`) in route order. */
export function parseStops(json: string | null): StopOut[] {
  const stops = parseJson(z.array(RouteStop), json || "[]");
  return stops.sort((a, b) => a.position - b.position);
}

export function toRoute(row: RowOf<typeof fields>): RouteOut {
  return {
    ...timestamps(row),
    name: row.name,
    transportId: row.transportId,
    transport: {
      id: row.transportId,
      name: row.vehicleName,
      plate: row.vehiclePlate,
      seats: row.vehicleSeats,
      status: row.vehicleStatus,
      driverName: row.driverName,
      driverPhone: row.driverPhone,
    },
    direction: row.direction,
    weekdays: daysOf(row.weekdays),
    levels: LEVELS.filter((l) => row.levels.includes(l)),
    stops: parseStops(row.stops),
    studentCount: Number(row.studentCount),
  };
}

export const routeResource = defineResource({
  name: "route",
  plural: "routes",
  label: m`Route`,
  path: "/api/v1/route",
  tag: "Transport",
  scope: "school",
  module: "transport",
  data: Routes,
  record: RouteRecord,
  view: { fields, join: (q) => q.join(Transports, eq(transports.id, routes.transportId)) },
  toRecord: (_ctx, row) => toRoute(row),
  visibleTo: (ctx) => routeVisible(ctx, routes.transportId),
  conflictMessage: m`A route with this name already exists in this school (names that differ in case or accents are one)`,
});

export const listRoutes = routeResource.list({
  access: permissions.routeRead,
  filters: {
    transport: {
      schema: idFilter("The routes of this vehicle (transport id)"),
      where: (_ctx, v) => eq(routes.transportId, v),
      example: "1",
    } satisfies Filter<number>,
    direction: {
      schema: Direction.optional(),
      // Unary plus: read in the school's order (route_school_idx), not sorted after a filter.
      where: (_ctx, v) => sql`+${routes.direction} = ${v}`,
      example: "home",
    } satisfies Filter<(typeof ROUTE_DIRECTIONS)[number]>,
    weekday: {
      schema: z
        .enum(["1", "2", "3", "4", "5", "6", "7"])
        .transform(Number)
        .optional()
        .openapi({ description: "The routes that run on this ISO weekday (1 Monday .. 7 Sunday)" }),
      where: (_ctx, v) => sql`(${routes.weekdays} & ${1 << (v - 1)}) <> 0`,
      example: "1",
    } satisfies Filter<number>,
    level: {
      schema: z.enum(LEVELS).optional().openapi({ description: "The routes serving this level (or every level)" }),
      where: (_ctx, v: Level) =>
        // The column is a JSON array of known level names: the quoted name is in it or not.
        sql`(${routes.levels} = '[]' OR instr(${routes.levels}, ${JSON.stringify(v)}) > 0)`,
      example: "elementary",
    } satisfies Filter<Level>,
    name: {
      schema: searchTerm("Part of the name"),
      where: (_ctx, v) => contains(routes.nameSearch, v),
      example: "North",
    } satisfies Filter<string>,
  },
  sort: { createdAt: routes.createdAt },
  summary: "List the school's routes (paginated); a driver: the routes of the vehicles they drive",
});

export const getRoute = routeResource.get({
  access: permissions.routeRead,
  summary: "Get a route with its vehicle and stops (a driver: only a route of a vehicle they drive)",
});

/** The route's stops as a read (for checks before a write). */
export const stopRows = (ctx: Parameters<typeof RouteStops.select>[0], routeId: number) =>
  RouteStops.select(ctx, { id: routeStops.id, position: routeStops.position, name: routeStops.name }).where(
    eq(routeStops.routeId, routeId),
  );
