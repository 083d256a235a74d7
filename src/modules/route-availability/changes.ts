/**
 * Route availability students: a day's changes to a route's list. A `join` (a student riding this
 * route that day, at a stop of it) takes a seat; an `away` (a rider not riding that day, and why)
 * frees one. Taking a seat is one conditional UPDATE of the day's row in the batch that records the
 * change, guarded: the batch aborts when no seat is left, so a route is never oversold. Each change
 * made after the list was downloaded starts the list's next version (./versions.ts).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Students, students } from "../../db/schema/student";
import {
  RouteAvailabilities,
  RouteAvailabilityStudents,
  RouteStops,
  RouteStudents,
  Routes,
  routeAvailabilities,
  routeAvailabilityStudents,
  routeStops,
  routeStudents,
  routes,
  Transports,
  transports,
} from "../../db/schema/transport";
import { and, eq, gt, type SQL, sql } from "../../db/sql";
import { GuardFailed, guard, inList } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { m } from "../../lib/message";
import { idFilter, recordId } from "../../lib/params";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { type InputOf, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { mayRide } from "../transport/api";
import { assertRuns, baseRiders, drivenBy, type RouteDay, riding, routeDays, withSchoolDay } from "./day";
import { permissions } from "./permissions";
import { dayRow, listChange, nextVersion, stampVersion } from "./versions";

const Record = RecordBase.extend({
  routeAvailabilityId: z.number().int(),
  routeId: z.number().int(),
  routeName: z.string(),
  date: z.iso.date().openapi({ example: "2027-03-01", description: "The school-local day" }),
  studentId: z.number().int(),
  studentName: z.string().openapi({ example: "Ana Gómez" }),
  kind: z
    .enum(["join", "away"])
    .openapi({ description: "join: rides this route that day (takes a seat); away: does not" }),
  stopId: z.number().int().nullable(),
  stopName: z.string().nullable(),
  reason: z.string().nullable().openapi({ description: "Why, as the school wrote it" }),
  confirmed: z.boolean().openapi({ description: "Only confirmed changes move seats and the list" }),
  version: z.number().int().openapi({ description: "The list version the change first appears in" }),
});

export const changes = defineResource({
  name: "routeAvailabilityStudent",
  plural: "routeAvailabilityStudents",
  label: m`Route availability student`,
  path: "/api/v1/route-availability-student",
  tag: "Transport",
  scope: "school",
  module: "transport",
  data: RouteAvailabilityStudents,
  record: Record,
  view: {
    fields: {
      id: routeAvailabilityStudents.id,
      createdAt: routeAvailabilityStudents.createdAt,
      updatedAt: routeAvailabilityStudents.updatedAt,
      routeAvailabilityId: routeAvailabilityStudents.routeAvailabilityId,
      routeId: routeAvailabilities.routeId,
      routeName: routes.name,
      date: routeAvailabilities.date,
      studentId: routeAvailabilityStudents.studentId,
      studentName: sql<string>`${students.firstName} || ' ' || ${students.lastName}`,
      kind: routeAvailabilityStudents.kind,
      stopId: routeAvailabilityStudents.stopId,
      stopName: routeStops.name,
      reason: routeAvailabilityStudents.reason,
      confirmed: routeAvailabilityStudents.confirmed,
      version: routeAvailabilityStudents.version,
    },
    join: (q) =>
      q
        .join(RouteAvailabilities, eq(routeAvailabilities.id, routeAvailabilityStudents.routeAvailabilityId))
        .join(Routes, eq(routes.id, routeAvailabilities.routeId))
        .join(Students, eq(students.id, routeAvailabilityStudents.studentId))
        .join(RouteStops, eq(routeStops.id, routeAvailabilityStudents.stopId), "left"),
  },
  toRecord: (_ctx, row) => ({ ...timestamps(row), ...row }),
  // Through the day's id: the list's count reads this table alone.
  visibleTo: (ctx) => {
    const driven = drivenBy(ctx, routeAvailabilities.routeId);
    return driven && ofDays(ctx, driven);
  },
  conflictMessage: m`The student already has a change on this route and date`,
});

/** Changes of the route days meeting `where` (a subquery of day ids: the count reads no join). */
const ofDays = (ctx: SchoolCtx, where: SQL) =>
  inList(routeAvailabilityStudents.routeAvailabilityId, RouteAvailabilities.pick(ctx, routeAvailabilities.id, where));

const filters = {
  // route_availability_uq (route_id, date), then the day's changes
  routeId: {
    schema: idFilter("Only this route's changes"),
    where: (ctx: SchoolCtx, v: number) => ofDays(ctx, eq(routeAvailabilities.routeId, v)),
    example: "1",
  },
  date: {
    schema: schoolDate("Only this date's changes", "2027-03-01").optional(),
    where: (ctx: SchoolCtx, v: string) => ofDays(ctx, eq(routeAvailabilities.date, v)),
    example: "2027-03-01",
  },
  // route_availability_student_student_idx
  studentId: {
    schema: idFilter("Only this student's changes"),
    where: (_ctx: Ctx, v: number) => eq(routeAvailabilityStudents.studentId, v),
    example: "1",
  },
};

