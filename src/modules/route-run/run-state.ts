/**
 * A bus run's state (docs/domain.md, "Bus runs"): what the driver recorded, read in one batch, and
 * what follows from it: the stops reached, the delay against the stops' times, and the estimated
 * time at a stop not yet reached (its time plus the current delay).
 */

import { z } from "@hono/zod-openapi";
import type { Batch, Results } from "../../db/batch";
import {
  RouteRunEvents,
  RouteRunPositions,
  RouteRuns,
  routeRunEvents,
  routeRunPositions,
  routeRuns,
} from "../../db/schema/route-run";
import { Students, students } from "../../db/schema/student";
import { desc, eq, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { timeIn } from "../../lib/zoned-time";
import type { RouteStop } from "../transport/api";

/** Positions a run's state shows (the latest first). */
export const POSITIONS_SHOWN = 20;

type Stop = z.output<typeof RouteStop>;

export const Position = z
  .object({
    lat: z.number().openapi({ example: 19.4326, description: "Latitude, degrees" }),
    lon: z.number().openapi({ example: -99.1332, description: "Longitude, degrees" }),
    speed: z.number().nullable().openapi({ example: 8.5, description: "Speed in m/s, when the phone gave one" }),
    at: z.iso.datetime().openapi({ example: "2026-11-23T21:05:00.000Z", description: "When the phone took it" }),
  })
  .openapi("RunPosition");

export const RunEventRecord = z
  .object({
    id: z.number().int().openapi({ example: 1, description: "The event's id" }),
    studentId: z.number().int().openapi({ example: 7, description: "The rider" }),
    firstName: z.string().openapi({ example: "Pablo", description: "The rider's first name" }),
    lastName: z.string().openapi({ example: "Ruiz", description: "The rider's last name" }),
    event: z.enum(["boarded", "dropped", "no-show"]).openapi({ description: "boarded, dropped or no-show" }),
    stopId: z.number().int().nullable().openapi({ example: 2, description: "Where (a stop of the route)" }),
    at: z.iso.datetime().openapi({ example: "2026-11-23T21:04:00.000Z", description: "When, by the driver's phone" }),
    insistReason: z.string().nullable().openapi({
      example: "Her mother asked at the door",
      description: "Why a rider not on the day's final list was recorded; null for one on it",
    }),
  })
  .openapi("RunEvent");

export const RunState = z
  .object({
    routeId: z.number().int().openapi({ example: 1, description: "The route" }),
    date: z.iso.date().openapi({ example: "2026-11-23", description: "The school-local day" }),
    id: z.number().int().nullable().openapi({ example: 1, description: "The run's id; null when not started" }),
    status: z
      .enum(["not-started", "running", "finished"])
      .openapi({ description: "not-started, running (started by the driver), finished" }),
    startedAt: z.iso.datetime().nullable().openapi({ description: "When the driver started it" }),
    finishedAt: z.iso.datetime().nullable().openapi({ description: "When the driver finished it" }),
    positions: z.array(Position).openapi({
      description: `The latest positions, newest first (at most ${POSITIONS_SHOWN}); the run's last one alone when the school year keeps none`,
    }),
    stopsReached: z
      .array(z.number().int())
      .openapi({ example: [1, 2], description: "The stops where a rider boarded or was dropped, in route order" }),
    delayMinutes: z.number().int().nullable().openapi({
      example: 4,
      description: "Minutes behind the stops' times (negative: ahead) at the last stop reached; null before the first",
    }),
    events: z.array(RunEventRecord).openapi({ description: "Every boarding, drop and no-show, in order" }),
  })
  .openapi("RouteRunState");
export type RunState = z.output<typeof RunState>;

export type RunRow = typeof routeRuns.$inferSelect;
export type EventRow = z.output<typeof RunEventRecord>;

/** Runs' events with the rider's name, as the API answers them (add the conditions). */
export const eventsQuery = (ctx: SchoolCtx) =>
  RouteRunEvents.select(ctx, {
    id: routeRunEvents.id,
    studentId: routeRunEvents.studentId,
    firstName: students.firstName,
    lastName: students.lastName,
    event: routeRunEvents.event,
    stopId: routeRunEvents.stopId,
    at: routeRunEvents.at,
    insistReason: routeRunEvents.insistReason,
  }).join(Students, eq(students.id, routeRunEvents.studentId));

/** The reads of a route's run on a date, added to `batch`. */
export function runReads(ctx: SchoolCtx, batch: Batch, routeId: number, date: string) {
  const run = batch.read(RouteRuns.select(ctx).where(eq(routeRuns.routeId, routeId), eq(routeRuns.date, date)));
  const ofRun = RouteRuns.pick(ctx, routeRuns.id, eq(routeRuns.routeId, routeId), eq(routeRuns.date, date));
  const events = batch.read(
    eventsQuery(ctx)
      .where(inList(routeRunEvents.runId, ofRun))
      .orderBy(sql`${routeRunEvents.at}`, sql`${routeRunEvents.id}`),
  );
  const positions = batch.read(
    RouteRunPositions.select(ctx, {
      lat: routeRunPositions.lat,
      lon: routeRunPositions.lon,
      speed: routeRunPositions.speed,
      at: routeRunPositions.at,
    })
      .where(inList(routeRunPositions.runId, ofRun))
      .orderBy(desc(routeRunPositions.at), desc(routeRunPositions.id))
      .limit(POSITIONS_SHOWN),
  );
  return { run, events, positions };
}

export function runOf(results: Results, reads: ReturnType<typeof runReads>) {
  return {
    run: results.get(reads.run)[0],
    events: results.get(reads.events),
    positions: results.get(reads.positions),
  };
}

const minutes = (hhmm: string) => {
  const [h = 0, m = 0] = hhmm.split(":").map(Number);
  return h * 60 + m;
};

/** Stops reached (in route order) and the delay at the last one reached, from the events. */
export function progress(
  stops: readonly Stop[],
  events: readonly Pick<EventRow, "stopId" | "event" | "at">[],
  timeZone: string,
) {
  const byId = new Map(stops.map((s) => [s.id, s]));
  const reached = new Set<number>();
  let last: { stop: Stop; at: string } | undefined;
  for (const e of events) {
    if (e.stopId === null || e.event === "no-show") continue;
    const stop = byId.get(e.stopId);
    if (!stop) continue;
    reached.add(stop.id);
    if (!last || e.at >= last.at) last = { stop, at: e.at };
  }
  const delayMinutes = last ? minutes(timeIn(timeZone, new Date(last.at))) - minutes(last.stop.time) : null;
  const stopsReached = stops.filter((s) => reached.has(s.id)).map((s) => s.id);
  return { stopsReached, delayMinutes };
}

/** The estimated school-local time at `stop`: its time plus the current delay (HH:mm). */
export function eta(stop: Stop, delayMinutes: number | null): string {
  const total = (((minutes(stop.time) + (delayMinutes ?? 0)) % 1440) + 1440) % 1440;
  return `${String(Math.floor(total / 60)).padStart(2, "0")}:${String(total % 60).padStart(2, "0")}`;
}

export function stateOf(
  routeId: number,
  date: string,
  stops: readonly Stop[],
  read: ReturnType<typeof runOf>,
  timeZone: string,
): RunState {
  const { run, events, positions } = read;
  const { stopsReached, delayMinutes } = progress(stops, events, timeZone);
  return {
    routeId,
    date,
    id: run?.id ?? null,
    status: run ? run.status : "not-started",
    startedAt: run?.startedAt ?? null,
    finishedAt: run?.finishedAt ?? null,
    // A school year that keeps no positions (or positions swept after the day) still shows the last one.
    positions:
      positions.length > 0 || !run || run.lastLat === null || run.lastLon === null || !run.lastPositionAt
        ? positions.map((p) => ({ lat: p.lat, lon: p.lon, speed: p.speed, at: p.at }))
        : [{ lat: run.lastLat, lon: run.lastLon, speed: run.lastSpeed, at: run.lastPositionAt }],
    stopsReached,
    delayMinutes,
    events: events.map((e) => ({ ...e })),
  };
}
