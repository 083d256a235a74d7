/**
 * Emitting an event: one message (the payload every endpoint receives, with its Standard Webhooks
 * id) and one delivery per active endpoint of the school subscribed to its type, written in ONE
 * batch (nothing at all when no endpoint wants it), then one queue message per delivery.
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
 * Sends `type` with `data` to every endpoint of the current school subscribed to it. Call it after
 * the change it reports has committed. Never throws: an event whose queue messages were lost is
 * sent by the sweep (`sweepWebhooks`), since its deliveries are stored first.
 * @example await emitWebhookEvent(ctx, "student.created", { student: { id, firstName, ... } });
 */
export async function emitWebhookEvent(ctx: SchoolCtx, type: WebhookEventType, data: Record<string, unknown>) {
  try {
    const now = ctx.deps.clock.now();
    const at = now.toISOString();
    const msgId = `msg_${randomToken(18)}`;
    const payload = JSON.stringify({ type, timestamp: at, data });
    const endpoints = WebhookEndpoints.select(ctx, { id: webhookEndpoints.id }).where(subscribed(type)).getSQL();
    const e = WebhookEndpoints.alias("e");
    const message = WebhookMessages.select(ctx, { id: webhookMessages.id })
      .where(eq(webhookMessages.msgId, msgId))
      .getSQL();
    const batch = new Batch(ctx);
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
    const created = batch.read(
      WebhookDeliveries.select(ctx, { id: webhookDeliveries.id })
        .join(WebhookMessages, eq(webhookMessages.id, webhookDeliveries.messageId))
        .where(eq(webhookMessages.msgId, msgId)),
    );
    const deliveries = (await batch.commit()).get(created);
    await enqueue(
      ctx,
      deliveries.map((d) => d.id),
    );
  } catch (err) {
    log.error("webhook event not emitted", { type, ...errorFields(err) });
  }
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
