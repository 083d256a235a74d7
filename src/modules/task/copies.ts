/**
 * A person's copies of tasks: the list of their own (`GET /api/v1/pending/mine`) and what they do
 * with one (`PATCH /api/v1/pending/{id}/viewed|complete|revert-completion|archive|unarchive`).
 *
 * The state (`new` -> `viewed` -> `completed`, reverted back to `viewed`) is the recipient's: a
 * student's family shares it (either guardian, or a delegate for them, completes it once for that
 * child) and it records who did it and, for a delegate, the parent it counts for. The archive is
 * each person's own folder (their inbox row): archiving hides it from their list, not from the other
 * guardian's, and staff never read it as done. Each change is one conditional UPDATE: of two
 * guardians completing at once one wins and the other gets a 409.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Students, students } from "../../db/schema/student";
import { TaskInbox, TaskRecipients, Tasks, taskInbox, taskRecipients, tasks } from "../../db/schema/task";
import { and, desc, eq, gte, lte, ne, sql } from "../../db/sql";
import { GuardFailed } from "../../db/write";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { conflict, notFound, type ProblemCase, type ProblemStatus, unprocessable } from "../../lib/errors";
import { type Message, m } from "../../lib/message";
import { Listing, PageQuery, pageOf } from "../../lib/pagination";
import { idFilter } from "../../lib/params";
import { type Filters, filterConditions, IdParams } from "../../lib/resource";
import { defineRoute, type InputOf, json, operation, type ProblemExamples } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import {
  actedUsers,
  actingContext,
  byActed,
  type Copy,
  CopyRecord,
  copies,
  copyFields,
  taskSays,
  toCopy,
} from "./common";
import { permissions } from "./permissions";

// ---- The list of one's own ----------------------------------------------------------------------

const mineFilters = {
  status: {
    schema: z
      .enum(["new", "viewed", "completed", "pending"])
      .optional()
      .openapi({ description: "new, viewed, completed, or pending (new or viewed: still to do)" }),
    where: (_ctx: Ctx, v: "new" | "viewed" | "completed" | "pending") =>
      v === "pending" ? ne(taskRecipients.status, "completed") : eq(taskRecipients.status, v),
    example: "pending",
  },
  studentId: {
    schema: idFilter("The copies about this child"),
    where: (_ctx: Ctx, v: number) => eq(taskRecipients.studentId, v),
    example: "2001",
  },
  dueFrom: {
    schema: schoolDate("Due on this day or later", "2026-12-04").optional(),
    where: (_ctx: Ctx, v: string) => gte(tasks.dueDate, v),
    example: "2026-12-01",
  },
  dueTo: {
    schema: schoolDate("Due on this day or earlier", "2026-12-04").optional(),
    where: (_ctx: Ctx, v: string) => lte(tasks.dueDate, v),
    example: "2026-12-31",
  },
  text: {
    schema: searchTerm("Part of the title, whatever its case and accents"),
    where: (_ctx: Ctx, v: string) => contains(tasks.titleSearch, v),
    example: "permission",
  },
} satisfies Filters;

const MineQuery = z.strictObject({
  ...PageQuery.shape,
  archived: z
    .enum(["true", "false"])
    .default("false")
    .openapi({ description: "false (default): the inbox; true: the caller's archive folder" }),
  status: mineFilters.status.schema,
  studentId: mineFilters.studentId.schema,
  dueFrom: mineFilters.dueFrom.schema,
  dueTo: mineFilters.dueTo.schema,
  text: mineFilters.text.schema,
});

const mineRoute = defineRoute({
  method: "get",
  path: "/api/v1/pending/mine",
  tag: "Permissions and tasks",
  operationId: "listMyTasks",
  summary: "The caller's tasks (paginated), newest first: their own and their children's",
  description:
    "One row per copy: a task about two children is two rows, each with its own state. A delegate sees the copies of " +
    "the parent they act for today. Archived copies are in the archive folder (archived=true). status=pending: still " +
    "to do (new or viewed).",
  access: permissions.read,
  module: "tasks",
  context: actingContext,
  request: { query: MineQuery },
  responses: { 200: json(pageOf(CopyRecord, "TaskCopyPage"), "A page of the caller's copies") },
  extensions: {
    "x-filters": Object.fromEntries(Object.entries(mineFilters).map(([k, f]) => [k, f.example])),
    "x-sort": [],
  },
});

export async function listMyTasks(ctx: SchoolCtx, { query }: InputOf<typeof mineRoute>) {
  // The caller's inbox rows in index order (task_inbox_user_idx); the other filters are checked along it.
  const where = and(eq(taskInbox.archived, query.archived === "true"), ...filterConditions(mineFilters, query, ctx));
  const batch = new Batch(ctx);
  const rows = batch.read(
    copies(ctx)
      .where(where)
      .orderBy(desc(taskInbox.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
  );
  const total = batch.read(copies(ctx).where(where).count());
  const results = await batch.commit();
  return new Listing(results.get(rows).map(toCopy), results.get(total)[0]?.n ?? 0, query);
}
export const listMyTasksOperation = operation(mineRoute, listMyTasks);

// ---- What one does with a copy ------------------------------------------------------------------

const ActionQuery = z.strictObject({
  studentId: idFilter("The child whose copy it is, when the caller has copies for several"),
  recipientId: idFilter("A recipient of the task: task.manage acts on anyone's copy (a form handed in at the desk)"),
});

/** One copy as the caller sees it, whoever's it is (staff acting on a family's): recipient, task, the caller's inbox row. */
function oneCopy(ctx: SchoolCtx, recipientId: number) {
  return TaskRecipients.select(ctx, {
    ...copyFields,
    inboxId: sql<number | null>`${taskInbox.id}`,
    archived: sql<number>`coalesce(${taskInbox.archived}, 0)`,
    receivedAt: sql<string>`coalesce(${taskInbox.createdAt}, ${taskRecipients.createdAt})`,
  })
    .join(Tasks, eq(tasks.id, taskRecipients.taskId))
    .join(Students, eq(students.id, taskRecipients.studentId), "left")
    .join(TaskInbox, sql`${eq(taskInbox.recipientId, taskRecipients.id)} AND ${byActed(ctx, taskInbox.userId)}`, "left")
    .where(eq(taskRecipients.id, recipientId))
    .orderBy(sql`${taskInbox.userId} = ${ctx.userId ?? 0} desc`)
    .limit(1);
}

