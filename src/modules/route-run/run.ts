/**
 * The bus run (docs/domain.md, "Bus runs"): the driver (`route.run`: staff, and a driver for the
 * routes of the vehicles they drive) starts the day's run of a route, records each rider's boarding,
 * drop or no-show and the vehicle's positions, and finishes it; staff and the driver read its state.
 */

import { z } from "@hono/zod-openapi";
import { Batch, type Results } from "../../db/batch";
import {
  RouteRunEvents,
  RouteRunPositions,
  RouteRuns,
  routeRunEvents,
  routeRunPositions,
  routeRuns,
} from "../../db/schema/route-run";
import { SchoolConfigurations, schoolConfigurations } from "../../db/schema/school-configuration";
import { Students, students } from "../../db/schema/student";
import { RouteStops, Routes, routeStops, routes } from "../../db/schema/transport";
import { and, eq, gte, lte, sql } from "../../db/sql";
import { abortIf, GuardFailed, inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { dateTime, schoolDate } from "../../lib/dates";
import { ApiError, conflict, notFound, unprocessable } from "../../lib/errors";
import { m, verbatim } from "../../lib/message";
import { hit } from "../../lib/rate-limit";
import { IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { schoolEventsIn } from "../../lib/school-events";
import { text } from "../../lib/text";
import { dateIn } from "../../lib/zoned-time";
import { listStanding } from "../route-availability/api";
import { schoolZone } from "../school/api";
import { calendarOf, calendarReads, routeOff } from "../school-schedule/api";
import { parseStops, permissions, routeVisible, schoolToday, stopsOf } from "../transport/api";
import { boardingNotice, checkApproaching } from "./run-notices";
import { eventsQuery, Position, RunEventRecord, RunState, runOf, runReads, stateOf } from "./run-state";

/** Whether the school year of `date` keeps bus positions (a school without one for it does). */
const keepsPositions = (ctx: SchoolCtx, date: string) => {
  const year = SchoolConfigurations.pick(
    ctx,
    schoolConfigurations.keepBusPositions,
    lte(schoolConfigurations.startDate, date),
    gte(schoolConfigurations.endDate, date),
  ).limit(1);
  return sql<boolean>`COALESCE((${year}), 1)`.mapWith(Boolean);
};

/** How far a phone's clock may be off: an event timed this much before the run or ahead of now is refused. */
const CLOCK_SLACK_MS = 5 * 60_000;

/**
 * A boarding's or a position's `at`, by the driver's phone: not before the run started (an event
 * sent late from a phone that was offline is fine) and not ahead of the school's clock, each within
 * five minutes of slack; else a 422 naming the bounds (a wrong clock would skew the delay and the
 * families' times).
 */
function checkAt(at: string, startedAt: string | null, now: Date) {
  const when = Date.parse(at);
  if (startedAt !== null && when < Date.parse(startedAt) - CLOCK_SLACK_MS)
    throw unprocessable(m`${at} is before this run started (${startedAt}): check the phone's clock`);
  if (when > now.getTime() + CLOCK_SLACK_MS)
    throw unprocessable(m`${at} is ahead of the school's clock (${now.toISOString()}): check the phone's clock`);
}

/** A position at most every this many seconds per route (429 beyond). */
export const POSITION_EVERY_SECONDS = 5;

const meta = { tag: "Transport", module: "transport", scope: "school" } as const;

/** The route as the caller may see it (a driver: their vehicles' only), with its stops. */
const routeQuery = (ctx: SchoolCtx, id: number) =>
  Routes.select(ctx, { id: routes.id, direction: routes.direction, stops: stopsOf(routes.id) }).where(
    eq(routes.id, id),
    routeVisible(ctx, routes.transportId),
  );

function routeOf(row: { id: number; direction: string; stops: string | null } | undefined, id: number) {
  if (!row) throw notFound(m`Route ${id} not found`);
  return { id: row.id, direction: row.direction, stops: parseStops(row.stops) };
}

async function readRoute(ctx: SchoolCtx, id: number) {
  return routeOf(await routeQuery(ctx, id).first(), id);
}

/** The route's state on `date`, in one read. */
async function readState(ctx: SchoolCtx, routeId: number, date: string, stops: ReturnType<typeof parseStops>) {
  const batch = new Batch(ctx);
  const reads = runReads(ctx, batch, routeId, date);
  const results = await batch.commit();
  return stateOf(routeId, date, stops, runOf(results, reads), await schoolZone(ctx));
}

// --- start ---------------------------------------------------------------------------------------

const startRoute = defineRoute({
  ...meta,
  method: "post",
  path: "/api/v1/route/{id}/run",
  operationId: "startRouteRun",
  summary: "Start today's run of a route (once a day: starting it again answers the run started)",
  description:
    "The driver starts the route's run of the school's today. One run per route and day: a second start answers " +
    "the first. A route that does not run today (a holiday, not one of its weekdays) is a 422.",
  access: permissions.run,
  audit: "route-run",
  errors: [404, 422],
  examples: { 422: "Route 3 does not run on 2026-11-28" },
  request: { params: IdParams },
  responses: { 201: json(RunState, "The run's state") },
});

export const startRouteRun = operation(startRoute, async (ctx, { params }: InputOf<typeof startRoute>) => {
  const zone = await schoolZone(ctx);
  const date = dateIn(zone, ctx.deps.clock.now());
  // One read: the route as the caller may see it (its weekdays and levels), the school's calendar
  // of the day, and the day's run with its state (started already: the answer).
  const read = new Batch(ctx);
  const routeRead = read.read(routeQuery(ctx, params.id));
  const daysRead = read.read(
    Routes.select(ctx, { weekdays: routes.weekdays, levels: routes.levels }).where(eq(routes.id, params.id)),
  );
  const calendarRead = calendarReads(ctx, read, date);
  const stateRead = runReads(ctx, read, params.id, date);
  const found = await read.commit();
  const route = routeOf(found.get(routeRead)[0], params.id);
  if (found.get(stateRead.run)[0]) return stateOf(route.id, date, route.stops, runOf(found, stateRead), zone);
  const [days] = found.get(daysRead);
  // The final list's rule (route-availability): a school day of its levels, one of its weekdays.
  if (!days || routeOff(date, calendarOf(found, calendarRead).calendar, days) !== null)
    throw unprocessable(m`Route ${route.id} does not run on ${date}`);
  const at = ctx.deps.clock.now().toISOString();
  // One write, the run's state read back in it, and the bus leaving on the live board (a school
  // event, src/lib/school-events.ts): once per run, since a second start's unique day fails it all.
  const write = new Batch(ctx).add(
    ...RouteRuns.insert(ctx, { routeId: route.id, date, status: "running", startedAt: at, startedBy: ctx.userId }),
  );
  const heard = await schoolEventsIn(ctx, write, {
    type: "route.departed",
    data: { routeId: route.id, date, departedAt: at },
  });
  const after = runReads(ctx, write, route.id, date);
  try {
    const results = await write.commit();
    await heard(results);
    return stateOf(route.id, date, route.stops, runOf(results, after), zone);
  } catch (err) {
    // Started at the same moment by another request: the unique day answers that run.
    if (!(err instanceof ApiError && err.status === 409)) throw err;
    return readState(ctx, route.id, date, route.stops);
  }
});

// --- finish --------------------------------------------------------------------------------------

const finishRoute = defineRoute({
  ...meta,
  method: "patch",
  path: "/api/v1/route/{id}/run/finish",
  operationId: "finishRouteRun",
  summary: "Finish today's run of a route",
  description: "Today's run must have been started (404 otherwise); finishing a finished run is a 409.",
  access: permissions.run,
  audit: "route-run",
  errors: [404, 409],
  examples: { 409: "Today's run of route 3 is already finished" },
  request: { params: IdParams },
  responses: { 200: json(RunState, "The run's state, finished") },
});

export const finishRouteRun = operation(finishRoute, async (ctx, { params }: InputOf<typeof finishRoute>) => {
  const zone = await schoolZone(ctx);
  const date = dateIn(zone, ctx.deps.clock.now());
  const at = ctx.deps.clock.now().toISOString();
  // One round trip: the route and the run as they were, the change (only of a running run of a route
  // the caller may see), and the state after it. D1 runs the batch alone, so the run read before the
  // change tells whether this request finished it.
  const batch = new Batch(ctx);
  const routeRead = batch.read(routeQuery(ctx, params.id));
  const before = batch.read(
    RouteRuns.select(ctx, { id: routeRuns.id, status: routeRuns.status }).where(
      eq(routeRuns.routeId, params.id),
      eq(routeRuns.date, date),
    ),
  );
  const visible = Routes.pick(ctx, routes.id, eq(routes.id, params.id), routeVisible(ctx, routes.transportId));
  batch.add(
    ...RouteRuns.update(
      ctx,
      and(inList(routeRuns.routeId, visible), eq(routeRuns.date, date), eq(routeRuns.status, "running")),
      { status: "finished", finishedAt: at },
      "finish",
    ),
  );
  const after = runReads(ctx, batch, params.id, date);
  const results = await batch.commit();
  const route = routeOf(results.get(routeRead)[0], params.id);
  const [run] = results.get(before);
  if (!run) throw notFound(m`Route ${route.id} has no run today; start it first`);
  if (run.status === "finished") throw conflict(m`Today's run of route ${route.id} is already finished`);
  return stateOf(route.id, date, route.stops, runOf(results, after), zone);
});

// --- state ---------------------------------------------------------------------------------------

const stateRoute = defineRoute({
  ...meta,
  method: "get",
  path: "/api/v1/route/{id}/run",
  operationId: "getRouteRun",
  summary: "A route's run on a date: started, positions, stops reached, riders boarded and dropped, delay",
  description:
    "For staff and the route's driver. `date` defaults to the school's today; a day without a run answers " +
    "`status: not-started`. The delay is measured at the last stop where a rider boarded or was dropped.",
  access: permissions.routeRead,
  errors: [404],
  request: {
    params: IdParams,
    query: z.strictObject({ date: schoolDate("The school-local day (default: today)", "2026-11-23").optional() }),
  },
  responses: { 200: json(RunState, "The run's state") },
});

export const getRouteRun = operation(stateRoute, async (ctx, { params, query }: InputOf<typeof stateRoute>) => {
  const route = await readRoute(ctx, params.id);
  return readState(ctx, route.id, query.date ?? (await schoolToday(ctx)), route.stops);
});

// --- boarding ------------------------------------------------------------------------------------

const Boarding = z.strictObject({
  studentId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ example: 7, description: "The rider" }),
  event: z.enum(["boarded", "dropped", "no-show"]).openapi({ example: "boarded", description: "What happened" }),
  stopId: z
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .openapi({ example: 2, description: "The stop of the route where it happened" }),
  at: dateTime("When it happened, by the driver's phone"),
  insistReason: text({ max: 500 }).optional().openapi({
    example: "Her mother asked at the door",
    description: "Records a rider who is not on today's final list anyway, saying why",
  }),
});

