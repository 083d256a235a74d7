/**
 * What a confirmed permission does to the route days, as statements for the batch that confirms it:
 *
 * - a route change to another route: `away` from the student's home route that day (when they ride
 *   one) and a `join` on the target route at the stop, taking a seat with ONE guarded UPDATE
 *   (`taken = taken + 1 WHERE seats - riders - taken > 0`, then a guard that aborts the batch);
 * - a route change to another stop of their own route: no seat moves (the permission says where);
 * - a route change to a trusted address no stop serves, an absence, an auto pickup: `away` from the
 *   home route;
 * - no after-school: nothing.
 *
 * Each change is linked to the permission (`exit_permission_id`), so withdrawing the permission
 * (superseded by a later one, or withdrawn by staff) deletes its changes and gives the seat back in
 * the same batch. A day row is made when missing (bookkeeping, as a download makes one). Every
 * change starts the list's next version when the list was downloaded, and records what changed.
 */
import { ExitPermissions, exitPermissions } from "../../db/schema/exit-permission";
import {
  RouteAvailabilities,
  RouteAvailabilityStudents,
  routeAvailabilities,
  routeAvailabilityStudents,
  routeListChanges,
  Transports,
  transports,
} from "../../db/schema/transport";
import { and, eq, gt, ne, type SQL, sql } from "../../db/sql";
import { guard, inList, type Statement } from "../../db/write";
import { now, type SchoolCtx } from "../../lib/context";
import { baseRiders, listChange, nextVersion, stampVersion } from "../route-availability/api";

/** The id of a route's day row as a scalar subquery (made earlier in the batch by `ensureDay`). */
export const dayOf = (ctx: SchoolCtx, routeId: number, date: string): SQL<number> =>
  sql<number>`(${RouteAvailabilities.pick(ctx, routeAvailabilities.id, eq(routeAvailabilities.routeId, routeId), eq(routeAvailabilities.date, date))})`;

/** The day row of a route on a date, made when missing (two at once make one: the unique index). */
const ensureDay = (ctx: SchoolCtx, routeId: number, date: string): Statement =>
  RouteAvailabilities.insertRow(ctx, { routeId, date }).onConflictDoNothing();

/** Takes a seat on the day: one conditional UPDATE and the guard that aborts the batch without one. */
function takeSeat(ctx: SchoolCtx, routeId: number, transportId: number, date: string): Statement[] {
  const day = dayOf(ctx, routeId, date);
  const vehicleSeats = sql`(${Transports.pick(ctx, transports.seats, eq(transports.id, transportId))})`;
  const left = sql`coalesce(${routeAvailabilities.seats}, ${vehicleSeats}) - ${baseRiders(ctx, routeAvailabilities.routeId, date)} - ${routeAvailabilities.taken} > 0`;
  return [
    ...RouteAvailabilities.update(
      ctx,
      and(eq(routeAvailabilities.id, day), left),
      { taken: sql`${routeAvailabilities.taken} + 1` },
      "take-seat",
    ),
    guard(ctx.deps.db),
  ];
}

/** One day's change linked to the permission, with its audit row, version and list record. */
function addChange(
  ctx: SchoolCtx,
  c: {
    permission: SQL<number>;
    routeId: number;
    date: string;
    studentId: number;
    kind: "join" | "away";
    stopId: number | null;
    reason: string | null;
  },
): Statement[] {
  const day = dayOf(ctx, c.routeId, c.date);
  const values = {
    routeAvailabilityId: day,
    studentId: c.studentId,
    kind: c.kind,
    stopId: c.stopId,
    reason: c.reason,
    confirmed: true,
    exitPermissionId: c.permission,
  };
  return [
    ...nextVersion(ctx, day),
    ...RouteAvailabilityStudents.insert(ctx, values),
    stampVersion(ctx, RouteAvailabilityStudents.insertedId(), day),
    listChange(ctx, day, c.studentId, c.kind === "join" ? "added" : "away", c.reason),
  ];
}

/** What a confirmed permission needs to know to change the route days. */
export interface Effect {
  studentId: number;
  date: string;
  kind: string;
  reason: string | null;
  /** A route change's target; `rides`: the student's own route (a stop change). */
  target: { routeId: number; stopId: number | null; transportId: number; rides: boolean } | null;
  /** The student's home routes that day. */
  homeRoutes: readonly number[];
}

/**
 * The day changes of a permission becoming confirmed (`permission`: its id, or the id inserted
 * earlier in the batch). The seat, when one is taken, is guarded: no seat aborts the batch.
 */
