/**
 * The final list's versions. A route's day starts at version 1. A download (the PDF, or the JSON
 * with `print=true`) records `printed_version = version`; the first change after it starts version
 * n+1 (a conditional UPDATE in the change's own batch), and every change writes a
 * `route_list_change` row with the version it belongs to, so "what changed since version n" is
 * those rows with a greater version.
 */
import { Batch } from "../../db/batch";
import { query } from "../../db/query";
import {
  RouteAvailabilities,
  RouteListChanges,
  RouteStudents,
  routeAvailabilities,
  routeAvailabilityStudents,
  routeListChanges,
} from "../../db/schema/transport";
import { and, eq, type SQL, type SQLWrapper, sql } from "../../db/sql";
import { joinTable } from "../../db/table";
import { inList, type Statement } from "../../db/write";
import { now, type SchoolCtx } from "../../lib/context";
import { weekdayBit } from "./day";

/**
 * The id of the route's day row on `date`, made when missing (an upsert: two first changes of a
 * day at once make one row). The route was read in this school before.
 */
export async function dayRow(ctx: SchoolCtx, routeId: number, date: string): Promise<number> {
  const batch = new Batch(ctx);
  const upsert = batch.result(
    RouteAvailabilities.insertRow(ctx, { routeId, date })
      .onConflictDoUpdate({
        target: [routeAvailabilities.routeId, routeAvailabilities.date],
        // A no-op that lets RETURNING answer the existing row.
        set: { date: sql`excluded.date` },
        setWhere: RouteAvailabilities.where(ctx),
      })
      .returning({ id: routeAvailabilities.id }),
  );
  const [row] = (await batch.commit()).get(upsert);
  if (!row) throw new Error("the route's day row was not written");
  return row.id;
}

/** The day's version as a scalar subquery. */
const versionOf = (ctx: SchoolCtx, dayId: number | SQL<number>) =>
  sql<number>`(${RouteAvailabilities.select(ctx, { v: routeAvailabilities.version }).where(eq(routeAvailabilities.id, dayId))})`;

/** Starts version n+1 when version n was downloaded (nothing otherwise): the first statement of a change's batch. */
export function nextVersion(ctx: SchoolCtx, dayId: number | SQL<number>): Statement[] {
  return RouteAvailabilities.update(
    ctx,
    and(eq(routeAvailabilities.id, dayId), sql`${routeAvailabilities.printedVersion} = ${routeAvailabilities.version}`),
    { version: sql`${routeAvailabilities.version} + 1` },
    "new-version",
  );
}

/** Sets the version a change first appears in (derived, so not audited apart from the change). */
export function stampVersion(ctx: SchoolCtx, id: SQL<number>, dayId: number | SQL<number>): Statement {
  return ctx.deps.db
    .update(routeAvailabilityStudents)
    .set({ version: versionOf(ctx, dayId) })
    .where(and(eq(routeAvailabilityStudents.id, id), eq(routeAvailabilityStudents.routeAvailabilityId, dayId)));
}

export type ListChangeKind = "added" | "removed" | "stop" | "away" | "back" | "seats";

/** A `route_list_change` row at the day's current version. */
export function listChange(
  ctx: SchoolCtx,
  dayId: number | SQL<number>,
  studentId: number | null,
  change: ListChangeKind,
  detail: string | null,
): Statement {
  return RouteListChanges.insertRow(ctx, {
    routeAvailabilityId: dayId,
    version: versionOf(ctx, dayId),
    studentId,
    change,
    detail,
    at: now(ctx),
  });
}