const boardingRoute = defineRoute({
  ...meta,
  method: "post",
  path: "/api/v1/route/{id}/run/boarding",
  operationId: "recordRouteRunBoarding",
  summary: "Record a rider's boarding, drop or no-show on today's run (idempotent per rider, event and run)",
  description:
    "The run must be running (422 before it starts or after it finished). A rider not on today's final list of the " +
    "route (another route, a pickup, absent) is a 422 that says why, unless `insistReason` says why the driver " +
    "records them anyway. The same rider and event again answers the first record. The rider's guardians get a " +
    "push (boarded, dropped) once; the school's webhooks hear route.boarded and route.dropped.",
  access: permissions.run,
  audit: "route-run-event",
  errors: [404, 422],
  examples: { 422: "Student 7 is not on today's list of route 3: Picked up by a parent" },
  request: { params: IdParams, body: jsonBody(Boarding, "RouteRunBoarding") },
  responses: { 201: json(RunEventRecord, "The event recorded") },
});

type BoardingBody = InputOf<typeof boardingRoute>["body"];

export const recordRouteRunBoarding = operation(
  boardingRoute,
  async (ctx, { params, body }: InputOf<typeof boardingRoute>) => {
    const date = await schoolToday(ctx);
    // A boarding as the driver sends it is ONE round trip: the checks are the guard of its own batch.
    // Refused (or recorded already), one read says why (or answers the first record).
    const ahead = Date.parse(body.at) > ctx.deps.clock.now().getTime() + CLOCK_SLACK_MS;
    for (let attempt = 0; ; attempt++) {
      if (!ahead) {
        const recorded = await boardOnce(ctx, params.id, date, body);
        if (recorded) return recorded;
      }
      const before = await boardingRefusal(ctx, params.id, date, body);
      if (before) return before;
      // The reads allow what the guard refused: the state changed in between; once more, then give up.
      if (attempt >= 1) throw new Error("route run: a boarding the reads allow was refused twice by its guard");
    }
  },
);

