/**
 * What a bus run tells the riders' guardians, through the notification module (their preferences
 * and quiet hours apply; category `transport`): "boarded / dropped at" when
 * the driver records it (once: the event is recorded once), and "five minutes away" when the
 * estimated time at the child's stop is five minutes off or less (once per child and run: a notice
 * row, unique, is written in the same batch as the notification).
 */

import { Batch } from "../../db/batch";
import {
  RouteRunEvents,
  RouteRunNotices,
  RouteRuns,
  routeRunEvents,
  routeRunNotices,
  routeRuns,
} from "../../db/schema/route-run";
import { eq, type SQL, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { errorFields, log } from "../../lib/log";
import { zonedInstant } from "../../lib/zoned-time";
import { localizedSql, notify } from "../notification/api";
import { readFinalLists } from "../route-availability/api";
import { schoolZone } from "../school/api";
import type { StopOut } from "../transport/api";
import { eta, progress } from "./run-state";

/** How long before the estimated time at the child's stop the guardians are told. */
export const APPROACHING_MINUTES = 5;

/**
 * The guardians of a rider hear that they boarded or were dropped, and where: statements for the
 * event's own batch, and the dispatch for after it committed. The rider's name and the stop's are
 * SQL this batch reads (the boarding decides and writes in one round trip).
 */
export function boardingNotice(
  ctx: SchoolCtx,
  about: {
    routeId: number;
    studentId: number;
    firstName: SQL<string>;
    event: "boarded" | "dropped";
    stopName: SQL<string>;
  },
) {
  const name = about.firstName;
  const at = about.stopName;
  return notify(ctx, {
    category: "transport",
    title:
      about.event === "boarded"
        ? localizedSql(sql`${name} || ' is on the bus'`, sql`${name} || ' subió al autobús'`)
        : localizedSql(sql`${name} || ' got off the bus'`, sql`${name} || ' bajó del autobús'`),
    body:
      about.event === "boarded"
        ? localizedSql(sql`'Boarded at ' || ${at} || '.'`, sql`'Subió en ' || ${at} || '.'`)
        : localizedSql(sql`'Dropped at ' || ${at} || '.'`, sql`'Bajó en ' || ${at} || '.'`),
    about: { entity: "route", id: about.routeId },
    audience: { guardiansOf: [about.studentId] },
  });
}

/**
 * Tells the guardians of each rider whose stop the bus has not reached yet, and whose estimated time
 * there is at most APPROACHING_MINUTES away, once per run. Marks the run checked now.
 */
export async function checkApproaching(
  ctx: SchoolCtx,
  run: { runId: number; routeId: number; date: string; stops: readonly StopOut[] },
) {
  try {
    const now = ctx.deps.clock.now();
    const zone = await schoolZone(ctx);
    const batch = new Batch(ctx);
    batch.add(
      ctx.deps.db
        .update(routeRuns)
        .set({ approachCheckedAt: now.toISOString() })
        .where(RouteRuns.where(ctx, eq(routeRuns.id, run.runId))),
    );
    const events = batch.read(
      RouteRunEvents.select(ctx, {
        studentId: routeRunEvents.studentId,
        event: routeRunEvents.event,
        stopId: routeRunEvents.stopId,
        at: routeRunEvents.at,
      }).where(eq(routeRunEvents.runId, run.runId)),
    );
    const told = batch.read(
      RouteRunNotices.select(ctx, { studentId: routeRunNotices.studentId }).where(
        eq(routeRunNotices.runId, run.runId),
        eq(routeRunNotices.kind, "approaching"),
      ),
    );
    const results = await batch.commit();
    const recorded = results.get(events);
    const { stopsReached, delayMinutes } = progress(run.stops, recorded, zone);
    const reached = new Set(stopsReached);
    const done = new Set([...results.get(told).map((t) => t.studentId), ...recorded.map((e) => e.studentId)]);
    const { lists } = await readFinalLists(ctx, { routeId: run.routeId }, run.date);
    const due = (lists[0]?.students ?? []).filter((s) => {
      if (s.status === "away" || s.stopId === null || reached.has(s.stopId) || done.has(s.studentId)) return false;
      const stop = run.stops.find((x) => x.id === s.stopId);
      if (!stop) return false;
      const expected = zonedInstant(run.date, eta(stop, delayMinutes), zone).getTime();
      return expected - now.getTime() <= APPROACHING_MINUTES * 60_000;
    });
    for (const s of due) {
      const stop = run.stops.find((x) => x.id === s.stopId);
      const time = stop ? eta(stop, delayMinutes) : "";
      const sending = notify(ctx, {
        category: "transport",
        title: { en: `The bus is five minutes away`, es: `El autobús está a cinco minutos` },
        body: {
          en: `${s.firstName}'s bus should reach ${s.stopName ?? ""} at about ${time}.`,
          es: `El autobús de ${s.firstName} debería llegar a ${s.stopName ?? ""} hacia las ${time}.`,
        },
        about: { entity: "route", id: run.routeId },
        audience: { guardiansOf: [s.studentId] },
      });
      const write = new Batch(ctx).add(
        ...RouteRunNotices.insert(ctx, { runId: run.runId, studentId: s.studentId, kind: "approaching" }),
        ...sending.statements,
      );
      try {
        await write.commit();
        await sending.dispatch();
      } catch (err) {
        // Told by a check at the same moment: the unique notice refused this one (and its notification).
        log.info("approaching notice not written", { studentId: s.studentId, ...errorFields(err) });
      }
    }
  } catch (err) {
    log.error("approaching check failed", { runId: run.runId, ...errorFields(err) });
  }
}
