/**
 * Time slots (`/api/v1/time-slot`): the bookable times of a session, generated from its days'
 * windows (`PUT /api/v1/session/{id}/slots`) or added by hand. A slot has a capacity (families per
 * slot) and counts its live bookings (`booked`); its times and teacher change only while nobody
 * booked it, and its capacity never drops below its bookings. Booking: ./booking.ts.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { columnsOf } from "../../db/query";
import { SessionDays, Sessions, sessionDays, sessions, TimeSlots, timeSlots } from "../../db/schema/appointment";
import { Schools, schools } from "../../db/schema/core";
import { Teachers, teachers } from "../../db/schema/teacher";
import { and, eq, lte, ne, type SQL, sql } from "../../db/sql";
import { GuardFailed } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { conflict, notFound, type ProblemCase, unprocessable } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import type { OrderKey } from "../../lib/pagination";
import { idFilter } from "../../lib/params";
import { defineResource, type Filters, IdParams, nonEmpty, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, jsonBody, noContent, operation } from "../../lib/route";
import { timeIn, zonedInstant } from "../../lib/zoned-time";
import { actingContext, inVisibleSession, SlotRecord, Time, teacherName } from "./common";
import { minutesOf } from "./generate";
import { permissions } from "./permissions";
import { appointmentSays } from "./refusals";

export const slot = defineResource({
  name: "timeSlot",
  plural: "timeSlots",
  label: m`Time slot`,
  path: "/api/v1/time-slot",
  tag: "Permissions and tasks",
  scope: "school",
  module: "appointments",
  data: TimeSlots,
  record: SlotRecord,
  view: { fields: { ...columnsOf(timeSlots), teacherName } },
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    sessionId: row.sessionId,
    sessionDayId: row.dayId,
    teacherId: row.teacherId,
    teacherName: row.teacherName,
    date: row.date,
    start: row.start,
    end: row.end,
    startsAt: row.startsAt,
    endsAt: row.endsAt,
    capacity: row.capacity,
    booked: row.booked,
    available: Math.max(0, row.capacity - row.booked),
  }),
  visibleTo: (ctx) => inVisibleSession(ctx, timeSlots.sessionId),
  // Whom a family member acts for today: a delegate sees the sessions of the parent's children.
  context: actingContext,
});

const filters = {
  sessionId: {
    schema: idFilter("The slots of this session"),
    where: (_ctx: Ctx, v: number) => eq(timeSlots.sessionId, v),
    example: "1",
  },
  sessionDayId: {
    schema: idFilter("The slots of this session day"),
    where: (_ctx: Ctx, v: number) => eq(timeSlots.dayId, v),
    example: "1",
  },
  teacherId: {
    schema: idFilter("The slots of this teacher (profile id)"),
    where: (_ctx: Ctx, v: number) => eq(timeSlots.teacherId, v),
    example: "1",
  },
  date: {
    schema: schoolDate("The slots of this school-local day", "2027-03-12").optional(),
    where: (_ctx: Ctx, v: string) => eq(timeSlots.date, v),
    example: "2027-03-12",
  },
  available: {
    schema: z.enum(["true", "false"]).optional().openapi({
      description:
        "true: bookable now (places left, and it has not started: a booking is refused from its start on); false: full or started",
    }),
    where: (ctx: SchoolCtx, v: "true" | "false") => {
      // Stored instants are ISO strings in UTC (`...Z`), which order as the instants do.
      const now = ctx.deps.clock.now().toISOString();
      return v === "true"
        ? sql`(${timeSlots.booked} < ${timeSlots.capacity} AND ${timeSlots.startsAt} > ${now})`
        : sql`(${timeSlots.booked} >= ${timeSlots.capacity} OR ${timeSlots.startsAt} <= ${now})`;
    },
    example: "true",
  },
} satisfies Filters;

const ORDER: OrderKey[] = [{ by: timeSlots.startsAt }, { by: timeSlots.id }];

export const listTimeSlots = slot.list({
  access: permissions.read,
  filters,
  defaultOrder: ORDER,
  summary: "List time slots (paginated), in time order",
  description:
    "appointment.manage: every slot; anyone else the slots of published sessions, with the places left (never who took them).",
});

export const getTimeSlot = slot.get({ access: permissions.read });

/** The instants of `start`-`end` on the day `dayId`, and the school's zone (one round trip): 404 for another school's day. */
async function onDay(ctx: SchoolCtx, dayId: number, teacherId: number | null | undefined) {
  const batch = new Batch(ctx);
  const d = batch.read(
    SessionDays.select(ctx, { sessionId: sessionDays.sessionId, date: sessionDays.date, capacity: sessions.capacity })
      .join(Sessions, eq(sessions.id, sessionDays.sessionId))
      .where(eq(sessionDays.id, dayId)),
  );
  const school = batch.read(Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)));
  const teacher = teacherId
    ? batch.read(Teachers.select(ctx, { id: teachers.id }).where(eq(teachers.id, teacherId)))
    : undefined;
  const r = await batch.commit();
  const [day] = r.get(d);
  if (!day) throw notFound(m`Session day ${dayId} not found`);
  if (teacher && r.get(teacher).length === 0) throw notFound(m`Teacher ${teacherId ?? undefined} not found`);
  const timeZone = r.get(school)[0]?.timeZone ?? "UTC";
  return { ...day, timeZone };
}