export const listRouteAvailabilityStudents = changes.list({
  access: permissions.listRead,
  filters,
  summary: "List the days' changes to route lists (paginated)",
});

export const getRouteAvailabilityStudent = changes.get({ access: permissions.listRead });

const Reason = text({ max: 300 }).nullable().optional();
const Create = z.object({
  routeId: recordId().openapi({ example: 1 }),
  date: schoolDate("The school-local day of the change", "2027-03-01"),
  studentId: recordId().openapi({ example: 1 }),
  kind: z
    .enum(["join", "away"])
    .openapi({ description: "join: rides this route that day (takes a seat); away: does not" }),
  stopId: recordId()
    .optional()
    .openapi({ description: "For a join: the stop of the route where the student boards or leaves" }),
  reason: Reason.openapi({ example: "Goes to a classmate's home" }),
  confirmed: z
    .boolean()
    .optional()
    .openapi({ description: "Default true; only confirmed changes move seats and the list" }),
});

const createRoute = changes.create({
  access: permissions.listWrite,
  input: Create,
  errors: [422],
  examples: {
    409: "No seats left on North loop on 2027-03-01",
    422: "Ana Gómez does not ride North loop on 2027-03-01",
  },
  summary: "Record a student joining a route on a date (takes a seat) or away from it",
});

/** What a change needs read first, in one batch: the route's day, the student, the stop, whether they ride. */
async function readForChange(ctx: SchoolCtx, routeId: number, date: string, studentId: number, stopId?: number) {
  const read = await withSchoolDay(ctx, date, (b) => ({
    day: b.read(routeDays(ctx, date, eq(routes.id, routeId))),
    student: b.read(
      Students.select(ctx, {
        id: students.id,
        name: sql<string>`${students.firstName} || ' ' || ${students.lastName}`,
        level: students.level,
        status: students.status,
      })
        .where(eq(students.id, studentId), sql`${students.deletedAt} IS NULL`)
        .limit(1),
    ),
    stop: b.read(
      RouteStops.select(ctx, { id: routeStops.id, name: routeStops.name })
        .where(eq(routeStops.id, stopId ?? 0), eq(routeStops.routeId, routeId))
        .limit(1),
    ),
    levels: b.read(Routes.select(ctx, { levels: routes.levels }).where(eq(routes.id, routeId)).limit(1)),
    rides: b.read(
      RouteStudents.select(ctx, { id: routeStudents.id })
        .where(eq(routeStudents.routeId, routeId), eq(routeStudents.studentId, studentId), riding(routeStudents, date))
        .limit(1),
    ),
  }));
  const [day] = read.results.get(read.slots.day);
  const [student] = read.results.get(read.slots.student);
  if (!day) throw notFound(m`Route ${routeId} not found`);
  if (!student) throw notFound(m`Student ${studentId} not found`);
  assertRuns(read.calendar, day, date);
  const [stop] = read.results.get(read.slots.stop);
  const rides = read.results.get(read.slots.rides).length > 0;
  const levels = read.results.get(read.slots.levels)[0]?.levels ?? [];
  return { day, student, stop, rides, levels };
}

/** The seat a confirmed join takes: one conditional UPDATE of the day's row, and its guard. */
export function takeSeat(ctx: SchoolCtx, day: RouteDay, dayId: number, date: string) {
  const vehicleSeats = sql`(${Transports.pick(ctx, transports.seats, eq(transports.id, day.transportId))})`;
  const left = sql`coalesce(${routeAvailabilities.seats}, ${vehicleSeats}) - ${baseRiders(ctx, routeAvailabilities.routeId, date)} - ${routeAvailabilities.taken} > 0`;
  return [
    ...RouteAvailabilities.update(
      ctx,
      and(eq(routeAvailabilities.id, dayId), left),
      { taken: sql`${routeAvailabilities.taken} + 1` },
      "take-seat",
    ),
    guardSeat(ctx),
  ];
}

const guardSeat = (ctx: SchoolCtx) => guard(ctx.deps.db);

/** Frees a seat a join took. */
export const freeSeat = (ctx: SchoolCtx, dayId: number) =>
  RouteAvailabilities.update(
    ctx,
    and(eq(routeAvailabilities.id, dayId), gt(routeAvailabilities.taken, 0)),
    { taken: sql`${routeAvailabilities.taken} - 1` },
    "free-seat",
  );

const noSeats = (day: RouteDay, date: string) => conflict(m`No seats left on ${day.routeName} on ${date}`);

