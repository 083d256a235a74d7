/**
 * Booking (`POST /api/v1/time-slot/{id}/appointment`) and cancelling (`PUT
 * /api/v1/time-slot/appointment/{id}/cancel`) an appointment, and the list of them.
 *
 * A guardian (or their delegate today) books a slot of a published session for one of their
 * children; staff for any child. One request may book consecutive slots with several teachers of the
 * child on one day (one **visit**): all of them or none. The rules:
 * - a slot holds its capacity: ONE conditional UPDATE takes a place in every slot of the visit
 *   (`booked < capacity`, in the future, session published), and a guard aborts the batch unless it
 *   took them all: ten families racing for the last place give exactly one booking;
 * - one visit per family per session (the session's `bookingsPerFamily`): ONE conditional INSERT of
 *   the visit's appointments (`WHERE` the family's live visits are fewer), guarded likewise;
 * - no slot in the past or on a holiday, no slot of an unpublished session (409), no child the
 *   session's task was not sent to.
 * Two D1 round trips: one read (slots and session, the child and their guardians, the caller's
 * delegations, the school and its holidays), one batch (the places, the appointments and their audit
 * rows, the task copy the booking completes, the notice, the answer read back). The answer carries
 * an iCalendar invite (./ical.ts). Cancelling cancels the visit and gives its places back.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { columnsOf } from "../../db/query";
import { Appointments, appointments, Sessions, sessions, TimeSlots, timeSlots } from "../../db/schema/appointment";
import { Schools, schools } from "../../db/schema/core";
import { SchoolHolidayCycles, schoolHolidayCycles } from "../../db/schema/holiday-cycle";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { TaskRecipients, taskRecipients } from "../../db/schema/task";
import { and, eq, gt, isNull, or, type SQL, sql } from "../../db/sql";
import { abortIf, GuardFailed, guard, guardCount } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { m } from "../../lib/message";
import { idFilter, idList } from "../../lib/params";
import { defineResource, type Filters, IdParams, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { actedForBy, delegationsHere } from "../delegate/api";
import { isHoliday } from "../school-schedule/api";
import { bookingCompletes, bookingsCancelled, notifyAll, toRecipients } from "../task/api";
import { AppointmentRecord, actingContext, visibleAppointment } from "./common";
import { inviteOf } from "./ical";
import { permissions } from "./permissions";
import { appointmentSays, BOOKING_REFUSALS, MAX_GAP_MINUTES } from "./refusals";

export const MAX_VISIT_SLOTS = 5;

const appointmentFields = {
  ...columnsOf(appointments),
  date: timeSlots.date,
  start: timeSlots.start,
  end: timeSlots.end,
  startsAt: timeSlots.startsAt,
  endsAt: timeSlots.endsAt,
  teacherId: timeSlots.teacherId,
};
type AppointmentRow = typeof appointments.$inferSelect & {
  date: string;
  start: string;
  end: string;
  startsAt: string;
  endsAt: string;
  teacherId: number | null;
};

const toAppointment = (row: AppointmentRow): z.output<typeof AppointmentRecord> => ({
  ...timestamps(row),
  slotId: row.slotId,
  sessionId: row.sessionId,
  studentId: row.studentId,
  familyId: row.familyId,
  visit: row.visit,
  status: row.status,
  bookedBy: row.bookedBy,
  bookedFor: row.bookedFor,
  note: row.note,
  cancelledAt: row.cancelledAt,
  cancelledBy: row.cancelledBy,
  slot: {
    date: row.date,
    start: row.start,
    end: row.end,
    startsAt: row.startsAt,
    endsAt: row.endsAt,
    teacherId: row.teacherId,
  },
});

/** Appointments with their slots, as the caller may read them. */
const withSlots = (ctx: SchoolCtx) =>
  Appointments.select(ctx, appointmentFields).join(TimeSlots, eq(timeSlots.id, appointments.slotId));

export const appointment = defineResource({
  name: "appointment",
  plural: "appointments",
  label: m`Appointment`,
  path: "/api/v1/time-slot/appointment",
  tag: "Permissions and tasks",
  scope: "school",
  module: "appointments",
  data: Appointments,
  record: AppointmentRecord,
  view: { fields: appointmentFields, join: (q) => q.join(TimeSlots, eq(timeSlots.id, appointments.slotId)) },
  toRecord: (_ctx, row) => toAppointment(row),
  visibleTo: (ctx) => visibleAppointment(ctx),
  context: actingContext,
});