/** The rider's record of this event on today's run of the route. */
const thisEventOf = (ctx: SchoolCtx, routeId: number, date: string, body: BoardingBody) =>
  eventsQuery(ctx).where(
    inList(
      routeRunEvents.runId,
      RouteRuns.pick(ctx, routeRuns.id, eq(routeRuns.routeId, routeId), eq(routeRuns.date, date)),
    ),
    eq(routeRunEvents.studentId, body.studentId),
    eq(routeRunEvents.event, body.event),
  );

/**
 * The boarding in one batch: aborted unless every check holds (the route is the caller's, the stop
 * is one of its stops, its run is under way and began at most five minutes after `at`, the event is
 * not recorded yet, the rider is the school's and on today's final list or the driver insists),
 * then the event, the guardians' push, the school event's webhook deliveries and the live board's
 * row, and the event read back; after the commit the queue sends and the hub's publish. Undefined
 * when the guard refused it (nothing written: `boardingRefusal` says why).
 */
async function boardOnce(ctx: SchoolCtx, routeId: number, date: string, body: BoardingBody) {
  const student = sql`${body.studentId}`;
  const standing = listStanding(ctx, routeId, date, student);
  const runId = RouteRuns.pick(ctx, routeRuns.id, eq(routeRuns.routeId, routeId), eq(routeRuns.date, date));
  // Stricter than `checkAt` by a second: the guard never lets through what the reads would refuse.
  const slackDays = (CLOCK_SLACK_MS - 1000) / 86_400_000;
  const ok = and(
    Routes.exists(ctx, eq(routes.id, routeId), routeVisible(ctx, routes.transportId)),
    RouteStops.exists(ctx, eq(routeStops.id, body.stopId), eq(routeStops.routeId, routeId)),
    RouteRuns.exists(
      ctx,
      eq(routeRuns.routeId, routeId),
      eq(routeRuns.date, date),
      eq(routeRuns.status, "running"),
      sql`(${routeRuns.startedAt} IS NULL OR julianday(${body.at}) >= julianday(${routeRuns.startedAt}) - ${slackDays})`,
    ),
    sql`NOT ${RouteRunEvents.exists(ctx, inList(routeRunEvents.runId, runId), eq(routeRunEvents.studentId, body.studentId), eq(routeRunEvents.event, body.event))}`,
    Students.exists(ctx, eq(students.id, body.studentId), body.insistReason ? undefined : standing.rides),
  );
  const batch = new Batch(ctx).add(
    abortIf(ctx.deps.db, sql`NOT (${ok})`),
    ...RouteRunEvents.insert(ctx, {
      runId: sql`${runId}`,
      studentId: body.studentId,
      event: body.event,
      stopId: body.stopId,
      at: body.at,
      insistReason: body.insistReason ? sql`CASE WHEN ${standing.rides} THEN NULL ELSE ${body.insistReason} END` : null,
      recordedBy: ctx.userId,
    }),
  );
  let after = async (_: Results) => {};
  if (body.event !== "no-show") {
    const told = boardingNotice(ctx, {
      routeId,
      studentId: body.studentId,
      firstName: sql`${Students.pick(ctx, students.firstName, eq(students.id, body.studentId))}`,
      event: body.event,
      stopName: sql`${RouteStops.pick(ctx, routeStops.name, eq(routeStops.id, body.stopId))}`,
    });
    batch.add(...told.statements);
    const heard = await schoolEventsIn(ctx, batch, {
      type: body.event === "boarded" ? "route.boarded" : "route.dropped",
      data: { routeId, date, studentId: body.studentId, stopId: body.stopId, at: body.at },
      student: { id: body.studentId, date },
    });
    after = async (results) => {
      await told.dispatch();
      await heard(results);
    };
  }
  const recorded = batch.read(thisEventOf(ctx, routeId, date, body));
  let results: Results;
  try {
    results = await batch.commit();
  } catch (err) {
    if (err instanceof GuardFailed) return undefined;
    // Recorded at the same moment by another request: the unique event answers that one.
    if (!(err instanceof ApiError && err.status === 409)) throw err;
    const first = await thisEventOf(ctx, routeId, date, body).first();
    if (!first) throw err;
    return first;
  }
  const [event] = results.get(recorded);
  if (!event) throw new Error("route run: the event was not read back");
  await after(results);
  return event;
}

