/**
 * What staff do with a task besides sending and editing it: read every recipient's state (the
 * detail), remind those who have not completed it, delete it with a reason (its recipients are
 * told), attach a file through a presigned URL; and the task's public page by its slug.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Appointments, appointments } from "../../db/schema/appointment";
import { Schools, schools } from "../../db/schema/core";
import { Students, students } from "../../db/schema/student";
import {
  COPY_STATUSES,
  TaskRecipients,
  TaskReminders,
  Tasks,
  taskRecipients,
  taskReminders,
  tasks,
} from "../../db/schema/task";
import { asc, eq, type SQL, sql } from "../../db/sql";
import { GuardFailed, type Statement } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { ApiError, conflict, forbidden, notFound, say } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { limitPublicLookups, PUBLIC_LOOKUPS_PER_MINUTE } from "../../lib/rate-limit";
import { IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, noContent, operation } from "../../lib/route";
import { signedUrlFields } from "../../lib/signed-url";
import { paragraphs, text } from "../../lib/text";
import { moduleOn } from "../application-module/api";
import type { Notice } from "../notification/api";
import { copyJoin } from "../user/api";
import { deliver, notifyAll, recipientsOf, type Told, toRecipients, whoOf } from "./audience";
import { Attachment, actingContext, COPY_STATUS_TEXT, Day, TaskRecord, taskSays, toTask, visibleTask } from "./common";
import { permissions } from "./permissions";
import { task } from "./resource";

// ---- The detail ---------------------------------------------------------------------------------

const Person = z.object({ firstName: z.string(), lastName: z.string() });
/** What a scheduled reminder's status means. */
export const TASK_REMINDER_STATUS_TEXT =
  "scheduled: waiting for its time; sent: the recipients who had not completed the task were reminded; " +
  "cancelled: the task was not published when it came due";

const RecipientRecord = z
  .object({
    id: z.number().int(),
    studentId: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The student whose family it is (null: a named user)" }),
    student: Person.nullable().openapi({ description: "The student's name; null for a named user" }),
    familyId: z.number().int().nullable().openapi({ description: "The student's family; null for a named user" }),
    userId: z.number().int().nullable().openapi({ description: "A named user (null: a student's family)" }),
    user: Person.nullable().openapi({
      description: "The named user's name, as this school knows them; null for a family",
    }),
    status: z.enum(COPY_STATUSES).openapi({ description: COPY_STATUS_TEXT }),
    viewedAt: z.iso.datetime().nullable().openapi({ description: "When it was first opened (UTC); null while new" }),
    viewedBy: z.number().int().nullable().openapi({ description: "Who opened it first; null while new" }),
    completedAt: z.iso.datetime().nullable().openapi({ description: "When it was completed (UTC); null until then" }),
    completedBy: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Who completed it (a guardian, a delegate, staff); null until then" }),
    completedByName: z
      .string()
      .nullable()
      .openapi({ example: "Ana García", description: "That person's name, as this school knows them" }),
    completedFor: z.number().int().nullable().openapi({ description: "The parent a delegate completed it for" }),
    appointmentId: z.number().int().nullable(),
    people: z.number().int().openapi({ description: "The people it reached (guardians, or the user)" }),
  })
  .openapi("TaskRecipient");

const ReminderRecord = z
  .object({
    id: z.number().int(),
    sendAt: z.iso.datetime().openapi({ description: "When it goes out (UTC)" }),
    status: z.enum(["scheduled", "sent", "cancelled"]).openapi({ description: TASK_REMINDER_STATUS_TEXT }),
    sentAt: z.iso.datetime().nullable(),
    sentCount: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Recipients it reminded when it was sent; null until then" }),
  })
  .openapi("TaskReminderState");

const TaskDetail = TaskRecord.extend({
  recipients: z.array(RecipientRecord).openapi({ description: "Every recipient and its state, families by student" }),
  reminders: z
    .array(ReminderRecord)
    .openapi({ description: "Scheduled and sent reminders (POST /api/v1/pending-reminder)" }),
}).openapi("TaskDetail");

const detailRoute = defineRoute({
  method: "get",
  path: "/api/v1/pending/{id}/detail",
  tag: "Permissions and tasks",
  operationId: "getTaskDetail",
  summary: "A task with every recipient's state and when (staff)",
  description:
    "Each student's family and each named user: new, viewed or completed, when and by whom (a delegate's completion " +
    "names the parent it counts for). A family's archive folder is theirs and is not shown. One D1 round trip.",
  access: permissions.manage,
  module: "tasks",
  labels: { id: "Task" },
  request: { params: IdParams },
  responses: { 200: json(TaskDetail, "The task and its recipients") },
});

