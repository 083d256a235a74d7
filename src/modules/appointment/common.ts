/**
 * What the appointment operations share: who sees what, the records and their fields.
 *
 * `appointment.manage` (staff) sees every session, day, slot and appointment of the school. Anyone
 * else sees the published sessions that concern them, with their days and slots (how many places
 * are left, never who took them): those whose task reached them or the parent they act for today,
 * and, for a teacher, those in which they have slots. And the appointments of their own children
 * (or the children of the parent they act for), those they booked, and, for a teacher, those in
 * their own slots.
 */
import { z } from "@hono/zod-openapi";
import {
  APPOINTMENT_STATUSES,
  appointments,
  SESSION_STATUSES,
  Sessions,
  sessions,
  TimeSlots,
  timeSlots,
} from "../../db/schema/appointment";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians } from "../../db/schema/student";
import { TaskInbox, taskInbox } from "../../db/schema/task";
import { Teachers, teachers } from "../../db/schema/teacher";
import { and, eq, or, type SQL, type SQLWrapper, sql } from "../../db/sql";
import { inList } from "../../db/write";
import { actedUsers, type SchoolCtx } from "../../lib/context";
import { m, zodMessage } from "../../lib/message";
import { RecordBase } from "../../lib/resource";
import { actedFor, actingLoader } from "../delegate/api";
import { copyJoin } from "../user/api";
import { permissions } from "./permissions";

/** The context loader of routes that read the caller's children: whom a non-manager acts for. */
export const actingContext = actingLoader(permissions.manage);

export { actedUsers };

/** The caller's teacher profile ids in the school (none for anyone else), as a sub-select. */
const ownTeacherIds = (ctx: SchoolCtx) => Teachers.pick(ctx, teachers.id, eq(teachers.userId, ctx.userId ?? 0));

/**
 * A session the caller sees: staff every one, drafts too; anyone else a published one whose task
 * reached them (or the parent they act for: `actingContext`), or in which they have slots.
 */
export const visibleSession = (ctx: SchoolCtx): SQL | undefined =>
  ctx.can(permissions.manage)
    ? undefined
    : and(
        eq(sessions.status, "published"),
        or(
          TaskInbox.exists(ctx, eq(taskInbox.taskId, sessions.taskId), actedFor(taskInbox.userId, actedUsers(ctx))),
          TimeSlots.exists(ctx, eq(timeSlots.sessionId, sessions.id), inList(timeSlots.teacherId, ownTeacherIds(ctx))),
        ),
      );

/** A day or slot of a session the caller sees (`sessionColumn`: the row's session). */
export const inVisibleSession = (ctx: SchoolCtx, sessionColumn: SQLWrapper): SQL | undefined =>
  ctx.can(permissions.manage)
    ? undefined
    : Sessions.exists(ctx, sql`${sessions.id} = ${sessionColumn}`, visibleSession(ctx));

/** The students the caller is a guardian of (or a delegate of a guardian of), as a sub-select. */
export const ownStudents = (ctx: SchoolCtx) =>
  Guardians.select(ctx, { id: guardians.studentId })
    .join(Parents, eq(parents.id, guardians.parentId))
    .where(actedFor(parents.userId, actedUsers(ctx)));

/** Appointments the caller sees: staff all; families their children's and those they booked; teachers those in their slots. */
export const visibleAppointment = (ctx: SchoolCtx): SQL | undefined =>
  ctx.can(permissions.manage)
    ? undefined
    : or(
        inList(appointments.studentId, ownStudents(ctx)),
        actedFor(appointments.bookedBy, actedUsers(ctx)),
        inList(
          appointments.slotId,
          sql`(SELECT s.id FROM appointment_slot s WHERE s.teacher_id IN ${ownTeacherIds(ctx)})`,
        ),
      );

// ---- Records ------------------------------------------------------------------------------------

export const Day = z.iso.date().openapi({ example: "2027-03-12", description: "School-local YYYY-MM-DD" });
export const Time = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, zodMessage(m`Expected a school-local time HH:mm, 00:00 to 23:59`))
  .openapi({ example: "16:00", description: "School-local HH:mm" });