const filters = {
  sessionId: {
    schema: idFilter("The appointments of this session"),
    where: (_ctx: Ctx, v: number) => eq(appointments.sessionId, v),
    example: "1",
  },
  studentId: {
    schema: idFilter("The appointments of this child"),
    where: (_ctx: Ctx, v: number) => eq(appointments.studentId, v),
    example: "2001",
  },
  slotId: {
    schema: idFilter("The appointments of this slot"),
    where: (_ctx: Ctx, v: number) => eq(appointments.slotId, v),
    example: "1",
  },
  status: {
    schema: z.enum(["booked", "cancelled"]).optional().openapi({ description: "Only booked, or only cancelled ones" }),
    where: (_ctx: Ctx, v: "booked" | "cancelled") => eq(appointments.status, v),
    example: "booked",
  },
} satisfies Filters;

export const listAppointments = appointment.list({
  access: permissions.read,
  filters,
  defaultOrder: [
    { by: appointments.createdAt, desc: true },
    { by: appointments.id, desc: true },
  ],
  summary: "List appointments (paginated), newest first",
  description:
    "appointment.manage: every appointment of the school; a family its children's (and those it booked); a teacher " +
    "those in their own slots.",
});

// ---- Book ---------------------------------------------------------------------------------------

const BookBody = z
  .object({
    studentId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ example: 2001 }),
    alsoSlotIds: idList({ max: MAX_VISIT_SLOTS - 1, what: "Time slot" })
      .optional()
      .openapi({
        description: `More slots for the same visit: consecutive (at most ${MAX_GAP_MINUTES} minutes apart), the same day, each with another teacher; all booked or none`,
      }),
    note: text({ max: 500 }).optional().openapi({ example: "We would like to talk about reading" }),
  })
  .strict();

const Booking = AppointmentRecord.extend({
  appointments: z.array(AppointmentRecord).openapi({ description: "Every appointment of the visit, in time order" }),
  ics: z.string().openapi({ description: "An iCalendar (RFC 5545) invite of the visit, in the school's time zone" }),
}).openapi("Booking");

const bookRoute = defineRoute({
  method: "post",
  path: "/api/v1/time-slot/{id}/appointment",
  tag: "Permissions and tasks",
  operationId: "createAppointment",
  summary: "Book a time slot (create an appointment), and more consecutive slots of the visit",
  description:
    "A guardian (or their delegate) for one of their children (another child: 404), staff for any. A slot of an " +
    "unpublished session: 409. Refused with 422: a slot in the past or on a holiday, a full slot, a family that holds " +
    "its bookings in the session already, a child the session's task was not sent to, slots of a visit that are not " +
    "consecutive with different teachers on one day. Every slot of the visit, or none. Completes the child's copy of " +
    "the session's task. 201: the appointment, the visit, and its iCalendar invite.",
  access: permissions.book,
  module: "appointments",
  audit: "appointment",
  errors: [409, 422],
  examples: BOOKING_REFUSALS,
  request: { params: IdParams, body: jsonBody(BookBody, "AppointmentCreate") },
  responses: { 201: json(Booking, "The appointment booked") },
});

const DAY_MS = 86_400_000;

/**
 * `time_slot.id` is one of `ids` (a visit's: at most MAX_VISIT_SLOTS), each a rowid lookup. (As
 * `id IN json_each(...)` the planner would rather walk the school's slots by its index.) The ids
 * travel as one JSON text, picked by position.
 */
function slotIn(ids: readonly number[]): SQL {
  const json = JSON.stringify(ids);
  return or(...ids.map((_, i) => sql`${timeSlots.id} = json_extract(${json}, ${`$[${i}]`})`)) ?? sql`0`;
}