/** "First Last" of user `userId` as this school knows them (its own copy, else the user row). */
const nameOf = (ctx: SchoolCtx, userId: unknown) =>
  sql<
    string | null
  >`(SELECT trim(coalesce(c.first_name, u.first_name) || ' ' || coalesce(c.last_name, u.last_name)) FROM "user" u ${copyJoin("c", sql`u.id`, ctx.schoolId)} WHERE u.id = ${userId})`;

export async function getTaskDetail(ctx: SchoolCtx, { params }: InputOf<typeof detailRoute>) {
  const batch = new Batch(ctx);
  const row = batch.read(task.select(ctx).where(eq(tasks.id, params.id)).limit(1));
  const recipients = batch.read(
    TaskRecipients.select(ctx, {
      id: taskRecipients.id,
      studentId: taskRecipients.studentId,
      firstName: students.firstName,
      lastName: students.lastName,
      familyId: taskRecipients.familyId,
      userId: taskRecipients.userId,
      userName: nameOf(ctx, taskRecipients.userId),
      status: taskRecipients.status,
      viewedAt: taskRecipients.viewedAt,
      viewedBy: taskRecipients.viewedBy,
      completedAt: taskRecipients.completedAt,
      completedBy: taskRecipients.completedBy,
      completedByName: nameOf(ctx, taskRecipients.completedBy),
      completedFor: taskRecipients.completedFor,
      appointmentId: taskRecipients.appointmentId,
      people: sql<number>`(SELECT count(*) FROM task_inbox i WHERE i.recipient_id = ${taskRecipients.id})`,
    })
      .join(Students, eq(students.id, taskRecipients.studentId), "left")
      .where(eq(taskRecipients.taskId, params.id))
      .orderBy(asc(taskRecipients.id)),
  );
  const reminders = batch.read(
    TaskReminders.select(ctx, {
      id: taskReminders.id,
      sendAt: taskReminders.sendAt,
      status: taskReminders.status,
      sentAt: taskReminders.sentAt,
      sentCount: taskReminders.sentCount,
    })
      .where(eq(taskReminders.taskId, params.id))
      .orderBy(asc(taskReminders.sendAt), asc(taskReminders.id)),
  );
  const results = await batch.commit();
  const [found] = results.get(row);
  if (!found) throw notFound(m`Task ${params.id} not found`);
  return {
    ...toTask(ctx, found),
    recipients: results.get(recipients).map((r) => {
      const [firstName = "", ...rest] = (r.userName ?? "").split(" ");
      return {
        id: r.id,
        studentId: r.studentId,
        student: r.firstName !== null && r.lastName !== null ? { firstName: r.firstName, lastName: r.lastName } : null,
        familyId: r.familyId,
        userId: r.userId,
        user: r.userId !== null ? { firstName, lastName: rest.join(" ") } : null,
        status: r.status,
        viewedAt: r.viewedAt,
        viewedBy: r.viewedBy,
        completedAt: r.completedAt,
        completedBy: r.completedBy,
        completedByName: r.completedByName,
        completedFor: r.completedFor,
        appointmentId: r.appointmentId,
        people: r.people,
      };
    }),
    reminders: results.get(reminders),
  };
}
export const getTaskDetailOperation = operation(detailRoute, getTaskDetail);

// ---- Reminders ----------------------------------------------------------------------------------

/**
 * A reminder of task `taskId` to `who` (its recipients not completed): the task's `remindedAt`
 * (audited), the inbox rows of guardians added since it was sent, and the notices. The one verb of
 * reminding, for the route and for the scheduled reminders' sweep.
 */
export function reminderOf(
  ctx: SchoolCtx,
  t: { id: number; title: string },
  who: ReturnType<typeof whoOf>,
): { statements: Statement[]; sending: Told } {
  const sending = notifyAll(
    ctx,
    toRecipients(
      {
        category: "tasks",
        title: { en: "Reminder: a task to do", es: "Recordatorio: una tarea pendiente" },
        body: t.title,
        about: { entity: "task", id: t.id },
      },
      who,
    ),
  );
  return {
    statements: [
      ...Tasks.updateOne(
        ctx,
        t.id,
        { remindedAt: ctx.deps.clock.now().toISOString() },
        { action: "remind", where: eq(tasks.status, "published") },
      ),
      deliver(ctx, t.id, { pendingOnly: true }),
      ...sending.statements,
    ],
    sending,
  };
}

