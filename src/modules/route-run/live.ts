/**
 * A guardian's live view of their children's buses today (`GET /api/v1/route/mine/live`): for each
 * of the caller's children's rides of today (as `GET /api/v1/route/mine` finds them), the run's
 * state, whether the child boarded or was dropped, the estimated time at the child's stop, and the
 * bus's last position only while it is between its first stop and the child's: no other child's
 * data (the delay is computed from every rider's events, none of which is shown).
 */

import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { RouteRunEvents, RouteRuns, routeRunEvents, routeRuns } from "../../db/schema/route-run";
import { eq } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { orNull } from "../../lib/nullable";
import { defineRoute, json, operation } from "../../lib/route";
import { schoolZone } from "../school/api";
import { Direction, familyRides, permissions, RouteStop } from "../transport/api";
import { eta, Position, progress } from "./run-state";

const Live = z
  .object({
    student: z
      .object({
        id: z.number().int().openapi({ example: 7 }),
        firstName: z.string().openapi({ example: "Pablo" }),
        lastName: z.string().openapi({ example: "Ruiz" }),
      })
      .openapi({ description: "The child" }),
    route: z
      .object({
        id: z.number().int().openapi({ example: 1 }),
        name: z.string().openapi({ example: "Bus 1 home", description: "The route's name" }),
        direction: Direction,
      })
      .openapi({ description: "The child's bus today (the one they join for the day, when a change says so)" }),
    stop: orNull(RouteStop).openapi({ description: "The child's stop" }),
    run: z.enum(["not-started", "running", "finished"]).openapi({ description: "The run's state" }),
    boardedAt: z.iso.datetime().nullable().openapi({ description: "When the child boarded; null if not (yet)" }),
    droppedAt: z.iso.datetime().nullable().openapi({ description: "When the child was dropped; null if not (yet)" }),
    noShow: z.boolean().openapi({ description: "The driver recorded that the child did not show up" }),
    delayMinutes: z
      .number()
      .int()
      .nullable()
      .openapi({ example: 4, description: "Minutes behind the stops' times; null before the first stop" }),
    estimatedAt: z.string().nullable().openapi({
      example: "15:42",
      description:
        "The estimated school-local time (HH:mm) at the child's stop: its time plus the current delay; null once reached",
    }),
    position: orNull(Position).openapi({
      description: "The bus's last position, only between its first stop and the child's stop",
    }),
  })
  .openapi("LiveRide");

const route = defineRoute({
  method: "get",
  path: "/api/v1/route/mine/live",
  tag: "Transport",
  operationId: "getFamilyLiveRoutes",
  summary: "The caller's children's buses now: boarded or not, the time at their stop, where the bus is",
  description:
    "For each ride of the caller's children today (a delegate: the children of the parent they act for; a child " +
    "who joins another bus for the day by a route change: that bus, not their own): the " +
    "run's state, boarding and drop times, the estimated time at the child's stop (the stop's time plus the " +
    "current delay, measured at the last stop reached) and the bus's last position between its first stop and " +
    "the child's.",
  access: permissions.routeFamily,
  module: "transport",
  responses: {
    200: json(
      z
        .object({
          date: z.iso.date().openapi({ example: "2026-11-23", description: "The school's today" }),
          data: z.array(Live).openapi({ description: "Each ride of today" }),
        })
        .openapi("FamilyLiveRoutes"),
      "The children's buses today",
    ),
  },
});

export async function familyLive(ctx: SchoolCtx) {
  const mine = await familyRides(ctx, { query: {} }, { dayChanges: true });
  // The bus each child takes today: their own, unless a change of the day takes them off it (away),
  // and the bus they join for the day (a route change) in its place.
  const away = new Set(mine.changes.filter((c) => c.kind === "away").map((c) => `${c.student.id}:${c.route.id}`));
  const rides = [
    ...mine.data.filter((r) => r.runs && !away.has(`${r.student.id}:${r.route.id}`)),
    ...mine.changes.filter((c) => c.kind === "join" && c.runs),
  ];
  if (rides.length === 0) return { date: mine.date, data: [] };
  const routeIds = [...new Set(rides.map((r) => r.route.id))];
  const batch = new Batch(ctx);
  const runs = batch.read(
    RouteRuns.select(ctx).where(inList(routeRuns.routeId, routeIds), eq(routeRuns.date, mine.date)),
  );
  const ofRuns = RouteRuns.pick(ctx, routeRuns.id, inList(routeRuns.routeId, routeIds), eq(routeRuns.date, mine.date));
  const events = batch.read(
    RouteRunEvents.select(ctx, {
      runId: routeRunEvents.runId,
      studentId: routeRunEvents.studentId,
      event: routeRunEvents.event,
      stopId: routeRunEvents.stopId,
      at: routeRunEvents.at,
    }).where(inList(routeRunEvents.runId, ofRuns)),
  );
  const results = await batch.commit();
  const zone = await schoolZone(ctx);
  const runOfRoute = new Map(results.get(runs).map((r) => [r.routeId, r]));
  const allEvents = results.get(events);
  const data = rides.map((ride) => {
    const run = runOfRoute.get(ride.route.id);
    const own = allEvents.filter((e) => e.runId === run?.id);
    const { stopsReached, delayMinutes } = progress(ride.stops, own, zone);
    const mineOf = (event: string) => own.find((e) => e.studentId === ride.student.id && e.event === event);
    const boarded = mineOf("boarded");
    const dropped = mineOf("dropped");
    const reachedChild = ride.stop !== null && stopsReached.includes(ride.stop.id);
    const passedChild = reachedChild || (ride.route.direction === "home" ? !!dropped : !!boarded);
    const visible =
      run?.status === "running" &&
      stopsReached.length > 0 &&
      !passedChild &&
      run.lastLat !== null &&
      run.lastLon !== null;
    return {
      student: ride.student,
      route: { id: ride.route.id, name: ride.route.name, direction: ride.route.direction },
      stop: ride.stop,
      run: run ? run.status : ("not-started" as const),
      boardedAt: boarded?.at ?? null,
      droppedAt: dropped?.at ?? null,
      noShow: !!mineOf("no-show"),
      delayMinutes,
      estimatedAt: ride.stop && !passedChild ? eta(ride.stop, delayMinutes) : null,
      position:
        visible && run.lastLat !== null && run.lastLon !== null && run.lastPositionAt
          ? { lat: run.lastLat, lon: run.lastLon, speed: run.lastSpeed, at: run.lastPositionAt }
          : null,
    };
  });
  return { date: mine.date, data };
}

export const getFamilyLiveRoutes = operation(route, (ctx) => familyLive(ctx));