/** What a booking reads, in ONE round trip. */
async function bookingSnapshot(ctx: SchoolCtx, slotIds: number[], studentId: number) {
  const now = ctx.deps.clock.now();
  const batch = new Batch(ctx);
  const slots = batch.read(
    TimeSlots.select(ctx, {
      id: timeSlots.id,
      sessionId: timeSlots.sessionId,
      teacherId: timeSlots.teacherId,
      date: timeSlots.date,
      start: timeSlots.start,
      end: timeSlots.end,
      startsAt: timeSlots.startsAt,
      endsAt: timeSlots.endsAt,
      capacity: timeSlots.capacity,
      booked: timeSlots.booked,
      status: sessions.status,
      taskId: sessions.taskId,
      title: sessions.title,
      location: sessions.location,
      // Whether the child is a recipient of the session's task, and whether its task names children at all.
      invited: sql<number>`${TaskRecipients.exists(ctx, eq(taskRecipients.taskId, sessions.taskId), eq(taskRecipients.studentId, studentId))}`,
      forChildren: sql<number>`${TaskRecipients.exists(ctx, eq(taskRecipients.taskId, sessions.taskId), sql`${taskRecipients.studentId} IS NOT NULL`)}`,
    })
      .join(Sessions, eq(sessions.id, timeSlots.sessionId))
      .where(slotIn(slotIds)),
  );
  const student = batch.read(
    Students.select(ctx, {
      id: students.id,
      familyId: students.familyId,
      firstName: students.firstName,
      lastName: students.lastName,
    }).where(eq(students.id, studentId), isNull(students.deletedAt)),
  );
  const guardianUsers = batch.read(
    Guardians.select(ctx, { userId: parents.userId })
      .join(Parents, eq(parents.id, guardians.parentId))
      .where(eq(guardians.studentId, studentId)),
  );
  const manager = ctx.can(permissions.manage);
  const delegations = !manager && ctx.userId !== null ? batch.read(delegationsHere(ctx, ctx.userId, now)) : undefined;
  const school = batch.read(
    Schools.select(ctx, { name: schools.name, timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)),
  );
  // The school's holidays from yesterday on (a school has few): the slots' days are checked against them.
  const cycles = batch.read(
    SchoolHolidayCycles.select(ctx, {
      start: schoolHolidayCycles.startHolidays,
      end: schoolHolidayCycles.endHolidays,
    }).where(gt(schoolHolidayCycles.endHolidays, new Date(now.getTime() - DAY_MS).toISOString())),
  );
  const r = await batch.commit();
  return {
    slots: r.get(slots),
    student: r.get(student)[0],
    guardians: r.get(guardianUsers).map((g) => g.userId),
    acted: manager || ctx.userId === null ? null : actedForBy(ctx.userId, delegations ? r.get(delegations) : [], now),
    school: r.get(school)[0] ?? { name: "", timeZone: "UTC" },
    cycles: r.get(cycles),
  };
}

type Snapshot = Awaited<ReturnType<typeof bookingSnapshot>>;
type SlotRow = Snapshot["slots"][number];

/** The visit's slots in time order, checked: one session, one day, consecutive, a teacher each. */
function visitOf(snapshot: Snapshot, slotIds: number[]): SlotRow[] {
  const missing = slotIds.filter((id) => !snapshot.slots.some((s) => s.id === id));
  if (missing.length) {
    const ids = missing.join(", ");
    throw notFound(missing.length > 1 ? m`Time slots ${ids} not found` : m`Time slot ${ids} not found`);
  }
  const slots = [...snapshot.slots].sort((a, b) => a.startsAt.localeCompare(b.startsAt));
  const [first, ...rest] = slots;
  if (!first) throw notFound(m`Time slot ${slotIds[0]} not found`);
  if (rest.some((s) => s.sessionId !== first.sessionId)) throw unprocessable(appointmentSays.visitSessions);
  if (rest.some((s) => s.date !== first.date)) throw unprocessable(appointmentSays.visitDays);
  const teachers = slots.map((s) => s.teacherId ?? 0);
  if (slots.length > 1 && new Set(teachers).size !== teachers.length) {
    throw unprocessable(appointmentSays.visitTeachers);
  }
  slots.forEach((s, i) => {
    const before = slots[i - 1];
    if (!before) return;
    const gap = (Date.parse(s.startsAt) - Date.parse(before.endsAt)) / 60_000;
    if (gap < 0) throw unprocessable(appointmentSays.visitOverlap(before.id, s.id));
    if (gap > MAX_GAP_MINUTES) throw unprocessable(appointmentSays.visitGap(before.id, s.id, gap, MAX_GAP_MINUTES));
  });
  return slots;
}

/**
 * The notice of a booking or a cancellation to the child's family: every guardian, but the one who
 * acted when a family member did (they have the answer).
 */
