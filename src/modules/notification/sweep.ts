/**
 * The notifications' sweep (every 5 minutes): what a lost or never-sent queue message left
 * behind is queued again, and pushes whose quiet hours ended are queued. Each step claims its
 * rows with a conditional UPDATE that also touches them, so a second run within minutes finds
 * nothing to queue, and a message queued twice does nothing twice (the consumer is idempotent).
 *
 * - a notification whose fan-out has not finished and has not moved for `STALE_MINUTES` (never
 *   dispatched: the Worker stopped between the commit and `dispatch()`, or the queue was down; or
 *   a chunk's message was lost) is fanned out again from its first recipient;
 * - a push left `sending` by a consumer that stopped is pending again;
 * - pending pushes now due and untouched for `STALE_MINUTES` (quiet hours that ended, a lost
 *   message) are queued; one tried `MAX_ATTEMPTS` times without the queue's dead-letter handler
 *   recording it is `failed`.
 */
import { NotificationPushes, Notifications, notificationPushes, notifications } from "../../db/schema/notification";
import { and, eq, gte, isNull, lt, sql } from "../../db/sql";
import { commit } from "../../db/write";
import type { Deps } from "../../deps";
import { jobCtx } from "../../lib/context";
import type { PushMessage } from "./queue";

export const STALE_MINUTES = 5;
/** A fan-out older than this is given up (its copies so far stay). */
const FAN_OUT_WITHIN_HOURS = 24;
export const MAX_ATTEMPTS = 8;

export async function sweepNotifications(deps: Deps): Promise<string> {
  const ctx = jobCtx(deps, "sweep-notifications");
  const { db } = deps;
  const now = deps.clock.now();
  const at = now.toISOString();
  const stale = new Date(now.getTime() - STALE_MINUTES * 60_000).toISOString();
  const since = new Date(now.getTime() - FAN_OUT_WITHIN_HOURS * 3_600_000).toISOString();
  const n = notifications;
  const p = notificationPushes;
  const pending = sql`${p.status} IN ('pending', 'sending')`;
  // Every school's rows: the job has no school (as the bulk sweep), and reads by status and time.
  const [fanOuts, , , due] = await commit(ctx, [
    db
      .update(n)
      .set({ updatedAt: at })
      .where(and(isNull(n.fannedOutAt), lt(n.updatedAt, stale), gte(n.createdAt, since)))
      .returning({ key: n.key, schoolId: Notifications.schoolOf() }),
    db
      .update(p)
      .set({ status: "pending", claim: null, updatedAt: at })
      .where(and(pending, eq(p.status, "sending"), lt(p.updatedAt, stale), sql`${p.dueAt} <= ${at}`)),
    db
      .update(p)
      .set({
        status: "failed",
        claim: null,
        updatedAt: at,
        error: sql`ifnull(${p.error}, '') || ' (retries exhausted)'`,
      })
      .where(and(pending, eq(p.status, "pending"), gte(p.attempts, MAX_ATTEMPTS), sql`${p.dueAt} <= ${at}`)),
    db
      .update(p)
      .set({ updatedAt: at })
      .where(and(pending, eq(p.status, "pending"), sql`${p.dueAt} <= ${at}`, lt(p.updatedAt, stale)))
      .returning({ notificationId: p.notificationId, schoolId: NotificationPushes.schoolOf() }),
  ]);
  const pushes = new Map(due.map((d) => [d.notificationId, d.schoolId]));
  const messages: PushMessage[] = [
    ...fanOuts.map((f) => ({ kind: "fan-out" as const, key: f.key, schoolId: f.schoolId, after: 0 })),
    ...[...pushes].map(([notificationId, schoolId]) => ({ kind: "push" as const, notificationId, schoolId })),
  ];
  // Queues take at most 100 messages a call.
  for (let i = 0; i < messages.length; i += 100) {
    await deps.queues.push.sendBatch(messages.slice(i, i + 100).map((body) => ({ body })));
  }
  return `${fanOuts.length} fan-outs and ${pushes.size} notifications' pushes queued (${due.length} pushes)`;
}
