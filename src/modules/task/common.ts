/**
 * What the task operations share: whom the caller acts for, who sees a task, the records and their
 * schemas, and the reads of a task and of a person's copies.
 *
 * Who sees a task: `task.manage` (staff) every task of the school; anyone else a published task
 * that reached them (an inbox row of theirs, or of the parent they are a valid delegate of today).
 */
import { z } from "@hono/zod-openapi";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { Students, students } from "../../db/schema/student";
import {
  COPY_STATUSES,
  TASK_STATUSES,
  TaskInbox,
  TaskRecipients,
  Tasks,
  taskInbox,
  taskRecipients,
  tasks,
} from "../../db/schema/task";
import { eq, lt, not, type SQL, sql } from "../../db/sql";
import { actedUsers, type SchoolCtx } from "../../lib/context";
import { parseJson } from "../../lib/json";
import { LEVELS } from "../../lib/levels";
import { m } from "../../lib/message";
import { orNull } from "../../lib/nullable";
import { RecordBase, timestamps } from "../../lib/resource";
import { actedFor, actingLoader } from "../delegate/api";
import { permissions } from "./permissions";

/** The context loader of the task routes: whom a caller who does not manage tasks acts for. */
export const actingContext = actingLoader(permissions.manage);

export { actedUsers };

/** `column` is one of the users the caller acts for: one user (the usual case) is an equality an index seeks. */
export function byActed(ctx: SchoolCtx, column: SQLiteColumn): SQL {
  const users = actedUsers(ctx);
  const [only] = users;
  return users.length === 1 && only !== undefined ? eq(column, only) : actedFor(column, users);
}

/** A published task that reached the caller (or the parent they act for). */
export const receivedTask = (ctx: SchoolCtx): SQL =>
  sql`${eq(tasks.status, "published")} AND ${TaskInbox.exists(ctx, eq(taskInbox.taskId, tasks.id), byActed(ctx, taskInbox.userId))}`;

/** Who sees a task: staff every one; anyone else the published ones that reached them. */
export const visibleTask = (ctx: SchoolCtx): SQL | undefined =>
  ctx.can(permissions.manage) ? undefined : receivedTask(ctx);

// ---- What the operations refuse with -----------------------------------------------------------

/**
 * The details the task operations refuse with: the verbs throw these and the routes show them as
 * their examples (docs/decisions.md, "The document teaches by example").
 */
export const taskSays = {
  reachesNobody: m`The audience reaches nobody: its groups and levels have no active students, its roles no holders`,
  duePast: (dueDate: string, today: string) => m`dueDate ${dueDate} is past (today is ${today} at the school)`,
  sentTwice: m`This task was sent twice at once; read the list`,
  heldForSession: (id: number) => m`Task ${id} is held for its session (draft): nobody has it yet`,
  sessionBooked: (id: number, live: number) =>
    live === 1
      ? m`Task ${id}'s session has ${live} booked appointment: cancel it first`
      : m`Task ${id}'s session has ${live} booked appointments: cancel them first`,
  severalCopies: (id: number, studentIds: readonly (number | null)[]) =>
    m`You have ${studentIds.length} copies of task ${id} (students ${studentIds.map((s) => s ?? "-").join(", ")}): name studentId`,
  /** A child's copy names the student; one's own copy says "for you". */
  completedAlready: (id: number, studentId: number | null) =>
    studentId !== null
      ? m`Task ${id} for student ${studentId} is already completed; read it again`
      : m`Task ${id} for you is already completed; read it again`,
  notCompleted: (id: number, studentId: number | null) =>
    studentId !== null
      ? m`Task ${id} for student ${studentId} is not completed (or its completion changed); read it again`
      : m`Task ${id} for you is not completed (or its completion changed); read it again`,
  completedByBooking: (id: number, studentId: number | null, appointmentId: number) =>
    studentId !== null
      ? m`Task ${id} for student ${studentId} was completed by booking appointment ${appointmentId}: cancel the appointment instead`
      : m`Task ${id} for you was completed by booking appointment ${appointmentId}: cancel the appointment instead`,
  /** A person's own copy, and the caller is not that person (staff acting on it): no "for you" here. */
  notYourFolder: (id: number, studentId: number | null) =>
    studentId !== null
      ? m`Archiving is each person's own folder: task ${id} for student ${studentId} has no copy of yours`
      : m`Archiving is each person's own folder: task ${id} has no copy of yours`,
  reminderPast: m`sendAt must be in the future`,
  reminderTooFar: (days: number) => m`sendAt must be at most ${days} days ahead`,
  tooManyLookups: m`Too many task lookups; try again later`,
} as const;

// ---- Records ------------------------------------------------------------------------------------

export const Day = z.iso.date().openapi({ example: "2026-12-04", description: "School-local YYYY-MM-DD" });