function familyNotice(
  ctx: SchoolCtx,
  title: { en: string; es: string },
  slot: { title: string; date: string; start: string },
  child: { id: number; firstName: string },
  about: number | SQL<number>,
  byFamily: boolean,
) {
  return toRecipients(
    {
      category: "tasks",
      title,
      body: {
        en: `${slot.title}: ${slot.date} ${slot.start} for ${child.firstName}`,
        es: `${slot.title}: ${slot.date} ${slot.start} para ${child.firstName}`,
      },
      about: { entity: "appointment", id: about },
    },
    { studentIds: [child.id], userIds: [], except: byFamily && ctx.userId !== null ? [ctx.userId] : [] },
  );
}

export async function createAppointment(ctx: SchoolCtx, { params, body }: InputOf<typeof bookRoute>) {
  const slotIds = [params.id, ...(body.alsoSlotIds ?? []).filter((id) => id !== params.id)];
  const snapshot = await bookingSnapshot(ctx, slotIds, body.studentId);
  const slots = visitOf(snapshot, slotIds);
  const student = snapshot.student;
  if (!student) throw notFound(m`Student ${body.studentId} not found`);
  // A family books for its own children (a delegate for the parent's); another child is not theirs to see.
  let bookedFor: number | null = null;
  if (snapshot.acted !== null) {
    const through = snapshot.guardians.filter((u) => snapshot.acted?.includes(u));
    if (through.length === 0) throw notFound(m`Student ${body.studentId} not found`);
    bookedFor = through.includes(ctx.userId ?? 0) ? null : (through[0] ?? null);
  }
  const [first] = slots;
  if (!first) throw notFound(m`Time slot ${params.id} not found`);
  if (first.status !== "published") throw conflict(appointmentSays.notBookable(first.sessionId));
  const now = ctx.deps.clock.now();
  const past = slots.find((s) => Date.parse(s.startsAt) <= now.getTime());
  if (past) throw unprocessable(appointmentSays.slotPast(past));
  if (isHoliday(first.date, snapshot.school.timeZone, snapshot.cycles)) {
    throw unprocessable(appointmentSays.holiday(first.date));
  }
  if (first.forChildren === 1 && first.invited !== 1) {
    throw unprocessable(appointmentSays.notInvited(body.studentId));
  }
  const full = slots.find((s) => s.booked >= s.capacity);
  if (full) throw unprocessable(appointmentSays.slotFull(full));

  // Named after its first slot too: unique either way, and a replay with another slot is another visit.
  const visit = `${first.id}-${crypto.randomUUID()}`;
  const at = now.toISOString();
  const ids = slots.map((s) => s.id);
  // A family's bookings in the session (index appointment_family_idx); a child of no family counts alone (appointment_student_session_idx).
  const family =
    student.familyId !== null
      ? eq(appointments.familyId, student.familyId)
      : and(eq(appointments.studentId, student.id), isNull(appointments.familyId));
  const visits = Appointments.select(ctx, { n: sql<number>`count(DISTINCT ${appointments.visit})` }).where(
    eq(appointments.sessionId, first.sessionId),
    eq(appointments.status, "booked"),
    family,
  );
  const limit = Sessions.pick(ctx, sessions.bookingsPerFamily, eq(sessions.id, first.sessionId));
  const firstId = sql<number>`(${Appointments.pick(ctx, sql`min(${appointments.id})`, eq(appointments.visit, visit))})`;
  // The family is told when someone else booked for it (staff at the desk, a delegate for the parent);
  // a guardian who books has the confirmation in the answer, and the child's other guardians are told.
  const byGuardian = snapshot.acted !== null && bookedFor === null;
  const sending = notifyAll(
    ctx,
    familyNotice(ctx, { en: "Appointment booked", es: "Cita reservada" }, first, student, firstId, byGuardian),
  );
  const batch = new Batch(ctx).add(
    // The capacity check inside the write: a place in every slot, or the batch aborts.
    ...TimeSlots.update(
      ctx,
      and(
        slotIn(ids),
        sql`${timeSlots.booked} < ${timeSlots.capacity}`,
        gt(timeSlots.startsAt, at),
        Sessions.exists(ctx, eq(sessions.id, timeSlots.sessionId), eq(sessions.status, "published")),
      ),
      { booked: sql`${timeSlots.booked} + 1` },
      "book",
    ),
    guardCount(ctx.deps.db, ids.length),
    // The family rule inside the write: the visit's appointments only while the family holds fewer visits.
    ...Appointments.insertMany(
      ctx,
      Appointments.insertFrom(
        ctx,
        (row) =>
          sql`SELECT ${row({
            slotId: sql`j.value`,
            sessionId: first.sessionId,
            studentId: student.id,
            familyId: student.familyId,
            visit,
            status: "booked",
            bookedBy: ctx.userId,
            bookedFor,
            note: body.note ?? null,
          })} FROM json_each(${JSON.stringify(ids)}) j WHERE (${visits}) < (${limit}) ORDER BY j.key`,
        at,
      ),
      eq(appointments.visit, visit),
      ["slotId", "studentId", "visit", "status", "bookedFor"],
    ),
    abortIf(
      ctx.deps.db,
      sql`(${Appointments.select(ctx, { n: sql<number>`count(*)` }).where(eq(appointments.visit, visit))}) <> ${ids.length}`,
    ),
    ...bookingCompletes(ctx, {
      taskId: first.taskId,
      studentId: student.id,
      appointmentId: firstId,
      completedFor: bookedFor,
    }),
    ...sending.statements,
  );
  const back = batch.read(withSlots(ctx).where(eq(appointments.visit, visit)).orderBy(sql`${timeSlots.startsAt} asc`));
  let rows: AppointmentRow[];
  try {
    rows = (await batch.commit({ conflict: appointmentSays.hasSlot(student.id) })).get(back);
  } catch (err) {
    if (err instanceof GuardFailed) return refuseBooking(ctx, ids, first.sessionId, family);
    throw err;
  }
  await sending.dispatch();
  const appointmentsOfVisit = rows.map(toAppointment);
  const mine = appointmentsOfVisit.find((a) => a.slotId === params.id) ?? appointmentsOfVisit[0];
  if (!mine) throw new Error("appointment: the booked rows were not read back");
  return {
    ...mine,
    appointments: appointmentsOfVisit,
    ics: inviteOf(snapshot.school, first, student, appointmentsOfVisit, now, "CONFIRMED"),
  };
}