const Reminded = z
  .object({
    taskId: z.number().int(),
    reminded: z.number().int().openapi({ example: 7, description: "Recipients not completed, reminded now" }),
  })
  .openapi("TaskReminded");

const remindRoute = defineRoute({
  method: "post",
  path: "/api/v1/pending/{id}/remind",
  tag: "Permissions and tasks",
  operationId: "sendTaskReminder",
  summary: "Send a reminder now to the recipients who have not completed the task",
  description:
    "Their families' guardians (guardians added since the task was sent get it now too) and the named users who have " +
    "not completed it. A task still held for its session (draft) is a 409. Nobody left to remind: 200 with 0, nothing sent.",
  access: permissions.manage,
  module: "tasks",
  audit: "task",
  errors: [409],
  examples: { 409: taskSays.heldForSession(42) },
  labels: { id: "Task" },
  request: { params: IdParams },
  responses: { 200: json(Reminded, "How many recipients were reminded") },
});

export async function sendTaskReminder(ctx: SchoolCtx, { params }: InputOf<typeof remindRoute>) {
  const batch = new Batch(ctx);
  const row = batch.read(
    Tasks.select(ctx, { id: tasks.id, title: tasks.title, status: tasks.status }).where(eq(tasks.id, params.id)),
  );
  const pending = batch.read(recipientsOf(ctx, params.id, true));
  const results = await batch.commit();
  const [t] = results.get(row);
  if (!t) throw notFound(m`Task ${params.id} not found`);
  if (t.status !== "published") throw conflict(taskSays.heldForSession(params.id));
  const who = whoOf(results.get(pending));
  const reminded = who.studentIds.length + who.userIds.length;
  if (reminded === 0) return { taskId: t.id, reminded };
  const { statements, sending } = reminderOf(ctx, t, who);
  try {
    await new Batch(ctx).add(...statements).commit();
  } catch (err) {
    if (err instanceof GuardFailed) throw notFound(m`Task ${params.id} not found`);
    throw err;
  }
  await sending.dispatch();
  return { taskId: t.id, reminded };
}
export const sendTaskReminderOperation = operation(remindRoute, sendTaskReminder);

// ---- Delete with a reason -----------------------------------------------------------------------

const DeleteBody = z
  .object({
    reason: paragraphs({ max: 1000 }).openapi({ example: "The trip was cancelled because of the weather" }),
  })
  .strict();

const deleteRoute = defineRoute({
  method: "post",
  path: "/api/v1/pending/{id}/delete",
  tag: "Permissions and tasks",
  operationId: "deleteTaskWithReason",
  summary: "Delete a task, telling its recipients why",
  description:
    "Every recipient of a published task is told (the reason is the message); the task goes with its copies, " +
    "reminders and appointment session. A session with live bookings is a 409: cancel them first.",
  access: permissions.manage,
  module: "tasks",
  audit: "task",
  errors: [409],
  examples: { 409: taskSays.sessionBooked(42, 3) },
  labels: { id: "Task" },
  request: { params: IdParams, body: jsonBody(DeleteBody, "TaskDelete") },
  responses: { 204: noContent },
});

/** The statements deleting task `id` (one audit row, with the reason), guarded: it was there (and met `where`). */
export function deleteStatements(ctx: SchoolCtx, id: number, reason: string | null, where?: SQL): Statement[] {
  return Tasks.deleteOne(ctx, id, {
    where,
    changes: {
      title: { old: tasks.title, new: null },
      status: { old: tasks.status, new: null },
      reason: { old: null, new: reason },
    },
  });
}