export const SessionRecord = RecordBase.extend({
  taskId: z.number().int().openapi({ description: "The task families complete by booking" }),
  title: z.string().openapi({ example: "Parent-teacher meetings, 3rd grade", description: "What families book" }),
  description: z.string().nullable().openapi({ description: "The details, line breaks kept; null if none" }),
  location: z
    .string()
    .nullable()
    .openapi({ example: "Room 12", description: "Where the meetings are; null if not said" }),
  slotMinutes: z.number().int().openapi({ example: 15, description: "Length of each generated slot, in minutes" }),
  breakMinutes: z.number().int().openapi({ example: 5, description: "Pause after each generated slot, in minutes" }),
  capacity: z.number().int().openapi({ example: 1, description: "Families per slot" }),
  bookingsPerFamily: z.number().int().openapi({ example: 1, description: "Bookings (visits) one family may hold" }),
  cancelHours: z.number().int().openapi({ example: 24, description: "A family cancels up to this many hours before" }),
  status: z.enum(SESSION_STATUSES).openapi({
    example: "published",
    description: "draft: staff prepare it (families neither see it nor have its task); published: families book",
  }),
  publishedAt: z.iso
    .datetime()
    .nullable()
    .openapi({ description: "When it was published (UTC) and its task sent; null while a draft" }),
  createdBy: z.number().int().nullable(),
  counts: z
    .object({
      days: z.number().int().openapi({ description: "Days the session has" }),
      slots: z.number().int().openapi({ description: "Time slots of every day together" }),
      places: z.number().int().openapi({ description: "Places of every slot together" }),
      booked: z.number().int().openapi({ description: "Places taken (live appointments)" }),
    })
    .openapi("SessionCounts", { description: "How far the session is set up and booked" }),
});

/** A session's days, slots, places and bookings, in one sub-select each (indexes on session_id). */
export const sessionCounts = sql<string>`(SELECT json_object('days', (SELECT count(*) FROM appointment_day d WHERE d.session_id = "appointment_session"."id"), 'slots', count(*), 'places', coalesce(sum(s.capacity), 0), 'booked', coalesce(sum(s.booked), 0)) FROM appointment_slot s WHERE s.session_id = "appointment_session"."id")`;

export const SlotRecord = RecordBase.extend({
  sessionId: z.number().int(),
  sessionDayId: z.number().int(),
  teacherId: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "The teacher's profile id (null: anyone of the school)" }),
  teacherName: z
    .string()
    .nullable()
    .openapi({ example: "Laura Méndez", description: "The teacher's name as the school knows them; null: no teacher" }),
  date: Day,
  start: Time.openapi({ description: "School-local start" }),
  end: Time.openapi({ description: "School-local end" }),
  startsAt: z.iso.datetime().openapi({ example: "2027-03-12T22:00:00.000Z" }),
  endsAt: z.iso.datetime(),
  capacity: z.number().int().openapi({ description: "Families the slot takes" }),
  booked: z.number().int().openapi({ description: "Places taken" }),
  available: z.number().int().openapi({ description: "Places left" }),
});

/** A teacher's name as the school knows them, by the slot's teacher profile. */
export const teacherName = sql<
  string | null
>`(SELECT trim(coalesce(c.first_name, u.first_name) || ' ' || coalesce(c.last_name, u.last_name)) FROM ${teachers} JOIN "user" u ON u.id = ${teachers.userId} ${copyJoin("c", sql`u.id`, Teachers.schoolOf())} WHERE ${teachers.id} = "appointment_slot"."teacher_id")`;

export const AppointmentRecord = RecordBase.extend({
  slotId: z.number().int(),
  sessionId: z.number().int(),
  studentId: z.number().int(),
  familyId: z.number().int().nullable(),
  visit: z.string().openapi({ description: "The booking it belongs to: the slots booked by one request share it" }),
  status: z
    .enum(APPOINTMENT_STATUSES)
    .openapi({ example: "booked", description: "booked, or cancelled (its place is free again)" }),
  bookedBy: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "Who booked it (a guardian, a delegate, staff); null if that account was removed" }),
  bookedFor: z.number().int().nullable().openapi({ description: "The parent a delegate booked for" }),
  note: z.string().nullable().openapi({ description: "What the family wrote for the teacher; null if nothing" }),
  cancelledAt: z.iso.datetime().nullable(),
  cancelledBy: z.number().int().nullable(),
  slot: z
    .object({
      date: Day,
      start: Time,
      end: Time,
      startsAt: z.iso.datetime(),
      endsAt: z.iso.datetime(),
      teacherId: z.number().int().nullable(),
    })
    .openapi("AppointmentSlot", { description: "The slot it takes: the school-local day and times, and the teacher" }),
});