export function confirmEffects(ctx: SchoolCtx, permission: SQL<number>, e: Effect): Statement[] {
  if (e.kind === "no_after_school") return [];
  if (e.kind === "route_change" && e.target?.rides) return [];
  const out: Statement[] = [];
  const joins = e.kind === "route_change" && e.target ? e.target : null;
  const aways = e.homeRoutes.filter((r) => r !== joins?.routeId);
  for (const routeId of aways) {
    out.push(
      ensureDay(ctx, routeId, e.date),
      ...addChange(ctx, {
        permission,
        routeId,
        date: e.date,
        studentId: e.studentId,
        kind: "away",
        stopId: null,
        reason: e.reason,
      }),
    );
  }
  if (joins) {
    out.push(
      ensureDay(ctx, joins.routeId, e.date),
      ...takeSeat(ctx, joins.routeId, joins.transportId, e.date),
      ...addChange(ctx, {
        permission,
        routeId: joins.routeId,
        date: e.date,
        studentId: e.studentId,
        kind: "join",
        stopId: joins.stopId,
        reason: e.reason,
      }),
    );
  }
  return out;
}

/**
 * Withdraws the day changes of the permissions `ids` (a subquery of ids): the list's next version
 * where it was downloaded, a list record per change (`removed` for a join, `back` for an away), the
 * seats joins took given back, the changes deleted (audited).
 */
export function withdrawEffects(ctx: SchoolCtx, ids: SQL): Statement[] {
  const linked = inList(routeAvailabilityStudents.exitPermissionId, ids);
  const days = RouteAvailabilityStudents.pick(ctx, routeAvailabilityStudents.routeAvailabilityId, linked);
  const joinDays = RouteAvailabilityStudents.pick(
    ctx,
    routeAvailabilityStudents.routeAvailabilityId,
    linked,
    eq(routeAvailabilityStudents.kind, "join"),
    eq(routeAvailabilityStudents.confirmed, true),
  );
  const change = RouteAvailabilityStudents.alias("withdrawn");
  const day = RouteAvailabilities.alias("withdrawn_day");
  const c = change.table;
  const d = day.table;
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
      sql`SELECT NULL, ${day.schoolOf()}, ${d.id}, ${d.version}, ${c.studentId}, CASE ${c.kind} WHEN 'join' THEN 'removed' ELSE 'back' END, ${c.reason}, ${now(ctx)}
          FROM ${change.from} ${day.joinOn(ctx, sql`${d.id} = ${c.routeAvailabilityId}`)}
          WHERE ${change.where(ctx, sql`${c.confirmed} = 1 AND ${inList(c.exitPermissionId, ids)}`)}`,
    ),
    // One seat back per join withdrawn on the day (several permissions may be withdrawn at once).
    ...RouteAvailabilities.update(
      ctx,
      and(inList(routeAvailabilities.id, joinDays), gt(routeAvailabilities.taken, 0)),
      {
        taken: sql`max(0, ${routeAvailabilities.taken} - (SELECT count(*) FROM ${change.from} WHERE ${change.where(ctx, sql`${c.routeAvailabilityId} = ${routeAvailabilities.id} AND ${c.kind} = 'join' AND ${c.confirmed} = 1 AND ${inList(c.exitPermissionId, ids)}`)}))`,
      },
      "free-seat",
    ),
    ...RouteAvailabilityStudents.delete(ctx, linked),
  ];
}

/** The student's confirmed permission of the day other than `except`, as a subquery of ids. */
const confirmedOf = (ctx: SchoolCtx, studentId: number, date: string, except?: SQL<number> | number) =>
  ExitPermissions.pick(
    ctx,
    exitPermissions.id,
    eq(exitPermissions.studentId, studentId),
    eq(exitPermissions.date, date),
    eq(exitPermissions.status, "confirmed"),
    except === undefined ? undefined : ne(exitPermissions.id, except),
  );

/**
 * Supersedes the student's confirmed permission of the day (other than `by`): its changes are
 * withdrawn, it becomes `superseded` by `by` (null: the id is set by `linkSuperseded` once the new
 * one is inserted). Placed before the new one becomes confirmed (the partial unique index allows
 * one confirmed per student and day).
 */
export function supersede(ctx: SchoolCtx, studentId: number, date: string, by: number | null): Statement[] {
  const earlier = confirmedOf(ctx, studentId, date, by ?? undefined);
  return [
    ...withdrawEffects(ctx, sql`${earlier}`),
    ...ExitPermissions.update(
      ctx,
      and(
        eq(exitPermissions.studentId, studentId),
        eq(exitPermissions.date, date),
        eq(exitPermissions.status, "confirmed"),
        by === null ? undefined : ne(exitPermissions.id, by),
      ),
      { status: "superseded", supersededBy: by },
      "supersede",
    ),
  ];
}

/** Names the permission inserted earlier in the batch on those it superseded in the same batch. */
export function linkSuperseded(ctx: SchoolCtx, studentId: number, date: string, by: SQL<number>): Statement {
  return ctx.deps.db
    .update(exitPermissions)
    .set({ supersededBy: by })
    .where(
      ExitPermissions.where(
        ctx,
        eq(exitPermissions.studentId, studentId),
        eq(exitPermissions.date, date),
        eq(exitPermissions.status, "superseded"),
        sql`${exitPermissions.supersededBy} IS NULL`,
      ),
    );
}