/**
 * Why a boarding was refused, in one read: a 404 or a 422 naming the reason (the route, the stop,
 * no run under way, the phone's clock, the rider unknown or not on today's list); or the event as
 * recorded already (the same rider and event again). Undefined when nothing refuses it.
 */
async function boardingRefusal(ctx: SchoolCtx, routeId: number, date: string, body: BoardingBody) {
  const standing = listStanding(ctx, routeId, date, sql`${body.studentId}`);
  const batch = new Batch(ctx);
  const routeRead = batch.read(routeQuery(ctx, routeId));
  const runRead = batch.read(
    RouteRuns.select(ctx, { id: routeRuns.id, status: routeRuns.status, startedAt: routeRuns.startedAt }).where(
      eq(routeRuns.routeId, routeId),
      eq(routeRuns.date, date),
    ),
  );
  const eventRead = batch.read(thisEventOf(ctx, routeId, date, body));
  const riderRead = batch.read(
    Students.select(ctx, { status: standing.status, reason: standing.reason }).where(eq(students.id, body.studentId)),
  );
  const results = await batch.commit();
  const route = routeOf(results.get(routeRead)[0], routeId);
  if (!route.stops.some((s) => s.id === body.stopId))
    throw unprocessable(m`Stop ${body.stopId} is not a stop of route ${route.id}`);
  const [run] = results.get(runRead);
  if (run?.status !== "running") throw unprocessable(m`Route ${route.id} has no run under way; start it first`);
  const [before] = results.get(eventRead);
  if (before) return before;
  checkAt(body.at, run.startedAt, ctx.deps.clock.now());
  const [rider] = results.get(riderRead);
  if (!rider) throw notFound(m`Student ${body.studentId} not found`);
  const rides = rider.status === "riding" || rider.status === "joining";
  if (!rides && !body.insistReason) {
    throw unprocessable(
      rider.status
        ? m`Student ${body.studentId} is not on today's list of route ${route.id}: ${verbatim(rider.reason ?? "away")}`
        : m`Student ${body.studentId} is not on today's list of route ${route.id}`,
    );
  }
  return undefined;
}

