import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Batch } from "../../db/batch";
import {
  RouteAvailabilities,
  RouteAvailabilityStudents,
  RouteStudents,
  Routes,
  routeAvailabilities,
  routeStudents,
  routes,
  Transports,
  transports,
} from "../../db/schema/transport";
import { eq, type SQL, type SQLWrapper, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { notFound, unprocessable } from "../../lib/errors";
import { m } from "../../lib/message";
import { isoWeekday } from "../../lib/zoned-time";
import { type Calendar, calendarOf, calendarReads, dayOff, routeOff, routeOffMessage } from "../school-schedule/api";
import { routeVisible, schoolToday } from "../transport/api";

export { schoolToday };

/** A date: a value, or a column of the row (a list of days). */
export type DateRef = string | SQLWrapper;

/** The bit of a date's ISO weekday in a weekday mask (SQLite's %w is 0 for Sunday). */
export const weekdayBit = (date: DateRef): number | SQL =>
  typeof date === "string"
    ? 1 << (isoWeekday(date) - 1)
    : sql`(1 << ((CAST(strftime('%w', ${date}) AS INTEGER) + 6) % 7))`;

/** The route's weekday mask has D's bit. */
export const runsOnWeekday = (weekdays: SQLWrapper, date: DateRef) => sql`(${weekdays} & ${weekdayBit(date)}) <> 0`;

/**
 * The routes a caller reads, by the transport module's one rule (`routeVisible`): every route of
 * the school, but for a driver only the routes of the vehicles they drive.
 */
export function drivenBy(ctx: SchoolCtx, route: SQLWrapper): SQL | undefined {
  const visible = routeVisible(ctx, routes.transportId);
  return visible ? sql`${route} IN ${Routes.pick(ctx, routes.id, visible)}` : undefined;
}

/**
 * The number of route students of `route` riding on `date` before the day's joins: weekday bit
 * set, not suspended, no confirmed `away` change. A correlated count (route_student_route_idx).
 */
export function baseRiders(ctx: SchoolCtx, route: SQLiteColumn | number, date: DateRef): SQL<number> {
  const day = RouteAvailabilities.alias("away_day");
  const change = RouteAvailabilityStudents.alias("away_change");
  const away = sql`EXISTS (SELECT 1 FROM ${change.from} ${day.joinOn(ctx, sql`${day.table.id} = ${change.table.routeAvailabilityId}`)}
    WHERE ${change.where(
      ctx,
      sql`${change.table.studentId} = ${routeStudents.studentId} AND ${day.table.routeId} = ${routeStudents.routeId}
    AND ${day.table.date} = ${date} AND ${change.table.kind} = 'away' AND ${change.table.confirmed} = 1`,
    )})`;
  return sql<number>`(${RouteStudents.select(ctx, { n: sql`count(*)` }).where(
    eq(routeStudents.routeId, route),
    riding(routeStudents, date),
    sql`NOT ${away}`,
  )})`;
}

/** A route student row rides on `date` by its own days (weekday bit, not suspended). */
export function riding(rs: typeof routeStudents, date: DateRef): SQL {
  return sql`${runsOnWeekday(rs.weekdays, date)} AND NOT (${rs.suspendedFrom} IS NOT NULL AND ${rs.suspendedFrom} <= ${date} AND (${rs.suspendedUntil} IS NULL OR ${rs.suspendedUntil} >= ${date}))`;
}

/** Riders of `route` on `date` given the day's row (left-joined): base riders plus confirmed joins. */
export const riders = (ctx: SchoolCtx, route: SQLiteColumn | number, date: DateRef): SQL<number> =>
  sql<number>`(${baseRiders(ctx, route, date)} + coalesce(${routeAvailabilities.taken}, 0))`;

/** The fields of a route's day, over routes joined to their vehicle and (left) the day's row. */
export function dayFields(ctx: SchoolCtx, date: string) {
  return {
    routeId: routes.id,
    routeName: routes.name,
    direction: routes.direction,
    weekdays: routes.weekdays,
    levels: routes.levels,
    transportId: transports.id,
    vehicle: transports.name,
    vehicleSeats: transports.seats,
    driverName: transports.driverName,
    availabilityId: routeAvailabilities.id,
    override: routeAvailabilities.seats,
    /** The school cancelled the route that day. */
    cancelled: sql<number>`coalesce(${routeAvailabilities.cancelled}, 0)`,
    taken: sql<number>`coalesce(${routeAvailabilities.taken}, 0)`,
    version: sql<number>`coalesce(${routeAvailabilities.version}, 1)`,
    printedVersion: routeAvailabilities.printedVersion,
    riders: riders(ctx, routes.id, date),
  };
}

/** Routes with their vehicle and the day's row on `date` (left), as the caller may read them. */
export function routeDays(ctx: SchoolCtx, date: string, ...where: (SQL | undefined)[]) {
  return Routes.select(ctx, dayFields(ctx, date))
    .join(Transports, eq(transports.id, routes.transportId))
    .join(
      RouteAvailabilities,
      sql`${routeAvailabilities.routeId} = ${routes.id} AND ${routeAvailabilities.date} = ${date}`,
      "left",
    )
    .where(drivenBy(ctx, routes.id), ...where);
}

export type RouteDay = Awaited<ReturnType<ReturnType<typeof routeDays>["all"]>>[number];

/** The seats a route day offers and what is left. */
export function seatsOf(day: Pick<RouteDay, "vehicleSeats" | "override" | "riders">) {
  const seats = day.override ?? day.vehicleSeats;
  return { seats, available: Math.max(0, seats - day.riders) };
}

/**
 * Reads the school's calendar for `first`..`last` with the caller's reads, in one batch; answers
 * the school, its calendar and the results.
 */
export async function withSchoolDays<T>(ctx: SchoolCtx, first: string, last: string, reads: (batch: Batch) => T) {
  const batch = new Batch(ctx);
  const day = calendarReads(ctx, batch, first, last);
  const slots = reads(batch);
  const results = await batch.commit();
  const { school, calendar } = calendarOf(results, day);
  if (!school) throw notFound(m`School ${ctx.schoolId} not found`);
  return { school, calendar, results, slots };
}

/** `withSchoolDays` for one date, with the school's day off that date (any level), if any. */
export async function withSchoolDay<T>(ctx: SchoolCtx, date: string, reads: (batch: Batch) => T) {
  const read = await withSchoolDays(ctx, date, date, reads);
  return { ...read, off: dayOff(date, read.calendar) };
}

/** The route runs on `date` (a school day of its levels, one of its weekdays), or a 422 saying why not. */
export function assertRuns(calendar: Calendar, day: Pick<RouteDay, "routeName" | "weekdays" | "levels">, date: string) {
  const why = routeOff(date, calendar, day);
  if (why) throw unprocessable(routeOffMessage(why, day.routeName, date));
}
