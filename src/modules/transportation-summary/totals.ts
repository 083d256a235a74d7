/**
 * The day's totals per way, set by set rather than student by student (the summary's costliest
 * read: a school of 3,000 students): the students the filters keep; the confirmed permissions of
 * the date by kind, with how many of those students ride their route that day; and the riders of
 * the day (home routes running that weekday, not suspended). `route` is the riders without a
 * permission and `family` the rest. Each read walks an index of its own set (students, the date's
 * permissions, the riders), so no student is probed for a route and a permission it does not have.
 * A `routeId` filter (riders of a route, and route changes onto it) reads the totals student by
 * student instead (`countFields`).
 */
import type { Batch } from "../../db/batch";
import { ExitPermissions, exitPermissions } from "../../db/schema/exit-permission";
import { Students, students } from "../../db/schema/student";
import { RouteStudents, Routes, routeStudents, routes } from "../../db/schema/transport";
import { eq, type SQL, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { isoWeekday } from "../../lib/zoned-time";
import type { Way } from "./ways";

/** Active (not deleted) students of the school. */
export const activeStudent = (): SQL => sql`${students.status} = 'active' AND ${students.deletedAt} IS NULL`;

/** The riders of `date`: on a home route running that weekday, riding that weekday, not suspended. */
function ridersOn(date: string): SQL {
  const bit = 1 << (isoWeekday(date) - 1);
  return sql`${routeStudents.direction} = 'home' AND (${routeStudents.weekdays} & ${bit}) <> 0 AND NOT (${routeStudents.suspendedFrom} IS NOT NULL AND ${routeStudents.suspendedFrom} <= ${date} AND (${routeStudents.suspendedUntil} IS NULL OR ${routeStudents.suspendedUntil} >= ${date}))`;
}

/** The three reads of the totals, in the caller's batch; `filters` are conditions on `student`. */
export function readTotals(ctx: SchoolCtx, batch: Batch, date: string, filters: readonly (SQL | undefined)[]) {
  const bit = 1 << (isoWeekday(date) - 1);
  const students_ = batch.read(Students.select(ctx, { n: sql<number>`count(*)` }).where(activeStudent(), ...filters));
  const riding = RouteStudents.select(ctx, { one: sql`1` })
    .join(Routes, sql`${routes.id} = ${routeStudents.routeId} AND (${routes.weekdays} & ${bit}) <> 0`)
    .where(eq(routeStudents.studentId, exitPermissions.studentId), ridersOn(date));
  const kind = (k: string) => sql<number>`coalesce(sum(${exitPermissions.kind} = ${k}), 0)`;
  const permitted = batch.read(
    ExitPermissions.select(ctx, {
      route_change: kind("route_change"),
      auto_pickup: kind("auto_pickup"),
      no_after_school: kind("no_after_school"),
      absence: kind("absence"),
      riders: sql<number>`coalesce(sum(EXISTS ${riding}), 0)`,
    })
      .join(Students, eq(students.id, exitPermissions.studentId))
      // The literal state: the index (school, date, status) serves it.
      .where(eq(exitPermissions.date, date), sql`${exitPermissions.status} = 'confirmed'`, activeStudent(), ...filters),
  );
  const riders = batch.read(
    RouteStudents.select(ctx, { n: sql<number>`count(*)` })
      .join(Routes, sql`${routes.id} = ${routeStudents.routeId} AND (${routes.weekdays} & ${bit}) <> 0`)
      .join(Students, eq(students.id, routeStudents.studentId))
      .where(ridersOn(date), activeStudent(), ...filters),
  );
  return { students: students_, permitted, riders };
}

type Reads = ReturnType<typeof readTotals>;
type Results = Awaited<ReturnType<Batch["commit"]>>;

/** The totals per way from the three reads' rows. */
export function totalsOf(results: Results, reads: Reads): Record<Way, number> {
  const all = results.get(reads.students)[0]?.n ?? 0;
  const p = results.get(reads.permitted)[0];
  const riders = results.get(reads.riders)[0]?.n ?? 0;
  const kinds = {
    route_change: p?.route_change ?? 0,
    auto_pickup: p?.auto_pickup ?? 0,
    no_after_school: p?.no_after_school ?? 0,
    absence: p?.absence ?? 0,
  };
  const route = riders - (p?.riders ?? 0);
  const family = all - route - kinds.route_change - kinds.auto_pickup - kinds.no_after_school - kinds.absence;
  return { route, family, ...kinds };
}
