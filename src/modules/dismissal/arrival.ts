/**
 * "I'm here": `POST /api/v1/dismissal/arrival` (a guardian, or their delegate in its window, for
 * some or all of their children today, with an optional position), the staff's call list `GET
 * /api/v1/dismissal/arrival` in arrival order, and `PATCH /api/v1/dismissal/arrival/{id}/call`.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { DismissalArrivals, DismissalReleases, dismissalArrivals, dismissalReleases } from "../../db/schema/dismissal";
import { Students, students } from "../../db/schema/student";
import { asc, eq, lte, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { Listing, PageQuery, pageOf } from "../../lib/pagination";
import { idList } from "../../lib/params";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { dismissalWindowOf } from "../exit-permission/api";
import { schoolToday } from "../transport/api";
import { DayQuery } from "./board";
import { eventOf } from "./events";
import { permissions } from "./permissions";
import { dayOf, dayReads, type Entry, guardianMay } from "./plan";
import { type Failure, refusal } from "./refusal";
import { Latitude, Longitude, metresBetween, settingQuery } from "./setting";

const PATH = "/api/v1/dismissal/arrival";

const Position = z
  .strictObject({
    lat: Latitude,
    lon: Longitude,
    accuracy: z.number().min(0).max(100000).optional().openapi({ example: 15, description: "Metres (the device's)" }),
  })
  .openapi("DismissalPosition", { description: "Where the device is (WGS 84)" });

const ArrivalBody = z.strictObject({
  studentIds: idList({ max: 20, what: "Student" }).optional().openapi({
    description: "Which of the caller's children, each once (default: every child of theirs at school today)",
  }),
  position: Position.optional(),
});

const ArrivalLine = z
  .object({
    id: z.number().int().openapi({ description: "The arrival's id" }),
    studentId: z.number().int().openapi({ description: "The child's id" }),
    status: z.enum(["waiting", "called"]).openapi({ description: "waiting in the line, or called to the gate" }),
    place: z.number().int().nullable().openapi({ description: "The place in the line (1: next); null once called" }),
    at: z.string().openapi({ description: "When the guardian said they were here (ISO 8601)" }),
  })
  .openapi("DismissalArrivalLine");

const Arrived = z
  .object({
    date: z.iso.date().openapi({ description: "The school-local date" }),
    arrivals: z.array(ArrivalLine).openapi({ description: "One per child, with its place in the line" }),
  })
  .openapi("DismissalArrived");

const arriveRoute = defineRoute({
  method: "post",
  path: PATH,
  tag: "Transport",
  operationId: "createDismissalArrival",
  summary: "Say \"I'm here\" for some or all of one's children today: answers the place in the line",
  access: "member",
  module: "dismissal",
  audit: "dismissal-arrival",
  errors: [404, 422],
  examples: {
    422: "Too early: Pablo's dismissal window opens at 13:30; You are 1240 m from the school (at most 300 m)",
  },
  request: { body: jsonBody(ArrivalBody, "DismissalArrivalBody") },
  responses: { 201: json(Arrived, "The arrivals and their places") },
});

const name = (e: Entry) => `${e.firstName} ${e.lastName}`.trim();
const hhmm = (d: Date, timeZone: string) =>
  new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(d);

/** Why a child cannot be said to be collected now (none: they can). */
async function arrivalFailures(
  ctx: SchoolCtx,
  e: Entry,
  i: number,
  date: string,
  timeZone: string,
): Promise<Failure[]> {
  const path = `studentIds.${i}`;
  const who = name(e);
  if (e.status === "no-school" || e.dismissal === null) {
    return [{ code: "no-school", path, studentId: e.studentId, message: m`${who} has no school today` }];
  }
  if (e.status === "absent")
    return [{ code: "absent", path, studentId: e.studentId, message: m`${who} is absent today` }];
  if (e.status === "released") {
    return [{ code: "released", path, studentId: e.studentId, message: m`${who} has already left today` }];
  }
  if (e.route) {
    const route = e.route.name;
    return [{ code: "rides-home", path, studentId: e.studentId, message: m`${who} goes home on route ${route} today` }];
  }
  const own = e.guardians.find((g) => g.userId === ctx.userId);
  if (own && !guardianMay(own, date)) {
    return [{ code: "may-not-collect", path, studentId: e.studentId, message: m`You may not collect ${who} today` }];
  }
  const now = ctx.deps.clock.now();
  const { validFrom, expiresAt } = await dismissalWindowOf(date, e.dismissal, e.afterSchoolEnd, timeZone);
  if (now < validFrom) {
    const opens = hhmm(validFrom, timeZone);
    return [
      {
        code: "too-early",
        path,
        studentId: e.studentId,
        opens: validFrom.toISOString(),
        message: m`Too early: ${who}'s dismissal window opens at ${opens}`,
      },
    ];
  }
  if (now >= expiresAt) {
    const closed = hhmm(expiresAt, timeZone);
    return [
      {
        code: "too-late",
        path,
        studentId: e.studentId,
        closed: expiresAt.toISOString(),
        message: m`Too late: ${who}'s dismissal window closed at ${closed}`,
      },
    ];
  }
  return [];
}