export async function deleteTaskWithReason(ctx: SchoolCtx, { params, body }: InputOf<typeof deleteRoute>) {
  const batch = new Batch(ctx);
  const row = batch.read(
    Tasks.select(ctx, { id: tasks.id, title: tasks.title, status: tasks.status }).where(eq(tasks.id, params.id)),
  );
  const who = batch.read(recipientsOf(ctx, params.id));
  const booked = batch.read(
    Appointments.select(ctx, { n: sql<number>`count(*)` }).where(
      eq(appointments.status, "booked"),
      sql`${appointments.sessionId} IN (SELECT s.id FROM appointment_session s WHERE s.task_id = ${params.id})`,
    ),
  );
  const results = await batch.commit();
  const [t] = results.get(row);
  if (!t) throw notFound(m`Task ${params.id} not found`);
  const live = results.get(booked)[0]?.n ?? 0;
  if (live > 0) {
    throw conflict(taskSays.sessionBooked(params.id, live));
  }
  const notices: Notice[] =
    t.status === "published"
      ? toRecipients(
          {
            category: "tasks",
            title: { en: `Task withdrawn: ${t.title}`, es: `Tarea retirada: ${t.title}` },
            body: body.reason,
          },
          whoOf(results.get(who)),
        )
      : [];
  const sending = notifyAll(ctx, notices);
  try {
    await new Batch(ctx).add(...sending.statements, ...deleteStatements(ctx, params.id, body.reason)).commit();
  } catch (err) {
    if (err instanceof GuardFailed) throw notFound(m`Task ${params.id} not found`);
    throw err;
  }
  await sending.dispatch();
}
export const deleteTaskWithReasonOperation = operation(deleteRoute, deleteTaskWithReason);

// ---- The attachment -----------------------------------------------------------------------------

export const ATTACHMENT_URL_SECONDS = 5 * 60;
const TYPE_NAMES = [
  "application/pdf",
  "image/png",
  "image/jpeg",
  "image/webp",
  "text/plain",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
] as const;
/** The file name extension of each type an attachment may have. */
const EXTENSIONS: Record<(typeof TYPE_NAMES)[number], string> = {
  "application/pdf": "pdf",
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "text/plain": "txt",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
};

const FileName = text({ max: 200 })
  .refine((v) => !/[/\\]/.test(v), zodMessage(m`A file name, without / or \\`))
  .openapi({ example: "field-trip-permission.pdf" });

const AttachmentUrlBody = z
  .object({
    method: z
      .enum(["GET", "PUT"])
      .default("PUT")
      .openapi({ description: "PUT to upload a new attachment (default; task.manage), GET to download it" }),
    contentType: z.enum(TYPE_NAMES).optional().openapi({ description: "The file's type; required to upload" }),
    name: FileName.optional().openapi({ description: "The file's name as people see it; required to upload" }),
  })
  .strict()
  .superRefine((v, issue) => {
    for (const field of ["contentType", "name"] as const) {
      if (v.method === "PUT" && v[field] === undefined) {
        issue.addIssue({ code: "custom", path: [field], message: m`Required to upload (method PUT)`.render() });
      }
      if (v.method === "GET" && v[field] !== undefined) {
        issue.addIssue({ code: "custom", path: [field], message: m`Only for uploads (method PUT)`.render() });
      }
    }
  });

const AttachmentUrl = z
  .object({
    attachment: Attachment,
    key: z.string().openapi({ example: "1/tasks/7/2f1c0a.pdf", description: "The attachment's object key" }),
    ...signedUrlFields(ATTACHMENT_URL_SECONDS, "application/pdf"),
  })
  .openapi("TaskAttachmentUrl");

const signedUrlRoute = defineRoute({
  method: "post",
  path: "/api/v1/pending/{id}/signed-url",
  tag: "Permissions and tasks",
  operationId: "createTaskSignedUrl",
  summary: "Get a presigned URL to upload (PUT: a new attachment) or download (GET) a task's attachment",
  description:
    "PUT needs task.manage: the task's attachment becomes a new key `{schoolId}/tasks/{id}/{uuid}.{ext}` with the name " +
    "and content type given, and the URL uploads to it (send the returned `headers`). GET signs a download for anyone " +
    `who sees the task (404 without an attachment). URLs expire after ${ATTACHMENT_URL_SECONDS} s.`,
  access: permissions.read,
  module: "tasks",
  audit: "task",
  context: actingContext,
  labels: { id: "Task" },
  request: { params: IdParams, body: jsonBody(AttachmentUrlBody, "TaskAttachmentUrlRequest") },
  responses: { 200: json(AttachmentUrl, "The attachment and its presigned URL") },
});

