/**
 * Tasks (`/api/v1/pending`): staff send one to an audience (./audience.ts), change its text and due
 * date, list and filter them; anyone it reached reads it with their own copies' state. The copies'
 * actions are in ./copies.ts; the detail, deletion, reminders and attachment in ./manage.ts.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { columnsOf } from "../../db/query";
import { Schools, schools } from "../../db/schema/core";
import { TASK_STATUSES, Tasks, TaskTargets, taskInbox, tasks, taskTargets } from "../../db/schema/task";
import { eq, gte, lte, sql } from "../../db/sql";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { randomToken } from "../../lib/crypto";
import { schoolDate } from "../../lib/dates";
import { notFound, unprocessable } from "../../lib/errors";
import { LEVELS } from "../../lib/levels";
import { m } from "../../lib/message";
import type { OrderKey } from "../../lib/pagination";
import { idFilter } from "../../lib/params";
import { defineResource, type Filters, IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { paragraphs, text } from "../../lib/text";
import { dateIn } from "../../lib/zoned-time";
import {
  audienceFields,
  audienceOf,
  namesSomeone,
  notifyAll,
  resolveAudience,
  sendStatements,
  toRecipients,
} from "./audience";
import {
  actingContext,
  CopyRecord,
  copies,
  sessionOfTask,
  TaskRecord,
  taskSays,
  toCopy,
  toTask,
  visibleTask,
} from "./common";
import { permissions } from "./permissions";

export const Title = text({ max: 200 }).openapi({ example: "Field trip permission slip" });
export const Description = paragraphs({ max: 4000 }).openapi({
  example: "Sign and return the permission slip for the museum visit on Friday.",
});

/** The recipients' states of a task, counted in one sub-select (index task_recipient_status_idx). */
export const countsJson = sql<string>`(SELECT json_object('recipients', count(*), 'new', coalesce(sum(r.status = 'new'), 0), 'viewed', coalesce(sum(r.status = 'viewed'), 0), 'completed', coalesce(sum(r.status = 'completed'), 0)) FROM task_recipient r WHERE r.task_id = "task"."id")`;

export const task = defineResource({
  name: "task",
  plural: "tasks",
  label: m`Task`,
  path: "/api/v1/pending",
  tag: "Permissions and tasks",
  scope: "school",
  module: "tasks",
  data: Tasks,
  record: TaskRecord,
  view: { fields: { ...columnsOf(tasks), sessionId: sessionOfTask, counts: countsJson } },
  toRecord: (ctx, row) => toTask(ctx, row),
  visibleTo: (ctx) => visibleTask(ctx),
  context: actingContext,
});

/** The school's "today" (its time zone). */
export async function schoolToday(ctx: SchoolCtx): Promise<string> {
  const school = await Schools.select(ctx, { timeZone: schools.timeZone }).where(eq(schools.id, ctx.schoolId)).first();
  return dateIn(school?.timeZone ?? "UTC", ctx.deps.clock.now());
}

// ---- Lists --------------------------------------------------------------------------------------

export const filters = {
  status: {
    schema: z.enum(TASK_STATUSES).optional().openapi({ description: "draft (held for its session) or published" }),
    where: (_ctx: Ctx, v: (typeof TASK_STATUSES)[number]) => eq(tasks.status, v),
    example: "published",
  },
  dueFrom: {
    schema: schoolDate("Due on this day or later", "2026-12-04").optional(),
    where: (_ctx: Ctx, v: string) => gte(tasks.dueDate, v),
    example: "2026-12-01",
  },
  dueTo: {
    schema: schoolDate("Due on this day or earlier (overdue: up to yesterday)", "2026-12-04").optional(),
    where: (_ctx: Ctx, v: string) => lte(tasks.dueDate, v),
    example: "2026-12-31",
  },
  group: {
    schema: idFilter("Sent to this group"),
    where: (ctx: SchoolCtx, v: number) =>
      TaskTargets.exists(
        ctx,
        eq(taskTargets.taskId, tasks.id),
        eq(taskTargets.kind, "group"),
        eq(taskTargets.refId, v),
      ),
    example: "3",
  },
  level: {
    schema: z.enum(LEVELS).optional().openapi({ description: "Sent to this level" }),
    where: (ctx: SchoolCtx, v: string) =>
      TaskTargets.exists(
        ctx,
        eq(taskTargets.taskId, tasks.id),
        eq(taskTargets.kind, "level"),
        eq(taskTargets.level, v),
      ),
    example: "elementary",
  },
  text: {
    schema: searchTerm("Part of the title, whatever its case and accents"),
    where: (_ctx: Ctx, v: string) => contains(tasks.titleSearch, v),
    example: "permission",
  },
} satisfies Filters;

