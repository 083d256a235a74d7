/**
 * Session days (`/api/v1/session-day`): a date of a session and its time windows (school-local
 * `HH:mm`, each of a teacher or of nobody in particular). The slots come from the windows when the
 * session's slots are generated (`PUT /api/v1/session/{id}/slots`).
 *
 * A window ends after it starts; two windows of one teacher (or two without a teacher) do not
 * overlap: a 400 naming the window. A day is not in the past nor on a holiday (422), once per
 * session (409), and its teachers are the school's (404).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { columnsOf } from "../../db/query";
import {
  SessionDays,
  Sessions,
  sessionDays,
  sessions,
  TimeSlots,
  timeSlots,
  type Window,
} from "../../db/schema/appointment";
import { Teachers, teachers } from "../../db/schema/teacher";
import { and, eq, gt, ne, sql } from "../../db/sql";
import { abortIf, inList } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { conflict, notFound, type ProblemCase, unprocessable } from "../../lib/errors";
import { addIssue, m } from "../../lib/message";
import type { OrderKey } from "../../lib/pagination";
import { idFilter } from "../../lib/params";
import { defineResource, type Filters, RecordBase, timestamps } from "../../lib/resource";
import { dateIn } from "../../lib/zoned-time";
import { calendarOf, calendarReads, isHoliday } from "../school-schedule/api";
import { actingContext, Day, inVisibleSession, Time } from "./common";
import { windowProblems } from "./generate";
import { permissions } from "./permissions";
import { appointmentSays } from "./refusals";

export const MAX_WINDOWS = 24;

const WindowSchema = z
  .object({
    start: Time,
    end: Time.openapi({ example: "18:00" }),
    teacherId: z
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .nullable()
      .optional()
      .openapi({ description: "The teacher's profile id; none: the window of anyone of the school" }),
  })
  .strict()
  .openapi("SessionWindow");

const Windows = z
  .array(WindowSchema)
  .min(1)
  .max(MAX_WINDOWS)
  .superRefine((windows, issue) => {
    for (const p of windowProblems(windows.map((w) => ({ ...w, teacherId: w.teacherId ?? null })))) {
      addIssue(issue, p.message, p.path);
    }
  })
  .openapi({ description: `The day's windows (1-${MAX_WINDOWS}); a teacher's do not overlap` });

const DayRecord = RecordBase.extend({
  sessionId: z.number().int(),
  date: Day,
  windows: z
    .array(z.object({ start: Time, end: Time, teacherId: z.number().int().nullable() }))
    .openapi({ description: "The day's windows slots are generated in: school-local times, and whose they are" }),
  slots: z.number().int().openapi({ description: "Its generated slots" }),
});

const slotCount = sql<number>`(SELECT count(*) FROM appointment_slot s WHERE s.day_id = "appointment_day"."id")`;

export const day = defineResource({
  name: "sessionDay",
  plural: "sessionDays",
  label: m`Session day`,
  path: "/api/v1/session-day",
  tag: "Permissions and tasks",
  scope: "school",
  module: "appointments",
  data: SessionDays,
  record: DayRecord,
  view: { fields: { ...columnsOf(sessionDays), slots: slotCount } },
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    sessionId: row.sessionId,
    date: row.date,
    windows: row.windows.map((w) => ({ start: w.start, end: w.end, teacherId: w.teacherId ?? null })),
    slots: row.slots,
  }),
  visibleTo: (ctx) => inVisibleSession(ctx, sessionDays.sessionId),
  // Whom a family member acts for today: a delegate sees the sessions of the parent's children.
  context: actingContext,
  conflictMessage: appointmentSays.dayTwice,
});

const filters = {
  sessionId: {
    schema: idFilter("The days of this session"),
    where: (_ctx: Ctx, v: number) => eq(sessionDays.sessionId, v),
    example: "1",
  },
  date: {
    schema: schoolDate("Days on this date", "2027-03-12").optional(),
    where: (_ctx: Ctx, v: string) => eq(sessionDays.date, v),
    example: "2027-03-12",
  },
} satisfies Filters;

const ORDER: OrderKey[] = [{ by: sessionDays.date }, { by: sessionDays.id }];

export const listSessionDays = day.list({
  access: permissions.read,
  filters,
  defaultOrder: ORDER,
  summary: "List session days (paginated), by date",
  description:
    "appointment.manage: every day; anyone else the days of the published sessions that concern them (as for sessions).",
});

export const getSessionDay = day.get({ access: permissions.read });

/**
 * A day's checks, in one round trip: its session is the school's (404), its date is neither past
 * nor a holiday (422), its teachers are the school's (404).
 */
