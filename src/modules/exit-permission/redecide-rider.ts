/**
 * Students' home routes changed (a ride home put on, its weekdays changed, or taken off): the day
 * changes of their confirmed permissions from today on are made again against the home routes as
 * the change leaves them. An absence or a pickup is `away` from whatever bus they ride that day
 * now; a route change keeps its bus and stop (a stop of their old own bus becomes a join on it, the
 * seat their leaving freed). Nothing is withdrawn: what the family asked still holds; only where
 * the bus lists show it moves. Only the permissions whose day changes differ are touched.
 */
import { Batch } from "../../db/batch";
import { ExitPermissions } from "../../db/schema/exit-permission";
import {
  RouteAvailabilities,
  RouteAvailabilityStudents,
  RouteStudents,
  Routes,
  routeAvailabilities,
  routeAvailabilityStudents,
  routeStudents,
  routes,
} from "../../db/schema/transport";
import { eq, sql } from "../../db/sql";
import { inList, jsonValues, type Statement } from "../../db/write";
import type { RideChange, RiderFacts } from "../../lib/facts";
import { m } from "../../lib/message";
import { addDays, dateIn } from "../../lib/zoned-time";
import { ridesOn } from "../transport/api";
import { confirmEffects, type Effect, withdrawEffects } from "./effects";
import { E, type Planner, schoolToday } from "./redecide-kit";

type Ride = RiderFacts & { studentId: number; routeId: number };

/** The rides after the changes: each changed one merged over what it was, or taken off. */
function ridesAfter(before: readonly Ride[], changes: readonly RideChange[]): Ride[] {
  let rides = [...before];
  for (const { studentId, routeId, rider } of changes) {
    const was = rides.find((r) => r.studentId === studentId && r.routeId === routeId);
    rides = rides.filter((r) => r !== was);
    if (rider === null) continue;
    const blank = { direction: "home" as const, weekdays: 0, suspendedFrom: null, suspendedUntil: null };
    rides.push({ ...blank, ...was, ...rider, studentId, routeId });
  }
  return rides;
}

/** A permission's day changes as a comparable key: `away:3,join:7`. */
const keyOf = (changes: readonly { kind: string; routeId: number }[]) =>
  changes
    .map((c) => `${c.kind}:${c.routeId}`)
    .sort()
    .join(",");

export const planRiders: Planner<"riders"> = async (ctx, { rides: changed }) => {
  const why = m`The school changed a student's bus`;
  const studentIds = [...new Set(changed.map((c) => c.studentId))];
  if (studentIds.length === 0) return { statements: [], withdrawn: [], why };
  const confirmed = sql`${inList(E.studentId, studentIds)} AND ${E.status} = 'confirmed'`;
  const batch = new Batch(ctx);
  const school = schoolToday(ctx, batch);
  const permissions = batch.read(
    ExitPermissions.select(ctx, {
      id: E.id,
      studentId: E.studentId,
      date: E.date,
      kind: E.kind,
      routeId: E.routeId,
      stopId: E.stopId,
      reason: E.reason,
    }).where(
      confirmed,
      sql`${E.kind} <> 'no_after_school'`,
      sql`${E.date} >= ${addDays(dateIn("UTC", ctx.deps.clock.now()), -1)}`,
    ),
  );
  const changes = batch.read(
    RouteAvailabilityStudents.select(ctx, {
      permissionId: routeAvailabilityStudents.exitPermissionId,
      kind: routeAvailabilityStudents.kind,
      routeId: sql<number>`(${RouteAvailabilities.pick(ctx, routeAvailabilities.routeId, eq(routeAvailabilities.id, routeAvailabilityStudents.routeAvailabilityId))})`,
    }).where(inList(routeAvailabilityStudents.exitPermissionId, ExitPermissions.pick(ctx, E.id, confirmed))),
  );
  const rides = batch.read(
    RouteStudents.select(ctx, {
      studentId: routeStudents.studentId,
      routeId: routeStudents.routeId,
      direction: routeStudents.direction,
      weekdays: routeStudents.weekdays,
      suspendedFrom: routeStudents.suspendedFrom,
      suspendedUntil: routeStudents.suspendedUntil,
    }).where(inList(routeStudents.studentId, studentIds)),
  );
  const vehicles = batch.read(
    Routes.select(ctx, { id: routes.id, transportId: routes.transportId }).where(
      inList(routes.id, ExitPermissions.pick(ctx, E.routeId, confirmed)),
    ),
  );
  const read = await batch.commit();
  const today = dateIn(read.get(school)[0]?.timeZone ?? "UTC", ctx.deps.clock.now());
  const after = ridesAfter(read.get(rides), changed);
  const vehicleOf = new Map(read.get(vehicles).map((r) => [r.id, r.transportId]));
  const stale: number[] = [];
  const remade: Statement[] = [];
  for (const p of read.get(permissions)) {
    if (p.date < today) continue;
    const homeRoutes = after
      .filter((r) => r.studentId === p.studentId && r.direction === "home" && ridesOn(r, p.date))
      .map((r) => r.routeId);
    const transportId = p.routeId === null ? undefined : vehicleOf.get(p.routeId);
    const target =
      p.kind === "route_change" && p.routeId !== null && transportId !== undefined
        ? { routeId: p.routeId, stopId: p.stopId, transportId, rides: homeRoutes.includes(p.routeId) }
        : null;
    // What confirming it now would make (`confirmEffects`): nothing for a stop of their own bus.
    const wanted =
      p.kind === "route_change" && target?.rides
        ? []
        : [
            ...homeRoutes.filter((r) => r !== target?.routeId).map((r) => ({ kind: "away", routeId: r })),
            ...(target ? [{ kind: "join", routeId: target.routeId }] : []),
          ];
    const has = read.get(changes).filter((c) => c.permissionId === p.id);
    if (keyOf(has) === keyOf(wanted)) continue;
    const effect: Effect = { studentId: p.studentId, date: p.date, kind: p.kind, reason: p.reason, target, homeRoutes };
    stale.push(p.id);
    remade.push(...confirmEffects(ctx, sql<number>`${p.id}`, effect));
  }
  const statements = stale.length ? [...withdrawEffects(ctx, jsonValues(stale)), ...remade] : [];
  return { statements, withdrawn: [], why };
};
