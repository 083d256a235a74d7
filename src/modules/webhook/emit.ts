/**
 * Emitting an event: one message (the payload every endpoint receives, with its Standard Webhooks
 * id) and one delivery per active endpoint of the school subscribed to its type, written in ONE
 * batch — the verb's own when it tells a school event with `schoolEventsIn` — (nothing at all when
 * no endpoint wants it), then one queue message per delivery.
 */
import { Batch } from "../../db/batch";
import {
  WebhookDeliveries,
  WebhookEndpoints,
  type WebhookEventType,
  WebhookMessages,
  webhookDeliveries,
  webhookEndpoints,
  webhookMessages,
} from "../../db/schema/webhook";
import { and, eq, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { randomToken } from "../../lib/crypto";
import { errorFields, log } from "../../lib/log";
import { WEBHOOK_QUEUE, type WebhookQueueMessage } from "./queue";

/** The school's active endpoints that want `type`. */
const subscribed = (type: WebhookEventType) =>
  and(
    eq(webhookEndpoints.status, "active"),
    sql`EXISTS (SELECT 1 FROM json_each(${webhookEndpoints.eventTypes}) WHERE value = ${type})`,
  );

/**
 * Sends `type` with `data` to every endpoint of the current school subscribed to it, in a batch of
 * its own. Call it after the change it reports has committed. Never throws: an event whose queue
 * messages were lost is sent by the sweep (`sweepWebhooks`), since its deliveries are stored first.
 * @example await emitWebhookEvent(ctx, "student.created", { student: { id, firstName, ... } });
 */
export async function emitWebhookEvent(ctx: SchoolCtx, type: WebhookEventType, data: Record<string, unknown>) {
  try {
    const batch = new Batch(ctx);
    const created = webhookEventIn(ctx, batch, type, data);
    await enqueue(
      ctx,
      (await batch.commit()).get(created).map((d) => d.id),
    );
  } catch (err) {
    log.error("webhook event not emitted", { type, ...errorFields(err) });
  }
}

/**
 * The event's message and its deliveries, added to `batch` (the verb's own: written with its change
 * or not at all); answers the slot of the deliveries created, to `enqueue` once it committed.
 */
export function webhookEventIn(ctx: SchoolCtx, batch: Batch, type: WebhookEventType, data: Record<string, unknown>) {
  const at = ctx.deps.clock.now().toISOString();
  const msgId = `msg_${randomToken(18)}`;
  const payload = JSON.stringify({ type, timestamp: at, data });
  const endpoints = WebhookEndpoints.select(ctx, { id: webhookEndpoints.id }).where(subscribed(type)).getSQL();
  const e = WebhookEndpoints.alias("e");
  const message = WebhookMessages.select(ctx, { id: webhookMessages.id })
    .where(eq(webhookMessages.msgId, msgId))
    .getSQL();
  batch.add(
    WebhookMessages.insertFrom(
      ctx,
      (row) => sql`SELECT ${row({ msgId, eventType: type, payload })} WHERE EXISTS (${endpoints})`,
      at,
    ),
    WebhookDeliveries.insertFrom(
      ctx,
      (row) =>
        sql`SELECT ${row({
          endpointId: sql`${e.table.id}`,
          messageId: sql`(${message})`,
          status: "pending",
          attempts: 0,
          attemptLog: sql`${"[]"}`,
          nextAttemptAt: at,
        })} FROM ${e.from} WHERE ${e.where(ctx, sql`${e.table.id} IN (${endpoints}) AND EXISTS (${message})`)}`,
      at,
    ),
  );
  return batch.read(
    WebhookDeliveries.select(ctx, { id: webhookDeliveries.id })
      .join(WebhookMessages, eq(webhookMessages.id, webhookDeliveries.messageId))
      .where(eq(webhookMessages.msgId, msgId)),
  );
}

/** One queue message per delivery (at most 100 a call, as Queues allow). */
export async function enqueue(ctx: SchoolCtx, deliveryIds: readonly number[]) {
  if (deliveryIds.length === 0 || ctx.schoolId === null) return;
  const schoolId = ctx.schoolId;
  const messages: { body: WebhookQueueMessage }[] = deliveryIds.map((deliveryId) => ({
    body: { kind: "webhook", deliveryId, schoolId },
  }));
  try {
    for (let i = 0; i < messages.length; i += 100) await ctx.deps.queues.webhook.sendBatch(messages.slice(i, i + 100));
  } catch (err) {
    log.warn("webhook deliveries not enqueued; the sweep will", { queue: WEBHOOK_QUEUE, ...errorFields(err) });
  }
}