async function checked(ctx: SchoolCtx, sessionId: number, date: string | undefined, windows: Window[] | undefined) {
  const batch = new Batch(ctx);
  const found = batch.read(Sessions.select(ctx, { id: sessions.id }).where(eq(sessions.id, sessionId)));
  const school = date ? calendarReads(ctx, batch, date) : undefined;
  const ids = [...new Set((windows ?? []).flatMap((w) => (w.teacherId === null ? [] : [w.teacherId])))];
  const known = ids.length
    ? batch.read(Teachers.select(ctx, { id: teachers.id }).where(inList(teachers.id, ids)))
    : undefined;
  const r = await batch.commit();
  if (r.get(found).length === 0) throw notFound(m`Session ${sessionId} not found`);
  const missing = ids.filter((id) => !(known ? r.get(known) : []).some((t) => t.id === id));
  if (missing.length) {
    const ids = missing.join(", ");
    throw notFound(missing.length > 1 ? m`Teachers ${ids} not found` : m`Teacher ${ids} not found`);
  }
  if (date && school) {
    const { calendar } = calendarOf(r, school);
    const today = dateIn(calendar.timeZone, ctx.deps.clock.now());
    if (date < today) throw unprocessable(appointmentSays.dayPast(date, today));
    if (isHoliday(date, calendar.timeZone, calendar.cycles)) throw unprocessable(appointmentSays.dayHoliday(date));
  }
}

/** A day's date refused: past, or a holiday at the school. */
const DAY_REFUSALS: ProblemCase[] = [
  {
    name: "past",
    summary: "A date before today at the school",
    detail: appointmentSays.dayPast("2026-11-20", "2026-11-23"),
  },
  { name: "holiday", summary: "A holiday of the school's calendar", detail: appointmentSays.dayHoliday("2026-12-24") },
];

const windowsOf = (given: z.output<typeof Windows>): Window[] =>
  given.map((w) => ({ start: w.start, end: w.end, teacherId: w.teacherId ?? null }));

export const createSessionDay = day.create({
  access: permissions.manage,
  input: z.object({
    sessionId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ example: 1 }),
    date: schoolDate("The school-local day of the meetings", "2027-03-12"),
    windows: Windows,
  }),
  values: async (ctx, { body }) => {
    const windows = windowsOf(body.windows);
    await checked(ctx, body.sessionId, body.date, windows);
    return { sessionId: body.sessionId, date: body.date, windows };
  },
  summary: "Add a day with its time windows to a session",
  description:
    "Windows are school-local HH:mm; one that ends before it starts, or two of one teacher that overlap, are a 400 " +
    "naming them. A past date or a holiday: 422; a date the session has: 409. Slots come with PUT /api/v1/session/{id}/slots.",
  errors: [422],
  examples: { 422: DAY_REFUSALS },
});

/** Whether day `id` has booked slots (one read). */
async function hasBookings(ctx: SchoolCtx, id: number): Promise<boolean> {
  const booked = await TimeSlots.select(ctx, { id: timeSlots.id })
    .where(eq(timeSlots.dayId, id), gt(timeSlots.booked, 0))
    .first();
  return booked !== undefined;
}

/** Aborts the batch when day `id` has a booked slot (a booking that came in after the check). */
const abortIfBooked = (ctx: SchoolCtx, id: number, moved?: string) =>
  abortIf(
    ctx.deps.db,
    TimeSlots.exists(
      ctx,
      eq(timeSlots.dayId, id),
      gt(timeSlots.booked, 0),
      moved === undefined ? undefined : ne(timeSlots.date, moved),
    ),
  );

export const updateSessionDay = day.update({
  access: permissions.manage,
  input: z.object({
    date: schoolDate("The school-local day of the meetings", "2027-03-12").optional(),
    windows: Windows.optional(),
  }),
  values: async (ctx, { id, body }) => {
    const current = await SessionDays.find(ctx, id, { sessionId: sessionDays.sessionId, date: sessionDays.date });
    if (!current) throw notFound(m`Session day ${id} not found`);
    const moved = body.date !== undefined && body.date !== current.date;
    if (moved && (await hasBookings(ctx, id))) {
      throw conflict(appointmentSays.dayBookedMove(id));
    }
    const windows = body.windows ? windowsOf(body.windows) : undefined;
    await checked(ctx, current.sessionId, moved ? body.date : undefined, windows);
    return { ...(body.date !== undefined ? { date: body.date } : {}), ...(windows ? { windows } : {}) };
  },
  // A day moved to another date loses its slots (made for the old date): generate them again.
  also: (ctx, { id, body }) =>
    body.date === undefined || typeof id !== "number"
      ? []
      : [
          abortIfBooked(ctx, id, body.date),
          ...TimeSlots.delete(ctx, and(eq(timeSlots.dayId, id), ne(timeSlots.date, body.date))),
        ],
  summary: "Change a session day's date or windows",
  description:
    "New windows shape the slots the next PUT /api/v1/session/{id}/slots generates. A new date removes the day's " +
    "slots (generate them again); for a day with booked slots it is a 409 (cancel them first). A past date or a " +
    "holiday: 422.",
  errors: [409, 422],
  examples: {
    409: [
      { name: "booked", summary: "Moving a day with booked slots", detail: appointmentSays.dayBookedMove(42) },
      { name: "twice", summary: "A date the session has already", detail: appointmentSays.dayTwice },
    ],
    422: DAY_REFUSALS,
  },
});

export const deleteSessionDay = day.delete({
  access: permissions.manage,
  check: async (ctx, { id }) => {
    if (await hasBookings(ctx, id)) throw conflict(appointmentSays.dayBooked(id));
  },
  before: (ctx, { id }) => [abortIfBooked(ctx, id)],
  summary: "Delete a session day without bookings (its slots go with it)",
  description: "A day with booked slots is a 409: cancel them first.",
  errors: [409],
  examples: { 409: appointmentSays.dayBooked(42) },
});
