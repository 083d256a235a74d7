/**
 * The webhooks' sweep (every 5 minutes): a delivery still pending `STALE_MINUTES` after its attempt
 * was due (its queue message lost, never sent because the Worker stopped after the event's batch,
 * or an attempt whose consumer stopped) is queued again. Claimed by a conditional UPDATE that
 * touches `updated_at`, so a second run within minutes queues nothing twice; and the consumer makes
 * one attempt per due time whatever arrives.
 */
import { WebhookDeliveries, webhookDeliveries } from "../../db/schema/webhook";
import { and, eq, lt } from "../../db/sql";
import { commit } from "../../db/write";
import type { Deps } from "../../deps";
import { jobCtx } from "../../lib/context";
import type { WebhookQueueMessage } from "./queue";

export const STALE_MINUTES = 10;

export async function sweepWebhooks(deps: Deps): Promise<string> {
  const ctx = jobCtx(deps, "webhook-sweep");
  const now = deps.clock.now();
  const at = now.toISOString();
  const stale = new Date(now.getTime() - STALE_MINUTES * 60_000).toISOString();
  const d = webhookDeliveries;
  // Every school's rows: the job has no school, and reads by status and due time (its index).
  const [due] = await commit(ctx, [
    deps.db
      .update(d)
      .set({ updatedAt: at })
      .where(and(eq(d.status, "pending"), lt(d.nextAttemptAt, stale), lt(d.updatedAt, stale)))
      .returning({ deliveryId: d.id, schoolId: WebhookDeliveries.schoolOf() }),
  ]);
  const messages: { body: WebhookQueueMessage }[] = due.map((r) => ({
    body: { kind: "webhook", deliveryId: r.deliveryId, schoolId: r.schoolId },
  }));
  for (let i = 0; i < messages.length; i += 100) await deps.queues.webhook.sendBatch(messages.slice(i, i + 100));
  return `${messages.length} webhook deliveries queued again`;
}