export const TASK_ORDER: OrderKey[] = [
  { by: tasks.createdAt, desc: true },
  { by: tasks.id, desc: true },
];

export const listTasks = task.list({
  access: permissions.manage,
  filters,
  sort: { createdAt: tasks.createdAt, title: tasks.title },
  defaultOrder: TASK_ORDER,
  summary: "List the school's tasks (paginated), newest first",
  description:
    "task.manage: every task of the school with its recipients' counts. Filters: status, due dates, the group or level " +
    "it was sent to, and text in the title. A family's own tasks: GET /api/v1/pending/mine.",
});

// ---- One task -----------------------------------------------------------------------------------

const TaskWithCopies = TaskRecord.extend({
  copies: z.array(CopyRecord).openapi({ description: "The caller's own copies of it (one per child it is about)" }),
}).openapi("TaskWithCopies");

const getRoute = defineRoute({
  method: "get",
  path: "/api/v1/pending/{id}",
  tag: "Permissions and tasks",
  operationId: "getTask",
  summary: "Get a task by id, with the caller's own copies",
  description:
    "task.manage: any task of the school (with its audience and counts). Anyone else: a published task sent to them or " +
    "their children (404 otherwise), without the audience and counts.",
  access: permissions.read,
  module: "tasks",
  context: actingContext,
  labels: { id: "Task" },
  request: { params: IdParams },
  responses: { 200: json(TaskWithCopies, "The task") },
});

export async function getTask(ctx: SchoolCtx, { params }: InputOf<typeof getRoute>) {
  const batch = new Batch(ctx);
  const row = batch.read(task.select(ctx).where(eq(tasks.id, params.id), visibleTask(ctx)).limit(1));
  const mine = batch.read(copies(ctx).where(eq(taskInbox.taskId, params.id)).orderBy(sql`${taskInbox.id} asc`));
  const results = await batch.commit();
  const [found] = results.get(row);
  if (!found) throw notFound(m`Task ${params.id} not found`);
  const seen = new Set<number>();
  const own = results.get(mine).filter((c) => !seen.has(c.id) && seen.add(c.id));
  return { ...toTask(ctx, found), copies: own.map(toCopy) };
}
export const getTaskOperation = operation(getRoute, getTask);

// ---- Create -------------------------------------------------------------------------------------

const CreateBody = z
  .object({
    title: Title,
    description: Description.optional(),
    dueDate: schoolDate("School-local day it is due; not in the past", "2026-12-04").optional(),
    requiresAppointment: z.boolean().default(false).openapi({
      description:
        "Completed by booking an appointment: the task is held (draft) until its session (POST /api/v1/session) is published",
    }),
    ...audienceFields,
  })
  .strict()
  .superRefine((v, issue) => {
    if (!namesSomeone(audienceOf(v))) {
      issue.addIssue({
        code: "custom",
        path: ["studentIds"],
        message: m`Name an audience: studentIds, groupIds, levels, roleIds or userIds`.render(),
      });
    }
  });

