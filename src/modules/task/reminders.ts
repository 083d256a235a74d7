/**
 * Scheduled reminders of a task (`POST /api/v1/pending-reminder`): staff pick when; the 5-minute
 * sweep (`sendDueReminders`) sends each once, at or after that instant, to the recipients who have
 * not completed the task by then, exactly as "send reminder now" does (`reminderOf`).
 *
 * Once only: the sweep claims a reminder (`scheduled` -> `sent`) with a conditional UPDATE in the
 * same batch as its notices, so a second run, a concurrent one, or a run after a crash between the
 * batch and the fan-out never sends it again (the notification module's own sweep dispatches a
 * committed notification whose fan-out was lost).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { REMINDER_STATUSES, TaskReminders, Tasks, taskReminders, tasks } from "../../db/schema/task";
import { and, eq, sql } from "../../db/sql";
import { GuardFailed } from "../../db/write";
import type { Deps } from "../../deps";
import type { SchoolCtx } from "../../lib/context";
import { dateTime } from "../../lib/dates";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { m } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { sweepReminders } from "../notification/api";
import { recipientsOf, whoOf } from "./audience";
import { taskSays } from "./common";
import { reminderOf, TASK_REMINDER_STATUS_TEXT } from "./manage";
import { permissions } from "./permissions";

const ReminderRecord = RecordBase.extend({
  taskId: z.number().int(),
  sendAt: z.iso.datetime().openapi({ example: "2026-12-02T14:00:00.000Z", description: "When it goes out (UTC)" }),
  status: z.enum(REMINDER_STATUSES).openapi({ example: "scheduled", description: TASK_REMINDER_STATUS_TEXT }),
  sentAt: z.iso.datetime().nullable(),
  sentCount: z.number().int().nullable().openapi({ description: "Recipients it reminded when it was sent" }),
  createdBy: z.number().int().nullable(),
});

const reminder = defineResource({
  name: "pendingReminder",
  plural: "pendingReminders",
  label: m`Task reminder`,
  path: "/api/v1/pending-reminder",
  tag: "Permissions and tasks",
  scope: "school",
  module: "tasks",
  data: TaskReminders,
  record: ReminderRecord,
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    taskId: row.taskId,
    sendAt: row.sendAt,
    status: row.status,
    sentAt: row.sentAt,
    sentCount: row.sentCount,
    createdBy: row.createdBy,
  }),
});

/** How far ahead a reminder may be scheduled. */
const MAX_DAYS_AHEAD = 365;

export const createPendingReminder = reminder.create({
  access: permissions.manage,
  input: z.object({
    taskId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ example: 1 }),
    sendAt: dateTime(
      "When to send it: in the future, at most a year ahead (sent by the 5-minute sweep: up to 5 minutes later)",
      "2026-12-02T08:00:00-06:00",
    ),
  }),
  values: async (ctx, { body }) => {
    const t = await Tasks.select(ctx, { status: tasks.status }).where(eq(tasks.id, body.taskId)).first();
    if (!t) throw notFound(m`Task ${body.taskId} not found`);
    if (t.status !== "published") throw conflict(taskSays.heldForSession(body.taskId));
    const at = new Date(body.sendAt);
    const now = ctx.deps.clock.now();
    if (at.getTime() <= now.getTime()) throw unprocessable(taskSays.reminderPast);
    if (at.getTime() > now.getTime() + MAX_DAYS_AHEAD * 86_400_000) {
      throw unprocessable(taskSays.reminderTooFar(MAX_DAYS_AHEAD));
    }
    return { taskId: body.taskId, sendAt: at.toISOString(), status: "scheduled", createdBy: ctx.userId };
  },
  summary: "Schedule a task reminder",
  description:
    "At sendAt (within the 5-minute sweep after it) the recipients who have not completed the task by then are reminded, " +
    "once. A task held for its session (draft) is a 409; a past sendAt a 422.",
  errors: [422],
  // Reminders have no unique key: the only 409 is the held task's.
  examples: {
    409: taskSays.heldForSession(7),
    422: [
      { name: "past", summary: "A sendAt that is not in the future", detail: taskSays.reminderPast },
      { name: "tooFar", summary: "A sendAt more than a year ahead", detail: taskSays.reminderTooFar(MAX_DAYS_AHEAD) },
    ],
  },
});

/**
 * The sweep: every school's reminders due now, each claimed and sent in one batch (claim, notices,
 * the task's `remindedAt`). A claim that matched nothing (another run sent it) sends nothing.
 */
export async function sendDueReminders(deps: Deps): Promise<string> {
  const counts = await sweepReminders(deps, {
    job: "send-task-reminders",
    module: "tasks",
    data: TaskReminders,
    about: taskReminders.taskId,
    send: async (ctx, id, taskId) => ((await sendOne(ctx, id, taskId)) ? "sent" : "skipped"),
  });
  const skipped = counts.get("skipped") ?? 0;
  return `${counts.get("sent") ?? 0} task reminders sent${skipped ? `, ${skipped} taken by another run or their task gone` : ""}`;
}

/** One reminder: read its task and who has not completed it, then claim it and send, in one batch. */
async function sendOne(ctx: SchoolCtx, id: number, taskId: number): Promise<boolean> {
  const read = new Batch(ctx);
  const row = read.read(
    Tasks.select(ctx, { id: tasks.id, title: tasks.title, status: tasks.status }).where(eq(tasks.id, taskId)),
  );
  const pending = read.read(recipientsOf(ctx, taskId, true));
  const results = await read.commit();
  const [t] = results.get(row);
  const who = whoOf(results.get(pending));
  const count = who.studentIds.length + who.userIds.length;
  const now = ctx.deps.clock.now().toISOString();
  const claim = TaskReminders.updateOne(
    ctx,
    id,
    { status: t?.status === "published" ? "sent" : "cancelled", sentAt: now, sentCount: count },
    { action: "send", where: and(eq(taskReminders.status, "scheduled"), sql`${taskReminders.sendAt} <= ${now}`) },
  );
  const batch = new Batch(ctx).add(...claim);
  const reminding = t && t.status === "published" && count > 0 ? reminderOf(ctx, t, who) : undefined;
  if (reminding) batch.add(...reminding.statements);
  try {
    await batch.commit();
  } catch (err) {
    if (err instanceof GuardFailed) return false;
    throw err;
  }
  await reminding?.sending.dispatch();
  return true;
}