// --- position ------------------------------------------------------------------------------------

const PositionBody = z.strictObject({
  lat: z.number().min(-90).max(90).openapi({ example: 19.4326, description: "Latitude, degrees" }),
  lon: z.number().min(-180).max(180).openapi({ example: -99.1332, description: "Longitude, degrees" }),
  at: dateTime("When the phone took it"),
  speed: z.number().min(0).max(100).optional().openapi({ example: 8.5, description: "Speed in m/s" }),
});

const positionRoute = defineRoute({
  ...meta,
  method: "post",
  path: "/api/v1/route/{id}/run/position",
  operationId: "recordRouteRunPosition",
  summary: `Record the vehicle's position on today's run (at most one every ${POSITION_EVERY_SECONDS} s)`,
  description:
    `At most one position every ${POSITION_EVERY_SECONDS} seconds per route: a 429 with retry-after beyond, and ` +
    "RateLimit headers on every answer counted (201, 429: a position refused for its run or its time spends no slot). Positions are kept for the day only, or not at all when the school year says " +
    "so (`keepBusPositions`: the run keeps its last position only). The run must be running (422).",
  access: permissions.run,
  audit: "route-run-position",
  errors: [404, 422, 429],
  examples: { 422: "Route 3 has no run under way; start it first", 429: "One position every 5 seconds" },
  request: { params: IdParams, body: jsonBody(PositionBody, "RouteRunPosition") },
  responses: {
    201: json(
      Position.extend({
        id: z.number().int().nullable().openapi({
          example: 1,
          description: "The position's id; null when the school year keeps no positions (only the run's last one)",
        }),
      }).openapi("RunPositionRecorded"),
      "The position recorded",
    ),
  },
});