const createRoute = defineRoute({
  method: "post",
  path: "/api/v1/pending",
  tag: "Permissions and tasks",
  operationId: "createTask",
  summary: "Send a task to families, groups, levels, roles or people",
  description:
    "The audience is every student named, the active students of the groups and levels named (one recipient per " +
    "student: the family does it once for that child), and the people named and the holders of the roles named (one " +
    "each). An id of another school is a 404; an audience that reaches nobody a 422. Recipients are told at once, " +
    "unless the task requires an appointment: then it is held as a draft until its session is published.",
  access: permissions.manage,
  module: "tasks",
  audit: "task",
  errors: [409, 422],
  examples: {
    409: {
      name: "sentTwice",
      summary: "The same task sent twice at the same moment (a double tap): one is sent",
      detail: taskSays.sentTwice,
    },
    422: [
      { name: "reachesNobody", summary: "The audience has no one in it", detail: taskSays.reachesNobody },
      { name: "duePast", summary: "A due date before today", detail: taskSays.duePast("2026-11-20", "2026-11-23") },
    ],
  },
  request: { body: jsonBody(CreateBody, "TaskCreate") },
  responses: { 201: json(TaskRecord, "The task, sent (or held for its session)") },
});

export async function createTask(ctx: SchoolCtx, { body }: InputOf<typeof createRoute>) {
  const audience = audienceOf(body);
  const resolved = await resolveAudience(ctx, audience);
  if (body.dueDate !== undefined) {
    const today = dateIn(resolved.timeZone, ctx.deps.clock.now());
    if (body.dueDate < today) throw unprocessable(taskSays.duePast(body.dueDate, today));
  }
  const now = ctx.deps.clock.now().toISOString();
  const held = body.requiresAppointment;
  const id = Tasks.insertedId();
  const batch = new Batch(ctx).add(
    ...Tasks.insert(ctx, {
      title: body.title,
      description: body.description ?? null,
      dueDate: body.dueDate ?? null,
      requiresAppointment: held,
      status: held ? "draft" : "published",
      publishedAt: held ? null : now,
      slug: randomToken(16),
      audience,
      createdBy: ctx.userId,
    }),
    ...sendStatements(ctx, id, audience, resolved),
  );
  const sending = notifyAll(
    ctx,
    held
      ? []
      : toRecipients(
          {
            category: "tasks",
            title: { en: "New task", es: "Nueva tarea" },
            body: body.title,
            about: { entity: "task", id },
          },
          { studentIds: resolved.students.map((s) => s.id), userIds: resolved.users },
        ),
  );
  batch.add(...sending.statements);
  const back = batch.read(task.readOne(ctx, id));
  const [row] = (await batch.commit({ conflict: taskSays.sentTwice })).get(back);
  if (!row) throw new Error("task: the created row was not read back");
  await sending.dispatch();
  return toTask(ctx, row);
}
export const createTaskOperation = operation(createRoute, createTask);

// ---- Update -------------------------------------------------------------------------------------

export const updateTask = task.update({
  access: permissions.manage,
  // If-Match names the ETag of GET /pending/{id}: the task with the caller's copies.
  read: (ctx, { id }) => getTask(ctx, { params: { id } }),
  input: z.object({
    title: Title.optional(),
    description: Description.nullable().optional(),
    dueDate: schoolDate("School-local day it is due (null: none); not in the past", "2026-12-04").nullable().optional(),
  }),
  values: async (ctx, { body }) => {
    if (body.dueDate) {
      const today = await schoolToday(ctx);
      if (body.dueDate < today) throw unprocessable(taskSays.duePast(body.dueDate, today));
    }
    return {
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.dueDate !== undefined ? { dueDate: body.dueDate } : {}),
    };
  },
  summary: "Change a task's title, description or due date",
  description: "The audience does not change: send another task. A due date in the past is a 422.",
  errors: [422],
  examples: { 422: taskSays.duePast("2026-11-20", "2026-11-23") },
});