export async function createArrival(ctx: SchoolCtx, { body }: InputOf<typeof arriveRoute>) {
  const date = await schoolToday(ctx);
  const batch = new Batch(ctx);
  const reads = dayReads(ctx, batch, date, { mine: { userId: ctx.userId ?? 0, today: date } });
  const setting = batch.read(settingQuery(ctx));
  const results = await batch.commit();
  const day = dayOf(results, reads, date, ctx);
  const [school] = results.get(setting);
  const byId = new Map(day.entries.map((e) => [e.studentId, e]));
  const ids = body.studentIds ?? day.entries.filter((e) => e.status !== "no-school").map((e) => e.studentId);
  const chosen = ids.map((id) => {
    const e = byId.get(id);
    if (!e) throw notFound(m`Student ${id} not found`);
    return e;
  });
  if (chosen.length === 0) throw notFound(m`No child of yours is at school today`);
  const failures: Failure[] = [];
  for (const [i, e] of chosen.entries()) failures.push(...(await arrivalFailures(ctx, e, i, date, day.timeZone)));
  let distance: number | null = null;
  if (body.position && school) {
    distance = metresBetween({ lat: school.latitude, lon: school.longitude }, body.position);
    // The device's accuracy counts for the guardian: a fix 50 m wide may be 50 m nearer.
    if (distance - (body.position.accuracy ?? 0) > school.radiusMeters) {
      const radius = school.radiusMeters;
      failures.push({
        code: "too-far",
        path: "position",
        distanceMeters: distance,
        radiusMeters: radius,
        message: m`You are ${distance} m from the school (at most ${radius} m)`,
      });
    }
  }
  if (failures.length > 0) throw refusal(failures);
  const write = new Batch(ctx);
  for (const e of chosen) {
    if (e.arrival) continue;
    write.add(
      ...DismissalArrivals.insert(ctx, {
        date,
        studentId: e.studentId,
        userId: ctx.userId,
        latitude: body.position?.lat ?? null,
        longitude: body.position?.lon ?? null,
        accuracy: body.position?.accuracy ?? null,
        distanceMeters: distance,
      }),
      eventOf(ctx, date, "arrival", e.studentId, { userId: ctx.userId }),
    );
  }
  const lines = write.read(
    lineQuery(ctx, date).where(
      inList(
        dismissalArrivals.studentId,
        chosen.map((e) => e.studentId),
      ),
    ),
  );
  const rows = (await write.commit({ conflict: m`Someone said they were here for this child at the same time` })).get(
    lines,
  );
  return { date, arrivals: rows.map(lineOf) };
}

/** The day's arrivals (with the child's name) and their place among those still waiting (1: next). */
function lineQuery(ctx: SchoolCtx, date: string) {
  const ahead = DismissalArrivals.alias("ahead");
  const place = ahead
    .select(ctx, { n: sql<number>`count(*)` })
    .where(
      eq(ahead.table.date, dismissalArrivals.date),
      eq(ahead.table.status, "waiting"),
      lte(ahead.table.id, dismissalArrivals.id),
    );
  return DismissalArrivals.select(ctx, {
    id: dismissalArrivals.id,
    studentId: dismissalArrivals.studentId,
    firstName: students.firstName,
    lastName: students.lastName,
    status: dismissalArrivals.status,
    at: dismissalArrivals.createdAt,
    calledAt: dismissalArrivals.calledAt,
    place: sql<number | null>`CASE WHEN ${dismissalArrivals.status} = 'waiting' THEN ${place} END`,
  })
    .join(Students, eq(students.id, dismissalArrivals.studentId))
    .where(eq(dismissalArrivals.date, date))
    .orderBy(asc(dismissalArrivals.id));
}

const lineOf = (r: {
  id: number;
  studentId: number;
  status: "waiting" | "called";
  at: string;
  place: number | null;
}) => ({
  id: r.id,
  studentId: r.studentId,
  status: r.status,
  place: r.place ?? null,
  at: r.at,
});

export const createArrivalOperation = operation(arriveRoute, createArrival);

// --- the call list ---