const readOne = async (ctx: SchoolCtx, batch: Batch, recipientId: number): Promise<Copy> => {
  const slot = batch.read(oneCopy(ctx, recipientId));
  const [row] = (await batch.commit()).get(slot);
  if (!row) throw notFound(m`Task copy ${recipientId} not found`);
  return toCopy({ ...row, archived: row.archived === 1 });
};

interface Target {
  recipientId: number;
  studentId: number | null;
  status: "new" | "viewed" | "completed";
  appointmentId: number | null;
  completedBy: number | null;
  completedAt: string | null;
  /** The users whose inbox rows of it the caller acts through (empty: staff acting on another's copy). */
  through: number[];
}

/** The copy of task `taskId` the caller acts on (one read): theirs, their child's, or with task.manage anyone's. */
async function targetOf(ctx: SchoolCtx, taskId: number, query: z.output<typeof ActionQuery>): Promise<Target> {
  const batch = new Batch(ctx);
  const fields = {
    recipientId: taskRecipients.id,
    studentId: taskRecipients.studentId,
    status: taskRecipients.status,
    appointmentId: taskRecipients.appointmentId,
    completedBy: taskRecipients.completedBy,
    completedAt: taskRecipients.completedAt,
    firstName: students.firstName,
  };
  const mine = batch.read(
    TaskInbox.select(ctx, { ...fields, userId: taskInbox.userId })
      .join(TaskRecipients, eq(taskRecipients.id, taskInbox.recipientId))
      .join(Tasks, eq(tasks.id, taskInbox.taskId))
      .join(Students, eq(students.id, taskRecipients.studentId), "left")
      .where(eq(taskInbox.taskId, taskId), byActed(ctx, taskInbox.userId), eq(tasks.status, "published")),
  );
  const manager = ctx.can(permissions.manage);
  const any =
    manager && (query.recipientId !== undefined || query.studentId !== undefined)
      ? batch.read(
          TaskRecipients.select(ctx, fields)
            .join(Students, eq(students.id, taskRecipients.studentId), "left")
            .where(
              eq(taskRecipients.taskId, taskId),
              query.recipientId !== undefined ? eq(taskRecipients.id, query.recipientId) : undefined,
              query.studentId !== undefined ? eq(taskRecipients.studentId, query.studentId) : undefined,
            ),
        )
      : undefined;
  const results = await batch.commit();
  const rows = results
    .get(mine)
    .filter(
      (r) =>
        (query.recipientId === undefined || r.recipientId === query.recipientId) &&
        (query.studentId === undefined || r.studentId === query.studentId),
    );
  const byRecipient = new Map<number, Target>();
  for (const r of rows) {
    const seen = byRecipient.get(r.recipientId);
    if (seen) seen.through.push(r.userId);
    else byRecipient.set(r.recipientId, { ...r, through: [r.userId] });
  }
  const found = [...byRecipient.values()];
  if (found.length === 0) {
    const [other] = any ? results.get(any) : [];
    if (other) return { ...other, through: [] };
    if (query.recipientId !== undefined) throw notFound(m`Recipient ${query.recipientId} of task ${taskId} not found`);
    if (query.studentId !== undefined) throw notFound(m`Task ${taskId} for student ${query.studentId} not found`);
    throw notFound(m`Task ${taskId} not found`);
  }
  const [only, ...more] = found;
  if (!only) throw notFound(m`Task ${taskId} not found`);
  if (more.length) {
    throw unprocessable(
      taskSays.severalCopies(
        taskId,
        found.map((f) => f.studentId),
      ),
    );
  }
  return only;
}