export const Attachment = z
  .object({
    name: z.string().openapi({ example: "field-trip-permission.pdf", description: "The file's name, as uploaded" }),
    contentType: z.string().openapi({ example: "application/pdf", description: "The file's media type" }),
  })
  .openapi("TaskAttachment", {
    description: "The task's file: download it with POST /api/v1/pending/{id}/signed-url { method: GET }",
  });

export const Audience = z
  .object({
    studentIds: z.array(z.number().int()).openapi({ description: "These students' families (one copy per student)" }),
    groupIds: z.array(z.number().int()).openapi({ description: "The families of these groups' students" }),
    levels: z.array(z.enum(LEVELS)).openapi({ description: "The families of the school's students of these levels" }),
    roleIds: z.array(z.number().int()).openapi({ description: "The holders of these roles (one copy each)" }),
    userIds: z.array(z.number().int()).openapi({ description: "These members, one by one" }),
  })
  .openapi("TaskAudience", { description: "Whom a task was sent to, as staff named them" });

export const Counts = z
  .object({
    recipients: z.number().int().openapi({ example: 24, description: "Students' families and named users" }),
    new: z.number().int().openapi({ example: 3, description: "Recipients who have not opened it" }),
    viewed: z.number().int().openapi({ example: 5, description: "Recipients who opened it and have not completed it" }),
    completed: z.number().int().openapi({ example: 16, description: "Recipients who completed it" }),
  })
  .openapi("TaskCounts", { description: "How many recipients are in each state" });

export const TaskRecord = RecordBase.extend({
  title: z.string().openapi({ example: "Field trip permission slip", description: "What families are asked to do" }),
  description: z.string().nullable().openapi({ description: "The details, line breaks kept; null if none" }),
  dueDate: Day.nullable().openapi({ description: "School-local day it is due (null: none)" }),
  attachment: orNull(Attachment),
  requiresAppointment: z.boolean().openapi({ description: "Completed by booking an appointment of its session" }),
  sessionId: z.number().int().nullable().openapi({ description: "Its appointment session, if any" }),
  status: z.enum(TASK_STATUSES).openapi({
    example: "published",
    description: "draft: held until its appointment session is published; published: sent to its recipients",
  }),
  publishedAt: z.iso
    .datetime()
    .nullable()
    .openapi({ description: "When it was sent to its recipients (UTC); null while a draft" }),
  remindedAt: z.iso.datetime().nullable().openapi({ description: "When the last reminder was sent" }),
  slug: z.string().openapi({ description: "The public page's key: GET /api/v1/pending/public?slug=" }),
  createdBy: z.number().int().nullable(),
  audience: orNull(Audience).openapi({ description: "Whom it was sent to (task.manage only; null otherwise)" }),
  counts: orNull(Counts).openapi({ description: "The recipients' states (task.manage only; null otherwise)" }),
});
export type TaskRecordOf = z.output<typeof TaskRecord>;

/** The task's session (a session belongs to its task's school: the task row is the scope). */
export const sessionOfTask = sql<number | null>`(SELECT s.id FROM appointment_session s WHERE s.task_id = "task"."id")`;

type TaskRow = typeof tasks.$inferSelect & { sessionId: number | null; counts: string };

const noCounts = { recipients: 0, new: 0, viewed: 0, completed: 0 };

export function toTask(ctx: SchoolCtx, row: TaskRow): TaskRecordOf {
  const staff = ctx.can(permissions.manage);
  const counts = parseJson(Counts, row.counts || "{}", noCounts);
  return {
    ...timestamps(row),
    title: row.title,
    description: row.description,
    dueDate: row.dueDate,
    attachment:
      row.attachmentKey && row.attachmentName
        ? { name: row.attachmentName, contentType: row.attachmentType ?? "application/octet-stream" }
        : null,
    requiresAppointment: row.requiresAppointment,
    sessionId: row.sessionId,
    status: row.status,
    publishedAt: row.publishedAt,
    remindedAt: row.remindedAt,
    slug: row.slug,
    createdBy: row.createdBy,
    audience: staff ? row.audience : null,
    counts: staff ? counts : null,
  };
}

// ---- A person's copy ----------------------------------------------------------------------------

/** What a copy's status means (a person's copy, and staff's list of recipients). */
export const COPY_STATUS_TEXT =
  "new: not opened yet; viewed: opened, still to do; completed: done (a booking completes a task that requires an " +
  "appointment)";