const CallItem = z
  .object({
    id: z.number().int().openapi({ description: "The arrival's id" }),
    studentId: z.number().int().openapi({ description: "The child's id" }),
    firstName: z.string().openapi({ description: "The child's first name" }),
    lastName: z.string().openapi({ description: "The child's last name" }),
    status: z.enum(["waiting", "called"]).openapi({ description: "waiting in the line, or called to the gate" }),
    place: z.number().int().nullable().openapi({ description: "The place in the line (1: next); null once called" }),
    at: z.string().openapi({ description: "When the guardian said they were here (ISO 8601)" }),
    calledAt: z.string().nullable().openapi({ description: "When staff called the child (ISO 8601)" }),
  })
  .openapi("DismissalCallItem");

const listRoute = defineRoute({
  method: "get",
  path: PATH,
  tag: "Transport",
  operationId: "listDismissalArrivals",
  summary: "The call list: the day's arrivals not yet released, in arrival order",
  access: permissions.read,
  module: "dismissal",
  request: { query: z.strictObject({ ...PageQuery.shape, date: DayQuery.optional() }) },
  responses: { 200: json(pageOf(CallItem, "DismissalCallPage"), "A page of the call list") },
  extensions: { "x-filters": { date: "2026-11-25" } },
});

export async function listArrivals(ctx: SchoolCtx, { query }: InputOf<typeof listRoute>) {
  const date = query.date ?? (await schoolToday(ctx));
  const notReleased = sql`NOT ${DismissalReleases.exists(ctx, eq(dismissalReleases.date, date), eq(dismissalReleases.studentId, dismissalArrivals.studentId))}`;
  const list = lineQuery(ctx, date).where(notReleased);
  const batch = new Batch(ctx);
  const rows = batch.read(list.limit(query.pageSize).offset((query.page - 1) * query.pageSize));
  const total = batch.read(list.count());
  const results = await batch.commit();
  const data = results.get(rows).map((r) => ({
    ...lineOf(r),
    firstName: r.firstName,
    lastName: r.lastName,
    calledAt: r.calledAt,
  }));
  return new Listing(data, results.get(total)[0]?.n ?? 0, query);
}

export const listArrivalsOperation = operation(listRoute, listArrivals);

// --- call ---

const arrival = defineResource({
  name: "dismissalArrival",
  plural: "dismissalArrivals",
  label: m`Arrival`,
  path: PATH,
  tag: "Transport",
  scope: "school",
  module: "dismissal",
  data: DismissalArrivals,
  record: RecordBase.extend({
    date: z.iso.date().openapi({ description: "The school-local date" }),
    studentId: z.number().int().openapi({ description: "The child's id" }),
    userId: z.number().int().nullable().openapi({ description: "Who said they were here" }),
    status: z.enum(["waiting", "called"]).openapi({ description: "waiting in the line, or called to the gate" }),
    calledAt: z.string().nullable().openapi({ description: "When staff called the child (ISO 8601)" }),
    calledBy: z.number().int().nullable().openapi({ description: "Who called the child" }),
  }).openapi("DismissalArrival"),
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    date: row.date,
    studentId: row.studentId,
    userId: row.userId,
    status: row.status,
    calledAt: row.calledAt,
    calledBy: row.calledBy,
  }),
});

export const callArrival = arrival.action({
  name: "call",
  access: permissions.release,
  from: { column: dismissalArrivals.status, states: ["waiting"] },
  conflict: () => () => m`This child was already called`,
  summary: "Call an arrived child to the gate",
  description: "From waiting; called already: 409. A child already released: 422.",
  examples: { 422: "Pablo Parent has already left today" },
  rules: (ctx) => [
    {
      when: sql`NOT ${DismissalReleases.exists(ctx, eq(dismissalReleases.date, dismissalArrivals.date), eq(dismissalReleases.studentId, dismissalArrivals.studentId))}`,
      message: m`This child has already left today`,
    },
  ],
  set: (ctx) => ({ status: "called", calledAt: ctx.deps.clock.now().toISOString(), calledBy: ctx.userId }),
  also: (ctx, { id }) => [calledEvent(ctx, id)],
});

/** The `called` event of arrival `id`: its day and child read by the INSERT. */
function calledEvent(ctx: SchoolCtx, id: number | SQL<number>) {
  const of = (column: typeof dismissalArrivals.date | typeof dismissalArrivals.studentId) =>
    sql`${DismissalArrivals.pick(ctx, column, eq(dismissalArrivals.id, id))}`;
  return eventOf(
    ctx,
    of(dismissalArrivals.date),
    "called",
    of(dismissalArrivals.studentId),
    typeof id === "number" ? { arrivalId: id } : {},
  );
}