export const recordRouteRunPosition = operation(
  positionRoute,
  async (ctx, { params, body }: InputOf<typeof positionRoute>) => {
    const now = ctx.deps.clock.now();
    const date = await schoolToday(ctx);
    // One read: the route as the caller may see it, and its run under way today (with the school
    // year's `keepBusPositions`); then the rate limit (a position refused spends none), then one write.
    const read = new Batch(ctx);
    const routeRead = read.read(routeQuery(ctx, params.id));
    const runRead = read.read(
      RouteRuns.select(ctx, {
        id: routeRuns.id,
        approachCheckedAt: routeRuns.approachCheckedAt,
        startedAt: routeRuns.startedAt,
        keep: keepsPositions(ctx, date),
      }).where(eq(routeRuns.routeId, params.id), eq(routeRuns.date, date), eq(routeRuns.status, "running")),
    );
    const found = await read.commit();
    const route = routeOf(found.get(routeRead)[0], params.id);
    const [run] = found.get(runRead);
    if (!run) throw unprocessable(m`Route ${route.id} has no run under way; start it first`);
    checkAt(body.at, run.startedAt, now);
    // Only a position that would be recorded spends the route's slot (one upsert: check and count at once).
    const limited = await hit(ctx.deps.db, `route-position:${route.id}`, 1, POSITION_EVERY_SECONDS, now);
    if (!limited.allowed) {
      throw new ApiError(429, m`One position every ${POSITION_EVERY_SECONDS} seconds`, {
        headers: { "retry-after": String(limited.retryAfter) },
      });
    }
    const speed = body.speed ?? null;
    const at = now.toISOString();
    // The run's last position is bookkeeping (no audit row per position); the position row is the
    // record, unless the school year keeps none: then the last position is all there is.
    const write = new Batch(ctx);
    if (run.keep) {
      write.add(...RouteRunPositions.insert(ctx, { runId: run.id, lat: body.lat, lon: body.lon, speed, at: body.at }));
    }
    const inserted = run.keep
      ? write.read(
          RouteRunPositions.select(ctx, { id: routeRunPositions.id }).where(
            eq(routeRunPositions.id, RouteRunPositions.insertedId()),
          ),
        )
      : undefined;
    write.add(
      ctx.deps.db
        .update(routeRuns)
        .set({ lastLat: body.lat, lastLon: body.lon, lastSpeed: speed, lastPositionAt: body.at, updatedAt: at })
        .where(RouteRuns.where(ctx, eq(routeRuns.id, run.id))),
    );
    const committed = await write.commit();
    const positionId = inserted ? (committed.get(inserted)[0]?.id ?? null) : null;
    // "Five minutes away": looked for at most once a minute per run.
    if (!run.approachCheckedAt || now.getTime() - Date.parse(run.approachCheckedAt) >= 60_000) {
      await checkApproaching(ctx, { runId: run.id, routeId: route.id, date, stops: route.stops });
    }
    return { id: positionId, lat: body.lat, lon: body.lon, speed, at: body.at };
  },
);