export const CopyRecord = z
  .object({
    id: z
      .number()
      .int()
      .openapi({ example: 41, description: "The recipient's id (a student's family, or a named user)" }),
    taskId: z.number().int(),
    title: z.string().openapi({ description: "The task's title" }),
    description: z.string().nullable().openapi({ description: "The task's details; null if none" }),
    dueDate: Day.nullable().openapi({ description: "School-local day it is due (null: none)" }),
    attachment: orNull(Attachment),
    requiresAppointment: z.boolean().openapi({ description: "Completed by booking an appointment of its session" }),
    sessionId: z.number().int().nullable().openapi({ description: "Its appointment session, if any" }),
    slug: z.string().openapi({ description: "The task's public page's key: GET /api/v1/pending/public?slug=" }),
    studentId: z.number().int().nullable().openapi({ description: "The child it is about (null: sent to the user)" }),
    student: z
      .object({ firstName: z.string(), lastName: z.string() })
      .nullable()
      .openapi({ description: "The child's name; null when sent to the user" }),
    userId: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The named user it was sent to (null: a child's family)" }),
    status: z.enum(COPY_STATUSES).openapi({ example: "viewed", description: COPY_STATUS_TEXT }),
    viewedAt: z.iso.datetime().nullable().openapi({ description: "When it was first opened (UTC); null while new" }),
    viewedBy: z.number().int().nullable().openapi({ description: "Who opened it first; null while new" }),
    completedAt: z.iso.datetime().nullable().openapi({ description: "When it was completed (UTC); null until then" }),
    completedBy: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Who completed it (a delegate, a guardian, staff)" }),
    completedFor: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The parent a delegate completed it for (null: completed by the recipient themself)" }),
    appointmentId: z.number().int().nullable().openapi({ description: "The booking that completed it" }),
    archived: z.boolean().openapi({ description: "In the caller's archive folder" }),
    receivedAt: z.iso.datetime().openapi({ description: "When it reached the caller's inbox (UTC)" }),
  })
  .openapi("TaskCopy", { description: "A recipient's copy of a task, as the caller sees it in their inbox" });
export type Copy = z.output<typeof CopyRecord>;

/** The fields of a copy: an inbox row of the caller's with its recipient, task and student. */
export const copyFields = {
  id: taskRecipients.id,
  inboxId: taskInbox.id,
  taskId: tasks.id,
  title: tasks.title,
  description: tasks.description,
  dueDate: tasks.dueDate,
  attachmentKey: tasks.attachmentKey,
  attachmentName: tasks.attachmentName,
  attachmentType: tasks.attachmentType,
  requiresAppointment: tasks.requiresAppointment,
  sessionId: sessionOfTask,
  slug: tasks.slug,
  studentId: taskRecipients.studentId,
  firstName: students.firstName,
  lastName: students.lastName,
  userId: taskRecipients.userId,
  status: taskRecipients.status,
  viewedAt: taskRecipients.viewedAt,
  viewedBy: taskRecipients.viewedBy,
  completedAt: taskRecipients.completedAt,
  completedBy: taskRecipients.completedBy,
  completedFor: taskRecipients.completedFor,
  appointmentId: taskRecipients.appointmentId,
  archived: taskInbox.archived,
  receivedAt: taskInbox.createdAt,
};

/** Another inbox row of the same copy, for `copies`' one row per copy. */
const sameCopy = TaskInbox.alias("same_copy");

/**
 * Copies: the caller's inbox rows (and those of the parents they act for) with their recipient and
 * task. One row per copy: a delegate acting for both guardians of a child reaches each copy through
 * two inbox rows, and sees the first.
 */
export const copies = (ctx: SchoolCtx) => {
  const users = actedUsers(ctx);
  const firstOfCopy =
    users.length > 1
      ? not(
          sameCopy.exists(
            ctx,
            eq(sameCopy.table.recipientId, taskInbox.recipientId),
            lt(sameCopy.table.id, taskInbox.id),
            actedFor(sameCopy.table.userId, users),
          ),
        )
      : undefined;
  return TaskInbox.select(ctx, copyFields)
    .join(TaskRecipients, eq(taskRecipients.id, taskInbox.recipientId))
    .join(Tasks, eq(tasks.id, taskInbox.taskId))
    .join(Students, eq(students.id, taskRecipients.studentId), "left")
    .where(byActed(ctx, taskInbox.userId), eq(tasks.status, "published"), firstOfCopy);
};

type CopyRow = Omit<Awaited<ReturnType<ReturnType<typeof copies>["all"]>>[number], "inboxId">;

export function toCopy(row: CopyRow): Copy {
  return {
    id: row.id,
    taskId: row.taskId,
    title: row.title,
    description: row.description,
    dueDate: row.dueDate,
    attachment:
      row.attachmentKey && row.attachmentName
        ? { name: row.attachmentName, contentType: row.attachmentType ?? "application/octet-stream" }
        : null,
    requiresAppointment: row.requiresAppointment,
    sessionId: row.sessionId,
    slug: row.slug,
    studentId: row.studentId,
    student:
      row.firstName !== null && row.lastName !== null ? { firstName: row.firstName, lastName: row.lastName } : null,
    userId: row.userId,
    status: row.status,
    viewedAt: row.viewedAt,
    viewedBy: row.viewedBy,
    completedAt: row.completedAt,
    completedBy: row.completedBy,
    completedFor: row.completedFor,
    appointmentId: row.appointmentId,
    archived: row.archived,
    receivedAt: row.receivedAt,
  };
}
