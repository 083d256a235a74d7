/**
 * Appointments: parent-teacher meetings families book. A **session** ("Parent-teacher meetings,
 * 3rd grade") belongs to a task (the task the families complete by booking) and has **days**; a day
 * has time **windows** (school-local `HH:mm`, each of a teacher or of nobody in particular), and
 * "update session slots" turns the windows into **time slots** of the session's length with its
 * breaks. Slots are stored as instants (UTC) with their school-local labels, so a day on which the
 * clocks change has the slots its wall clocks really hold.
 *
 * States: session `draft` -> `published` (bookable; its task is sent if it was held). An
 * appointment is `booked` -> `cancelled`. A slot's `booked` counts its live appointments and never
 * passes its `capacity` (the booking's conditional UPDATE, and a CHECK as the backstop).
 */
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { searchable, searchCopy } from "../search";
import { sql } from "../sql";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { families } from "./family";
import { students } from "./student";
import { tasks } from "./task";
import { teachers } from "./teacher";

export const SESSION_STATUSES = ["draft", "published"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export const APPOINTMENT_STATUSES = ["booked", "cancelled"] as const;

/** A time window of a day: school-local `HH:mm`, and the teacher who holds the meetings (null: anyone). */
export interface Window {
  start: string;
  end: string;
  teacherId: number | null;
}

export const sessions = searchable(
  sqliteTable(
    "appointment_session",
    {
      ...record,
      schoolId: schoolId(),
      /** The task families complete by booking (one session per task). */
      taskId: integer("task_id")
        .notNull()
        .references(() => tasks.id, { onDelete: "cascade" }),
      title: text("title").notNull(),
      description: text("description"),
      location: text("location"),
      /** Length of each slot, and the pause after each, in minutes. */
      slotMinutes: integer("slot_minutes").notNull(),
      breakMinutes: integer("break_minutes").notNull().default(0),
      /** Families per slot (1: one family meets the teacher). */
      capacity: integer("capacity").notNull().default(1),
      /** Bookings (visits: one or several consecutive slots) one family may hold in the session. */
      bookingsPerFamily: integer("bookings_per_family").notNull().default(1),
      /** A family cancels up to this many hours before the slot starts (staff at any time). */
      cancelHours: integer("cancel_hours").notNull().default(24),
      status: text("status", { enum: SESSION_STATUSES }).notNull().default("draft"),
      publishedAt: text("published_at"),
      createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
      titleSearch: searchCopy("title"),
    },
    (t) => [
      uniqueIndex("appointment_session_task_uq").on(t.taskId),
      index("appointment_session_created_idx").on(t.schoolId, t.createdAt),
      index("appointment_session_status_idx").on(t.schoolId, t.status, t.createdAt),
      index("appointment_session_created_by_idx").on(t.createdBy),
    ],
  ),
  { title: "titleSearch" },
);

export const sessionDays = sqliteTable(
  "appointment_day",
  {
    ...record,
    schoolId: schoolId(),
    sessionId: integer("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    /** School-local `YYYY-MM-DD`. */
    date: text("date").notNull(),
    windows: text("windows", { mode: "json" }).$type<Window[]>().notNull(),
  },
  (t) => [
    uniqueIndex("appointment_day_uq").on(t.sessionId, t.date),
    index("appointment_day_created_idx").on(t.schoolId, t.createdAt),
    index("appointment_day_date_idx").on(t.schoolId, t.date),
  ],
);

export const timeSlots = sqliteTable(
  "appointment_slot",
  {
    ...record,
    schoolId: schoolId(),
    sessionId: integer("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    dayId: integer("day_id")
      .notNull()
      .references(() => sessionDays.id, { onDelete: "cascade" }),
    teacherId: integer("teacher_id").references(() => teachers.id, { onDelete: "set null" }),
    /** The day (school-local) and the school-local labels of the start and end. */
    date: text("date").notNull(),
    start: text("start").notNull(),
    end: text("end").notNull(),
    /** The instants (ISO 8601, UTC). */
    startsAt: text("starts_at").notNull(),
    endsAt: text("ends_at").notNull(),
    capacity: integer("capacity").notNull().default(1),
    booked: integer("booked").notNull().default(0),
  },
  (t) => [
    index("appointment_slot_session_idx").on(t.sessionId, t.startsAt),
    index("appointment_slot_day_idx").on(t.dayId, t.startsAt),
    index("appointment_slot_teacher_idx").on(t.teacherId, t.startsAt),
    index("appointment_slot_created_idx").on(t.schoolId, t.createdAt),
    // Lists are in time order: the school's slots, a session's, a day's, a teacher's.
    index("appointment_slot_time_idx").on(t.schoolId, t.startsAt),
    check("appointment_slot_booked_ck", sql`${t.booked} >= 0 AND ${t.booked} <= ${t.capacity}`),
    check("appointment_slot_times_ck", sql`${t.endsAt} > ${t.startsAt}`),
  ],
);

export const appointments = sqliteTable(
  "appointment",
  {
    ...record,
    schoolId: schoolId(),
    slotId: integer("slot_id")
      .notNull()
      .references(() => timeSlots.id, { onDelete: "cascade" }),
    sessionId: integer("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    studentId: integer("student_id")
      .notNull()
      .references(() => students.id, { onDelete: "cascade" }),
    /** The student's family at booking: the "one booking per family" rule counts by it (a student of no family alone). */
    familyId: integer("family_id").references(() => families.id, { onDelete: "set null" }),
    /** One booking (a visit): the key every slot booked by one request shares. */
    visit: text("visit").notNull(),
    status: text("status", { enum: APPOINTMENT_STATUSES }).notNull().default("booked"),
    /** Who booked, and the parent it was booked for when a delegate booked (null otherwise). */
    bookedBy: integer("booked_by").references(() => users.id, { onDelete: "set null" }),
    bookedFor: integer("booked_for").references(() => users.id, { onDelete: "set null" }),
    note: text("note"),
    cancelledAt: text("cancelled_at"),
    cancelledBy: integer("cancelled_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [
    // A child holds a slot once (a cancelled booking does not count).
    uniqueIndex("appointment_slot_student_uq").on(t.slotId, t.studentId).where(sql`status = 'booked'`),
    index("appointment_slot_idx").on(t.slotId, t.status),
    index("appointment_family_idx").on(t.sessionId, t.familyId, t.status),
    index("appointment_student_session_idx").on(t.sessionId, t.studentId, t.status),
    index("appointment_student_idx").on(t.studentId, t.createdAt),
    index("appointment_session_idx").on(t.sessionId, t.createdAt),
    index("appointment_visit_idx").on(t.visit),
    index("appointment_created_idx").on(t.schoolId, t.createdAt),
    index("appointment_booked_by_idx").on(t.bookedBy),
    index("appointment_booked_for_idx").on(t.bookedFor),
    index("appointment_cancelled_by_idx").on(t.cancelledBy),
  ],
);

export const Sessions = dataTable(sessions, { entity: "session" });
export const SessionDays = dataTable(sessionDays, { entity: "session-day" });
export const TimeSlots = dataTable(timeSlots, { entity: "time-slot" });
export const Appointments = dataTable(appointments, { entity: "appointment" });