/** The changes of a day after version `since` (route_list_change_idx), the day read in this school. */
export function changesSince(ctx: SchoolCtx, routeId: number, date: string, since: number) {
  const day = RouteAvailabilities.pick(
    ctx,
    routeAvailabilities.id,
    eq(routeAvailabilities.routeId, routeId),
    eq(routeAvailabilities.date, date),
  );
  return query(ctx, joinTable(routeListChanges), {
    version: routeListChanges.version,
    studentId: routeListChanges.studentId,
    change: routeListChanges.change,
    detail: routeListChanges.detail,
    at: routeListChanges.at,
  })
    .where(sql`${routeListChanges.routeAvailabilityId} IN ${day}`, sql`${routeListChanges.version} > ${since}`)
    .orderBy(sql`${routeListChanges.version}`, sql`${routeListChanges.id}`);
}

/**
 * A download of the lists of the routes `routeSet` (a subquery of route ids) on `date`: their day
 * rows (made when missing) record the version downloaded. A bookkeeping mark, not a change of the
 * list: no audit row.
 */
export function markPrinted(ctx: SchoolCtx, routeSet: SQLWrapper, date: string): Statement[] {
  const at = now(ctx);
  return [
    RouteAvailabilities.insertFrom(
      ctx,
      (row) =>
        sql`SELECT ${row({ routeId: sql`r.value`, date, taken: sql`0`, version: sql`1`, cancelled: sql`0` })} FROM ${routeSet} AS r WHERE true`,
      at,
    ).onConflictDoNothing(),
    ctx.deps.db
      .update(routeAvailabilities)
      .set({ printedVersion: sql`${routeAvailabilities.version}`, printedAt: at })
      .where(
        RouteAvailabilities.where(
          ctx,
          eq(routeAvailabilities.date, date),
          sql`${routeAvailabilities.routeId} IN ${routeSet}`,
        ),
      ),
  ];
}

/**
 * What a change of riders (`riders`: a subquery of route_student ids, read before the change)
 * does to the lists already made: every day of their routes from yesterday in UTC on (today in
 * every time zone, and later) on a weekday they ride, within `between` when given (a suspension),
 * starts version n+1 if version n was downloaded, and records the change. The lists themselves are
 * read from the riders as they are; this keeps "what changed since you printed" true. Place the
 * statements before the change when it removes riders, after it when it adds them.
 */
export function ridersChanged(
  ctx: SchoolCtx,
  riders: SQLWrapper,
  change: ListChangeKind,
  detail: string | null,
  scope: "rides" | "suspension" = "rides",
): Statement[] {
  const today = new Date(ctx.deps.clock.now().getTime() - 86_400_000).toISOString().slice(0, 10);
  const day = RouteAvailabilities.alias("changed_day");
  const rs = RouteStudents.alias("changed_rider");
  const d = day.table;
  const r = rs.table;
  const rides = sql`${r.routeId} = ${d.routeId} AND ${r.id} IN ${riders}
    AND (${r.weekdays} & ${weekdayBit(d.date)}) <> 0 AND ${d.date} >= ${today}
    ${scope === "suspension" ? sql`AND ${d.date} BETWEEN ${r.suspendedFrom} AND ${r.suspendedUntil}` : sql``}`;
  const days = RouteAvailabilities.pick(
    ctx,
    routeAvailabilities.id,
    sql`${routeAvailabilities.id} IN (SELECT ${d.id} FROM ${day.from} ${rs.joinOn(ctx, rides)} WHERE ${day.where(ctx)})`,
  );
  return [
    ...RouteAvailabilities.update(
      ctx,
      and(
        inList(routeAvailabilities.id, days),
        sql`${routeAvailabilities.printedVersion} = ${routeAvailabilities.version}`,
      ),
      { version: sql`${routeAvailabilities.version} + 1` },
      "new-version",
    ),
    ctx.deps.db.insert(routeListChanges).select(
      sql`SELECT NULL, ${day.schoolOf()}, ${d.id}, ${d.version}, ${r.studentId}, ${change}, ${detail}, ${now(ctx)}
          FROM ${day.from} ${rs.joinOn(ctx, rides)} WHERE ${day.where(ctx)}`,
    ),
  ];
}