type Action = "viewed" | "complete" | "revert-completion" | "archive" | "unarchive";

/** Who a completion counts for: the parent a delegate acts through (null when the caller completes as themself, or staff). */
const completedFor = (ctx: SchoolCtx, t: Target) =>
  t.through.length === 0 || t.through.includes(ctx.userId ?? 0) ? null : (t.through[0] ?? null);

/** The verb of every copy action: one read to find the copy, then one batch (the change, its audit rows, the copy read back). */
export async function actOnCopy(ctx: SchoolCtx, taskId: number, query: z.output<typeof ActionQuery>, action: Action) {
  const t = await targetOf(ctx, taskId, query);
  const now = ctx.deps.clock.now().toISOString();
  const me = ctx.userId;
  const batch = new Batch(ctx);
  const id = eq(taskRecipients.id, t.recipientId);
  switch (action) {
    case "viewed":
      // Viewing twice changes nothing (no audit row); the first view is the recipient's.
      batch.add(
        ...TaskRecipients.update(
          ctx,
          and(id, eq(taskRecipients.status, "new")),
          { status: "viewed", viewedAt: now, viewedBy: me },
          "view",
        ),
      );
      break;
    case "complete":
      batch.add(
        ...TaskRecipients.updateOne(
          ctx,
          t.recipientId,
          {
            status: "completed",
            completedAt: now,
            completedBy: me,
            completedFor: completedFor(ctx, t),
            viewedAt: sql`coalesce(${taskRecipients.viewedAt}, ${now})`,
            viewedBy: sql`coalesce(${taskRecipients.viewedBy}, ${me})`,
          },
          { action: "complete", where: ne(taskRecipients.status, "completed") },
        ),
      );
      break;
    case "revert-completion":
      if (t.appointmentId !== null) {
        throw conflict(taskSays.completedByBooking(taskId, t.studentId, t.appointmentId));
      }
      batch.add(
        ...TaskRecipients.updateOne(
          ctx,
          t.recipientId,
          { status: "viewed", completedAt: null, completedBy: null, completedFor: null },
          {
            action: "revert-completion",
            where: and(eq(taskRecipients.status, "completed"), sql`${taskRecipients.appointmentId} IS NULL`),
          },
        ),
      );
      break;
    case "archive":
    case "unarchive": {
      if (t.through.length === 0) {
        throw unprocessable(taskSays.notYourFolder(taskId, t.studentId));
      }
      const to = action === "archive";
      const theirs = and(
        eq(taskInbox.recipientId, t.recipientId),
        byActed(ctx, taskInbox.userId),
        eq(taskInbox.archived, !to),
      );
      batch.add(
        // The recipient's trail says whose folder changed (the inbox rows have their own).
        ...TaskRecipients.action(
          ctx,
          and(id, TaskInbox.exists(ctx, theirs)),
          { action, changes: { archived: { old: !to, new: to }, folderOf: { old: null, new: t.through[0] ?? null } } },
          ...TaskInbox.update(ctx, theirs, { archived: to, archivedAt: to ? now : null }, action),
        ),
      );
      break;
    }
  }
  try {
    return await readOne(ctx, batch, t.recipientId);
  } catch (err) {
    if (!(err instanceof GuardFailed)) throw err;
    if (action === "complete") {
      throw conflict(taskSays.completedAlready(taskId, t.studentId));
    }
    throw conflict(taskSays.notCompleted(taskId, t.studentId));
  }
}