/** The stored times of `start`-`end` on `date` at the school: instants and the wall clocks' labels. */
function timesOf(date: string, start: string, end: string, timeZone: string) {
  const startsAt = zonedInstant(date, start, timeZone);
  const endsAt = zonedInstant(date, end, timeZone);
  if (endsAt.getTime() <= startsAt.getTime()) {
    throw unprocessable(appointmentSays.endsBeforeStart(date, start, end));
  }
  return {
    start: timeIn(timeZone, startsAt),
    end: timeIn(timeZone, endsAt),
    startsAt: startsAt.toISOString(),
    endsAt: endsAt.toISOString(),
  };
}

/** A slot of the same teacher that overlaps on the same day (one read), as a 422. */
async function refuseOverlap(
  ctx: SchoolCtx,
  dayId: number,
  teacherId: number | null,
  times: { startsAt: string; endsAt: string },
  except?: number,
) {
  const other = await TimeSlots.select(ctx, { id: timeSlots.id, start: timeSlots.start, end: timeSlots.end })
    .where(
      eq(timeSlots.dayId, dayId),
      teacherId === null ? sql`${timeSlots.teacherId} IS NULL` : eq(timeSlots.teacherId, teacherId),
      sql`${timeSlots.startsAt} < ${times.endsAt}`,
      sql`${timeSlots.endsAt} > ${times.startsAt}`,
      except === undefined ? undefined : ne(timeSlots.id, except),
    )
    .first();
  if (other) throw unprocessable(appointmentSays.overlaps(other));
}

/** The 422s of a slot's times: another slot of the teacher, or clocks that skip the time (a daylight-saving change). */
const OVERLAP: ProblemCase = {
  name: "overlap",
  summary: "It overlaps another slot of the same teacher that day",
  detail: appointmentSays.overlaps({ id: 117, start: "16:00", end: "16:15" }),
};
const DST_GAP: ProblemCase = {
  name: "clocks",
  // New York's clocks skip 02:00-03:00 that day: 02:30 is read as 03:30, after the end.
  summary: "On a day the clocks skip an hour, the end is not after the start in real time",
  detail: appointmentSays.endsBeforeStart("2027-03-14", "02:30", "03:00"),
};

const endsAfterStart = (v: { start?: string; end?: string }) =>
  v.start === undefined || v.end === undefined || minutesOf(v.end) > minutesOf(v.start);

export const createTimeSlot = slot.create({
  access: permissions.manage,
  input: z
    .object({
      sessionDayId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ example: 1 }),
      start: Time,
      end: Time.openapi({ example: "16:15" }),
      teacherId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).nullable().optional(),
      capacity: z.number().int().min(1).max(50).optional().openapi({ description: "Default: the session's" }),
    })
    .refine(endsAfterStart, { path: ["end"], ...zodMessage(m`Must be after start`) }),
  values: async (ctx, { body }) => {
    const day = await onDay(ctx, body.sessionDayId, body.teacherId);
    const times = timesOf(day.date, body.start, body.end, day.timeZone);
    const teacherId = body.teacherId ?? null;
    await refuseOverlap(ctx, body.sessionDayId, teacherId, times);
    return {
      sessionId: day.sessionId,
      dayId: body.sessionDayId,
      teacherId,
      date: day.date,
      ...times,
      capacity: body.capacity ?? day.capacity,
      booked: 0,
    };
  },
  summary: "Add a time slot to a session day by hand",
  description:
    "School-local start and end on the day's date (end before start: 400). A slot overlapping another of the same " +
    "teacher that day is a 422. Default capacity: the session's.",
  errors: [422],
  examples: { 422: [OVERLAP, DST_GAP] },
});