export async function createTaskSignedUrl(ctx: SchoolCtx, { params, body }: InputOf<typeof signedUrlRoute>) {
  const now = ctx.deps.clock.now();
  let key: string;
  let attachment: { name: string; contentType: string };
  if (body.method === "PUT") {
    if (!ctx.can(permissions.manage)) {
      throw forbidden(say.missingPermission(permissions.manage.name, ctx.schoolId));
    }
    const contentType = body.contentType ?? "application/pdf";
    attachment = { name: body.name ?? "attachment", contentType };
    key = `${ctx.schoolId}/tasks/${params.id}/${crypto.randomUUID()}.${EXTENSIONS[contentType]}`;
    await task.commit(
      ctx,
      params.id,
      new Batch(ctx).add(
        ...Tasks.updateOne(
          ctx,
          params.id,
          { attachmentKey: key, attachmentName: attachment.name, attachmentType: contentType },
          { action: "attachment" },
        ),
      ),
    );
  } else {
    const row = await Tasks.select(ctx, {
      key: tasks.attachmentKey,
      name: tasks.attachmentName,
      contentType: tasks.attachmentType,
    })
      .where(eq(tasks.id, params.id), visibleTask(ctx))
      .first();
    if (!row) throw notFound(m`Task ${params.id} not found`);
    if (row.key === null || row.name === null) {
      throw new ApiError(404, m`Task ${params.id} has no attachment; upload one with method PUT`);
    }
    key = row.key;
    attachment = { name: row.name, contentType: row.contentType ?? "application/octet-stream" };
  }
  const signed = await ctx.deps.signer.sign({
    key,
    method: body.method,
    contentType: body.method === "PUT" ? attachment.contentType : undefined,
    expiresIn: ATTACHMENT_URL_SECONDS,
    now,
  });
  return { attachment, key, ...signed };
}
export const createTaskSignedUrlOperation = operation(signedUrlRoute, createTaskSignedUrl);

// ---- The public page ----------------------------------------------------------------------------

const Slug = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,64}$/, zodMessage(m`A task's public key`))
  .openapi({ example: "q3Kx9Zb0LmN4pR7sT1vW2A", description: "The task's public key: its record's `slug`" });

const PublicTask = z
  .object({
    title: z.string().openapi({ description: "What families are asked to do" }),
    description: z.string().nullable().openapi({ description: "The details, line breaks kept; null if none" }),
    dueDate: Day.nullable().openapi({ description: "School-local day it is due (null: none)" }),
    requiresAppointment: z.boolean().openapi({ description: "Completed by booking an appointment (in the app)" }),
    school: z
      .object({ name: z.string().openapi({ description: "The school's name" }) })
      .openapi({ description: "The school that sent it" }),
  })
  .openapi("PublicTask", { description: "What anyone with the link may know of a task" });

const publicRoute = defineRoute({
  method: "get",
  // The slug is a query parameter: `/pending/public/{slug}` would be ambiguous with `/pending/{id}/complete`.
  path: "/api/v1/pending/public",
  tag: "Permissions and tasks",
  operationId: "getPublicTask",
  summary: "A task's public page by its slug (no sign-in): its text only",
  description:
    "The title, description and due date of a published task, and its school's name; never its recipients or their " +
    "states. A draft, an unknown slug, or a school with the tasks module disabled: 404. " +
    `${PUBLIC_LOOKUPS_PER_MINUTE} lookups a minute per client address, then 429.`,
  access: "public",
  errors: [404, 429],
  examples: { 404: say.notFound("Task"), 429: taskSays.tooManyLookups },
  request: { query: z.object({ slug: Slug }) },
  responses: { 200: json(PublicTask, "The task's text") },
});

export async function getPublicTask(ctx: Ctx, { query }: InputOf<typeof publicRoute>) {
  await limitPublicLookups(ctx, "task-public", taskSays.tooManyLookups);
  const school = Tasks.schoolOf();
  const row = await Tasks.everySchool(ctx, () => ({
    title: tasks.title,
    description: tasks.description,
    dueDate: tasks.dueDate,
    requiresAppointment: tasks.requiresAppointment,
    status: tasks.status,
    schoolName: schools.name,
    on: sql<number>`${moduleOn(ctx, "tasks", school)}`,
  }))
    .join(Schools, eq(schools.id, school))
    .where(eq(tasks.slug, query.slug))
    .first();
  if (row?.status !== "published" || !row.on) throw notFound(m`Task not found`);
  return {
    title: row.title,
    description: row.description,
    dueDate: row.dueDate,
    requiresAppointment: row.requiresAppointment,
    school: { name: row.schoolName },
  };
}
export const getPublicTaskOperation = operation(publicRoute, getPublicTask);