/** Why a booking's guarded write matched nothing (a third read, only then): the slot filled up, or the family's bookings. */
async function refuseBooking(
  ctx: SchoolCtx,
  ids: number[],
  sessionId: number,
  family: ReturnType<typeof and>,
): Promise<never> {
  const batch = new Batch(ctx);
  const slots = batch.read(
    TimeSlots.select(ctx, { id: timeSlots.id, booked: timeSlots.booked, capacity: timeSlots.capacity }).where(
      slotIn(ids),
    ),
  );
  const visits = batch.read(
    Appointments.select(ctx, { n: sql<number>`count(DISTINCT ${appointments.visit})` }).where(
      eq(appointments.sessionId, sessionId),
      eq(appointments.status, "booked"),
      family,
    ),
  );
  const limit = batch.read(
    Sessions.select(ctx, { limit: sessions.bookingsPerFamily, status: sessions.status }).where(
      eq(sessions.id, sessionId),
    ),
  );
  const r = await batch.commit();
  const full = r.get(slots).find((s) => s.booked >= s.capacity);
  if (full) throw unprocessable(appointmentSays.slotTaken(full.id));
  const [session] = r.get(limit);
  if (session && session.status !== "published") throw conflict(appointmentSays.sessionNotPublished(sessionId));
  const held = r.get(visits)[0]?.n ?? 0;
  if (session && held >= session.limit) throw unprocessable(appointmentSays.familyLimit(held, session.limit));
  throw conflict(appointmentSays.bookingRaced);
}
export const createAppointmentOperation = operation(bookRoute, createAppointment);

// ---- Cancel -------------------------------------------------------------------------------------

const cancelRoute = defineRoute({
  method: "put",
  path: "/api/v1/time-slot/appointment/{id}/cancel",
  tag: "Permissions and tasks",
  operationId: "cancelAppointment",
  summary: "Cancel an appointment (its whole visit), giving its places back",
  description:
    "A family cancels its own children's appointments up to the session's cut-off (cancelHours before the slot; after " +
    "it: 422, call the school); staff cancel any at any time. Another family's appointment: 404. Cancelled already: " +
    "409. The child's copy of the session's task goes back to viewed. 200: the appointment, the visit, and an " +
    "iCalendar update that cancels the invite.",
  access: permissions.book,
  module: "appointments",
  audit: "appointment",
  context: actingContext,
  errors: [409, 422],
  examples: {
    409: [
      { name: "cancelled", summary: "Cancelled already", detail: appointmentSays.cancelledAlready(42) },
      {
        name: "raced",
        summary: "Cancelled meanwhile (by the other guardian, or staff)",
        detail: appointmentSays.cancelledMeanwhile(42),
      },
    ],
    422: appointmentSays.tooLateToCancel(24, "2027-03-11T22:00:00.000Z"),
  },
  request: { params: IdParams },
  responses: { 200: json(Booking, "The appointment, cancelled") },
});