export async function createRouteAvailabilityStudent(ctx: SchoolCtx, { body }: InputOf<typeof createRoute.route>) {
  const { routeId, date, studentId, kind } = body;
  const { day, student, stop, rides, levels } = await readForChange(ctx, routeId, date, studentId, body.stopId);
  if (kind === "join") {
    // Joining for a day is riding: the rule every rider write keeps.
    mayRide({ name: day.routeName, levels }, student);
    if (body.stopId === undefined)
      throw unprocessable(m`A join needs the stop (stopId) where the student boards or leaves`);
    if (!stop) throw unprocessable(m`Stop ${body.stopId} is not a stop of ${day.routeName}`);
    if (rides) throw conflict(m`${student.name} already rides ${day.routeName} on ${date}`);
  } else if (!rides) {
    throw unprocessable(m`${student.name} does not ride ${day.routeName} on ${date}`);
  }
  const confirmed = body.confirmed ?? true;
  const dayId = await dayRow(ctx, routeId, date);
  const batch = new Batch(ctx);
  if (kind === "join" && confirmed) batch.add(...takeSeat(ctx, day, dayId, date));
  batch.add(...nextVersion(ctx, dayId));
  batch.add(
    ...RouteAvailabilityStudents.insert(ctx, {
      routeAvailabilityId: dayId,
      studentId,
      kind,
      stopId: kind === "join" ? (body.stopId ?? null) : null,
      reason: body.reason ?? null,
      confirmed,
    }),
  );
  const id = RouteAvailabilityStudents.insertedId();
  batch.add(stampVersion(ctx, id, dayId));
  if (confirmed) batch.add(listChange(ctx, dayId, studentId, kind === "join" ? "added" : "away", body.reason ?? null));
  const created = batch.read(changes.readOne(ctx, id));
  try {
    const [row] = (await batch.commit({ conflict: m`The student already has a change on this route and date` })).get(
      created,
    );
    if (!row) throw new Error("the created change was not read back");
    return changes.toRecord(ctx, row);
  } catch (err) {
    if (err instanceof GuardFailed) throw noSeats(day, date);
    throw err;
  }
}
export const createRouteAvailabilityStudentOperation = operation(createRoute.route, createRouteAvailabilityStudent);

const updateRoute = changes.update({
  access: permissions.listWrite,
  input: z.object({
    reason: Reason,
    stopId: recordId().optional().openapi({ description: "A join's stop (a stop of the route)" }),
    confirmed: z.boolean().optional().openapi({ description: "Only confirmed changes move seats and the list" }),
  }),
  errors: [422],
  examples: { 422: "Stop 7 is not a stop of North loop" },
  summary: "Change a day's change: its reason, a join's stop, whether it is confirmed",
});

export async function updateRouteAvailabilityStudent(
  ctx: SchoolCtx,
  { params, body }: InputOf<typeof updateRoute.route>,
) {
  const row = await changes.find(ctx, params.id);
  const { day, stop } = await readForChange(ctx, row.routeId, row.date, row.studentId, body.stopId);
  if (body.stopId !== undefined) {
    if (row.kind !== "join") throw unprocessable(m`Only a join has a stop`);
    if (!stop) throw unprocessable(m`Stop ${body.stopId} is not a stop of ${day.routeName}`);
  }
  const confirming = body.confirmed === true && !row.confirmed;
  const unconfirming = body.confirmed === false && row.confirmed;
  const batch = new Batch(ctx);
  if (row.kind === "join" && confirming) batch.add(...takeSeat(ctx, day, row.routeAvailabilityId, row.date));
  if (row.kind === "join" && unconfirming) batch.add(...freeSeat(ctx, row.routeAvailabilityId));
  batch.add(...nextVersion(ctx, row.routeAvailabilityId));
  batch.add(
    ...changes.writes.update(ctx, params.id, {
      ...(body.reason === undefined ? {} : { reason: body.reason }),
      ...(body.stopId === undefined ? {} : { stopId: body.stopId }),
      ...(body.confirmed === undefined ? {} : { confirmed: body.confirmed }),
    }),
  );
  const what = confirming
    ? row.kind === "join"
      ? "added"
      : "away"
    : unconfirming
      ? row.kind === "join"
        ? "removed"
        : "back"
      : body.stopId !== undefined
        ? "stop"
        : undefined;
  if (what) batch.add(listChange(ctx, row.routeAvailabilityId, row.studentId, what, body.reason ?? row.reason));
  try {
    await changes.commit(ctx, params.id, batch);
  } catch (err) {
    if (err instanceof GuardFailed) throw noSeats(day, row.date);
    throw err;
  }
}
export const updateRouteAvailabilityStudentOperation = operation(updateRoute.route, updateRouteAvailabilityStudent);

const deleteRoute = changes.delete({
  access: permissions.listWrite,
  summary: "Delete a day's change (a confirmed join gives its seat back)",
});

export async function deleteRouteAvailabilityStudent(ctx: SchoolCtx, { params }: InputOf<typeof deleteRoute.route>) {
  const row = await changes.find(ctx, params.id);
  const batch = new Batch(ctx);
  batch.add(...nextVersion(ctx, row.routeAvailabilityId));
  batch.add(...changes.writes.delete(ctx, params.id));
  if (row.confirmed) {
    if (row.kind === "join") batch.add(...freeSeat(ctx, row.routeAvailabilityId));
    batch.add(listChange(ctx, row.routeAvailabilityId, row.studentId, row.kind === "join" ? "removed" : "back", null));
  }
  await changes.commit(ctx, params.id, batch);
}
export const deleteRouteAvailabilityStudentOperation = operation(deleteRoute.route, deleteRouteAvailabilityStudent);
