/**
 * What an appointment does to its task (the task module's rules, used by the appointment module
 * through ./api.ts): publishing the session sends a held task; a booking completes the family's
 * copy for that child (recording the appointment); cancelling it reverts that completion.
 */
import { TaskRecipients, Tasks, taskRecipients, tasks } from "../../db/schema/task";
import { and, eq, ne, type SQL, type SQLWrapper, sql } from "../../db/sql";
import { inList, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";

/** Sends task `taskId` if it is held (a draft): published now. A published task is left as it is. */
export function publishHeld(ctx: SchoolCtx, taskId: number): Statement[] {
  const now = ctx.deps.clock.now().toISOString();
  return Tasks.update(
    ctx,
    and(eq(tasks.id, taskId), eq(tasks.status, "draft")),
    { status: "published", publishedAt: now },
    "publish",
  );
}

/**
 * A booking of appointment `appointmentId` for `studentId` completes that child's copy of task
 * `taskId` (not already completed), by the booker, for the parent a delegate acts for.
 */
export function bookingCompletes(
  ctx: SchoolCtx,
  input: { taskId: number; studentId: number; appointmentId: number | SQL<number>; completedFor: number | null },
): Statement[] {
  const now = ctx.deps.clock.now().toISOString();
  return TaskRecipients.update(
    ctx,
    and(
      eq(taskRecipients.taskId, input.taskId),
      eq(taskRecipients.studentId, input.studentId),
      ne(taskRecipients.status, "completed"),
    ),
    {
      status: "completed",
      completedAt: now,
      completedBy: ctx.userId,
      completedFor: input.completedFor,
      appointmentId: input.appointmentId,
      viewedAt: sql`coalesce(${taskRecipients.viewedAt}, ${now})`,
      viewedBy: sql`coalesce(${taskRecipients.viewedBy}, ${ctx.userId})`,
    },
    "complete",
  );
}

/** Cancelling appointments reverts the completions their bookings made (back to viewed). */
export function bookingsCancelled(ctx: SchoolCtx, appointmentIds: readonly number[] | SQLWrapper): Statement[] {
  return TaskRecipients.update(
    ctx,
    and(inList(taskRecipients.appointmentId, appointmentIds), eq(taskRecipients.status, "completed")),
    { status: "viewed", completedAt: null, completedBy: null, completedFor: null, appointmentId: null },
    "revert-completion",
  );
}