const UpdateBody = nonEmpty(
  z
    .object({
      start: Time.optional(),
      end: Time.optional(),
      teacherId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).nullable().optional(),
      capacity: z
        .number()
        .int()
        .min(1)
        .max(50)
        .optional()
        .openapi({ description: "Families per slot (1-50), never below its bookings" }),
    })
    .strict(),
).refine(endsAfterStart, { path: ["end"], ...zodMessage(m`Must be after start`) });

const updateRoute = defineRoute({
  method: "put",
  path: "/api/v1/time-slot/{id}",
  tag: "Permissions and tasks",
  operationId: "updateTimeSlot",
  summary: "Change a time slot's times, teacher or capacity",
  ifMatch: slot.ifMatch,
  description:
    "Times and teacher change only while nobody booked the slot (409); the capacity never drops below its bookings (422).",
  access: permissions.manage,
  module: "appointments",
  audit: "time-slot",
  errors: [409, 422],
  examples: {
    409: [
      {
        name: "booked",
        summary: "New times or teacher for a booked slot",
        detail: appointmentSays.slotBookedStays(42),
      },
      { name: "raced", summary: "Booked meanwhile", detail: appointmentSays.slotBookedMeanwhile(42) },
    ],
    422: [
      {
        name: "capacity",
        summary: "A capacity below the slot's bookings",
        detail: appointmentSays.capacityBelowBookings(42, 2),
      },
      OVERLAP,
      DST_GAP,
    ],
  },
  request: { params: IdParams, body: jsonBody(UpdateBody, "TimeSlotUpdate") },
  responses: { 204: noContent },
});

export async function updateTimeSlot(ctx: SchoolCtx, { params, body }: InputOf<typeof updateRoute>) {
  const current = await TimeSlots.find(ctx, params.id);
  if (!current) throw notFound(m`Time slot ${params.id} not found`);
  const moves = body.start !== undefined || body.end !== undefined || body.teacherId !== undefined;
  if (moves && current.booked > 0) throw conflict(appointmentSays.slotBookedStays(params.id));
  if (body.capacity !== undefined && body.capacity < current.booked) {
    throw unprocessable(appointmentSays.capacityBelowBookings(params.id, current.booked));
  }
  let set: Partial<typeof timeSlots.$inferInsert> = {};
  if (moves) {
    const day = await onDay(ctx, current.dayId, body.teacherId);
    const times = timesOf(day.date, body.start ?? current.start, body.end ?? current.end, day.timeZone);
    const teacherId = body.teacherId === undefined ? current.teacherId : body.teacherId;
    await refuseOverlap(ctx, current.dayId, teacherId, times, params.id);
    set = { ...times, teacherId };
  }
  if (body.capacity !== undefined) set.capacity = body.capacity;
  // The checks again in the UPDATE: a booking that came in meanwhile keeps what it booked.
  const guards: SQL[] = [];
  if (moves) guards.push(eq(timeSlots.booked, 0));
  if (body.capacity !== undefined) guards.push(lte(timeSlots.booked, body.capacity));
  try {
    await new Batch(ctx).add(...TimeSlots.updateOne(ctx, params.id, set, { where: and(...guards) })).commit();
  } catch (err) {
    if (err instanceof GuardFailed) throw conflict(appointmentSays.slotBookedMeanwhile(params.id));
    throw err;
  }
}
export const updateTimeSlotOperation = operation(updateRoute, updateTimeSlot);

const deleteRoute = defineRoute({
  method: "delete",
  path: "/api/v1/time-slot/{id}",
  tag: "Permissions and tasks",
  operationId: "deleteTimeSlot",
  summary: "Delete a time slot nobody booked",
  description: "A booked slot is a 409: cancel its bookings first.",
  access: permissions.manage,
  module: "appointments",
  audit: "time-slot",
  errors: [409],
  examples: { 409: appointmentSays.slotBooked(42) },
  request: { params: IdParams },
  responses: { 204: noContent },
});

export async function deleteTimeSlot(ctx: SchoolCtx, { params }: InputOf<typeof deleteRoute>) {
  try {
    await new Batch(ctx).add(...TimeSlots.deleteOne(ctx, params.id, { where: eq(timeSlots.booked, 0) })).commit();
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    if (await TimeSlots.find(ctx, params.id, { id: timeSlots.id })) {
      throw conflict(appointmentSays.slotBooked(params.id));
    }
    throw notFound(m`Time slot ${params.id} not found`);
  }
}
export const deleteTimeSlotOperation = operation(deleteRoute, deleteTimeSlot);