export async function cancelAppointment(ctx: SchoolCtx, { params }: InputOf<typeof cancelRoute>) {
  const read = new Batch(ctx);
  const found = read.read(
    withSlots(ctx)
      .join(Sessions, eq(sessions.id, appointments.sessionId))
      .select({
        ...appointmentFields,
        cancelHours: sessions.cancelHours,
        title: sessions.title,
        location: sessions.location,
        firstName: students.firstName,
        lastName: students.lastName,
      })
      .join(Students, eq(students.id, appointments.studentId))
      .where(eq(appointments.id, params.id), visibleAppointment(ctx)),
  );
  const school = read.read(
    Schools.select(ctx, { name: schools.name, timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)),
  );
  // The visit's live slots (index appointment_visit_idx), whose places the cancellation gives back.
  const visitSlots = read.read(
    Appointments.select(ctx, { slotId: appointments.slotId }).where(
      sql`${appointments.visit} = (${Appointments.pick(ctx, appointments.visit, eq(appointments.id, params.id))})`,
      eq(appointments.status, "booked"),
    ),
  );
  const r = await read.commit();
  const [a] = r.get(found);
  if (!a) throw notFound(m`Appointment ${params.id} not found`);
  if (a.status !== "booked") throw conflict(appointmentSays.cancelledAlready(params.id));
  const now = ctx.deps.clock.now();
  const cutOff = Date.parse(a.startsAt) - a.cancelHours * 3_600_000;
  if (!ctx.can(permissions.manage) && now.getTime() > cutOff) {
    throw unprocessable(appointmentSays.tooLateToCancel(a.cancelHours, new Date(cutOff).toISOString()));
  }
  const at = now.toISOString();
  const live = and(eq(appointments.visit, a.visit), eq(appointments.status, "booked"));
  // The family is told when the school cancelled it; when one of them did, the child's other guardians are.
  const byStaff = ctx.can(permissions.manage);
  const sending = notifyAll(
    ctx,
    familyNotice(
      ctx,
      { en: "Appointment cancelled", es: "Cita cancelada" },
      a,
      { id: a.studentId, firstName: a.firstName },
      params.id,
      !byStaff,
    ),
  );
  const batch = new Batch(ctx).add(
    // The places first (read from the live appointments), then the appointments: a second cancel finds none.
    ...TimeSlots.update(
      ctx,
      and(
        slotIn(r.get(visitSlots).map((v) => v.slotId)),
        Appointments.exists(ctx, eq(appointments.slotId, timeSlots.id), live),
      ),
      { booked: sql`${timeSlots.booked} - 1` },
      "unbook",
    ),
    ...bookingsCancelled(ctx, Appointments.pick(ctx, appointments.id, live)),
    ...Appointments.update(ctx, live, { status: "cancelled", cancelledAt: at, cancelledBy: ctx.userId }, "cancel"),
    guard(ctx.deps.db),
    ...sending.statements,
  );
  const back = batch.read(
    withSlots(ctx).where(eq(appointments.visit, a.visit)).orderBy(sql`${timeSlots.startsAt} asc`),
  );
  let rows: AppointmentRow[];
  try {
    rows = (await batch.commit()).get(back);
  } catch (err) {
    if (err instanceof GuardFailed) throw conflict(appointmentSays.cancelledMeanwhile(params.id));
    throw err;
  }
  await sending.dispatch();
  const visit = rows.map(toAppointment);
  const mine = visit.find((v) => v.id === params.id);
  if (!mine) throw notFound(m`Appointment ${params.id} not found`);
  return {
    ...mine,
    appointments: visit,
    ics: inviteOf(
      r.get(school)[0] ?? { name: "", timeZone: "UTC" },
      { title: a.title, location: a.location },
      { firstName: a.firstName, lastName: a.lastName },
      visit,
      now,
      "CANCELLED",
    ),
  };
}
export const cancelAppointmentOperation = operation(cancelRoute, cancelAppointment);