/** What every copy action may answer 422 with: copies for several children and no studentId. */
const SEVERAL: ProblemCase = {
  name: "severalCopies",
  summary: "The caller has copies for several children: name studentId",
  detail: taskSays.severalCopies(42, [2001, 2002]),
};

/** Whose copy the examples name: a child's (studentId 2001). */
/** The example copy: a child's. */
const CHILD = 2001;

const NOT_YOURS: ProblemCase = {
  name: "notYourFolder",
  summary: "Staff acting on a copy that is not theirs: the folder is each person's own",
  detail: taskSays.notYourFolder(42, CHILD),
};

/** What each action refuses with besides SEVERAL: its 409s (a change that no longer applies) and further 422s. */
const REFUSALS: Record<Action, { 409?: Message | readonly ProblemCase[]; 422?: readonly ProblemCase[] }> = {
  viewed: {},
  complete: { 409: taskSays.completedAlready(42, CHILD) },
  "revert-completion": {
    409: [
      { name: "notCompleted", summary: "The copy is not completed", detail: taskSays.notCompleted(42, CHILD) },
      {
        name: "booked",
        summary: "Completed by booking an appointment: cancel the appointment instead",
        detail: taskSays.completedByBooking(42, CHILD, 12),
      },
    ],
  },
  archive: { 422: [NOT_YOURS] },
  unarchive: { 422: [NOT_YOURS] },
};

/** An action's errors and examples: SEVERAL for each; a 409 only where the action has its own. */
function refusals(own: (typeof REFUSALS)[Action]): { errors: ProblemStatus[]; examples: ProblemExamples } {
  const refused = { 422: [SEVERAL, ...(own[422] ?? [])] };
  return own[409]
    ? { errors: [409, 422], examples: { 409: own[409], ...refused } }
    : { errors: [422], examples: refused };
}

const actionRoute = (action: Action, operationId: string, summary: string, description: string) =>
  defineRoute({
    method: "patch",
    path: `/api/v1/pending/{id}/${action}`,
    tag: "Permissions and tasks",
    operationId,
    summary,
    description:
      `${description} {id} is the task. A caller with copies for several children names studentId (else 422); ` +
      "task.manage may name any recipient (recipientId). 200: the copy.",
    access: permissions.respond,
    module: "tasks",
    audit: "task-recipient",
    context: actingContext,
    labels: { id: "Task" },
    // Viewing and archiving change nothing twice (no 409 of their own); completing and reverting are guarded.
    ...refusals(REFUSALS[action]),
    request: { params: IdParams, query: ActionQuery },
    responses: { 200: json(CopyRecord, "The copy, changed") },
  });

const actionOperation = (action: Action, route: ReturnType<typeof actionRoute>) =>
  operation(route, (ctx, { params, query }) => actOnCopy(ctx, params.id, query, action));

export const markViewed = actionOperation(
  "viewed",
  actionRoute(
    "viewed",
    "markTaskViewed",
    "Mark a task as viewed",
    "The first view of the copy is recorded; again: nothing changes.",
  ),
);
export const markCompleted = actionOperation(
  "complete",
  actionRoute(
    "complete",
    "completeTask",
    "Mark a task as completed",
    "Records who completed it and, for a delegate, the parent it counts for. Already completed: 409 (two guardians at once: one wins).",
  ),
);
export const revertCompletion = actionOperation(
  "revert-completion",
  actionRoute(
    "revert-completion",
    "revertTaskCompletion",
    "Revert a task's completion",
    "Back to viewed. Not completed: 409; completed by booking an appointment: 409 (cancel the appointment).",
  ),
);
export const archiveTask = actionOperation(
  "archive",
  actionRoute(
    "archive",
    "archiveTask",
    "Archive a task",
    "Moves the caller's own copy to their archive folder (not the other guardian's).",
  ),
);
export const unarchiveTask = actionOperation(
  "unarchive",
  actionRoute("unarchive", "unarchiveTask", "Unarchive a task", "Moves the caller's own copy back to their inbox."),
);

export { actedUsers };
