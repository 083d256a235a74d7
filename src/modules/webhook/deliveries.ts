/**
 * An endpoint's delivery log (every event sent to it, each attempt with what it answered) and the
 * manual retry of one delivery.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import {
  WEBHOOK_EVENT_TYPES,
  WebhookDeliveries,
  WebhookEndpoints,
  WebhookMessages,
  webhookDeliveries,
  webhookEndpoints,
  webhookMessages,
} from "../../db/schema/webhook";
import { desc, eq } from "../../db/sql";
import { GuardFailed, inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { parseJson } from "../../lib/json";
import { m } from "../../lib/message";
import { Listing, PageQuery, pageOf } from "../../lib/pagination";
import { recordId } from "../../lib/params";
import { IdParams, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";
import { enqueue } from "./emit";
import { permissions } from "./permissions";

const d = webhookDeliveries;

/** The stored body: a JSON object (`{ type, timestamp, data }`). */
const Payload = z.record(z.string(), z.unknown());

const Attempt = z.object({
  at: z.iso.datetime().openapi({ example: "2026-11-23T15:00:05.000Z", description: "When it was made" }),
  statusCode: z
    .number()
    .int()
    .nullable()
    .openapi({ example: 503, description: "The HTTP status the endpoint answered; null when none" }),
  error: z.string().nullable().openapi({ example: "HTTP 503", description: "Why it failed; null for a success" }),
  durationMs: z.number().int().min(0).openapi({ example: 120, description: "How long it took, in milliseconds" }),
});

export const DeliveryRecord = RecordBase.extend({
  webhookId: z.number().int().min(1).openapi({ example: 1, description: "The endpoint" }),
  messageId: z.string().openapi({
    example: "msg_2Lq0eJ0mFfJ2vGm0vB7r",
    description: "The event's `webhook-id`: the same on every attempt, so a receiver recognises a repeat",
  }),
  eventType: z.enum(WEBHOOK_EVENT_TYPES).openapi({ example: "student.created", description: "The event's type" }),
  payload: z
    .record(z.string(), z.unknown())
    .openapi({ example: { type: "student.created" }, description: "The body sent: `{ type, timestamp, data }`" }),
  status: z
    .enum(["pending", "delivered", "failed"])
    .openapi({ description: "pending (being tried), delivered, failed (for good: after about 24 hours of retries)" }),
  attempts: z.number().int().min(0).openapi({ example: 1, description: "Attempts made in this round" }),
  attemptLog: z.array(Attempt).openapi({ description: "Every attempt, oldest first (the last 50)" }),
  nextAttemptAt: z.iso.datetime().nullable().openapi({ description: "When the next attempt is due; null when none" }),
  deliveredAt: z.iso.datetime().nullable().openapi({ description: "When the endpoint accepted it" }),
});

const fields = {
  id: d.id,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
  endpointId: d.endpointId,
  msgId: webhookMessages.msgId,
  eventType: webhookMessages.eventType,
  payload: webhookMessages.payload,
  status: d.status,
  attempts: d.attempts,
  attemptLog: d.attemptLog,
  nextAttemptAt: d.nextAttemptAt,
  deliveredAt: d.deliveredAt,
};

const deliveries = (ctx: SchoolCtx) =>
  WebhookDeliveries.select(ctx, fields).join(WebhookMessages, eq(webhookMessages.id, d.messageId));

type Row = Awaited<ReturnType<ReturnType<typeof deliveries>["all"]>>[number];

const toDelivery = (row: Row): z.output<typeof DeliveryRecord> => ({
  ...timestamps(row),
  webhookId: row.endpointId,
  messageId: row.msgId,
  eventType: row.eventType,
  payload: parseJson(Payload, row.payload),
  status: row.status,
  attempts: row.attempts,
  attemptLog: row.attemptLog,
  nextAttemptAt: row.nextAttemptAt,
  deliveredAt: row.deliveredAt,
});

const listRoute = defineRoute({
  method: "get",
  path: "/api/v1/webhook/{id}/delivery",
  tag: "Operations",
  operationId: "listWebhookDeliveries",
  summary: "A webhook endpoint's deliveries (paginated), newest first, each with its attempts",
  access: permissions.manage,
  scope: "school",
  errors: [404],
  request: {
    params: IdParams,
    query: PageQuery.extend({
      status: z
        .enum(["pending", "delivered", "failed"])
        .optional()
        .openapi({ description: "Only deliveries in this state" }),
    }).strict(),
  },
  responses: { 200: json(pageOf(DeliveryRecord, "WebhookDeliveryPage"), "A page of deliveries") },
});

export const listWebhookDeliveries = operation(listRoute, async (ctx, { params, query }: InputOf<typeof listRoute>) => {
  const batch = new Batch(ctx);
  const endpoint = batch.read(
    WebhookEndpoints.select(ctx, { id: webhookEndpoints.id }).where(eq(webhookEndpoints.id, params.id)),
  );
  const where = [eq(d.endpointId, params.id), query.status ? eq(d.status, query.status) : undefined];
  const rows = batch.read(
    deliveries(ctx)
      .where(...where)
      .orderBy(desc(d.createdAt), desc(d.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
  );
  const total = batch.read(
    WebhookDeliveries.select(ctx)
      .where(...where)
      .count(),
  );
  const results = await batch.commit();
  if (results.get(endpoint).length === 0) throw notFound(m`Webhook ${params.id} not found`);
  return new Listing(results.get(rows).map(toDelivery), results.get(total)[0]?.n ?? 0, query);
});

const retryRoute = defineRoute({
  method: "post",
  path: "/api/v1/webhook/{id}/delivery/{deliveryId}/retry",
  tag: "Operations",
  operationId: "retryWebhookDelivery",
  summary: "Send a delivery again (a new round of attempts, with the same webhook-id)",
  description:
    "A failed or delivered delivery starts a new round of attempts at once; one still pending is a 409. A paused " +
    "endpoint is a 422 (resume it first).",
  access: permissions.manage,
  scope: "school",
  audit: "webhook-delivery",
  errors: [404, 409, 422],
  examples: {
    409: "Delivery 7 is still being tried",
    422: "Webhook 3 is paused; resume it before retrying its deliveries",
  },
  request: {
    params: IdParams.extend({
      deliveryId: recordId().openapi({
        param: { name: "deliveryId", in: "path" },
        example: 1,
        description: "The delivery's id",
      }),
    }),
  },
  responses: { 202: json(DeliveryRecord, "The delivery, pending again") },
});

export const retryWebhookDelivery = operation(retryRoute, async (ctx, { params }: InputOf<typeof retryRoute>) => {
  const at = ctx.deps.clock.now().toISOString();
  const batch = new Batch(ctx);
  const endpoint = batch.read(
    WebhookEndpoints.select(ctx, { status: webhookEndpoints.status }).where(eq(webhookEndpoints.id, params.id)),
  );
  const current = batch.read(deliveries(ctx).where(eq(d.id, params.deliveryId), eq(d.endpointId, params.id)));
  const results = await batch.commit();
  const [owner] = results.get(endpoint);
  const [row] = results.get(current);
  if (!owner) throw notFound(m`Webhook ${params.id} not found`);
  if (!row) throw notFound(m`Delivery ${params.deliveryId} not found`);
  if (owner.status !== "active") {
    throw unprocessable(m`Webhook ${params.id} is paused; resume it before retrying its deliveries`);
  }
  if (row.status === "pending") throw conflict(m`Delivery ${params.deliveryId} is still being tried`);
  const change = new Batch(ctx).add(
    ...WebhookDeliveries.updateOne(
      ctx,
      params.deliveryId,
      { status: "pending", attempts: 0, nextAttemptAt: at, claim: null },
      { action: "retry", where: inList(d.status, ["delivered", "failed"]) },
    ),
  );
  const after = change.read(deliveries(ctx).where(eq(d.id, params.deliveryId)));
  // A retry at the same moment made it pending first: the guard aborts this one.
  const results2 = await change.commit().catch((err: unknown) => {
    if (err instanceof GuardFailed) throw conflict(m`Delivery ${params.deliveryId} is still being tried`);
    throw err;
  });
  const [updated] = results2.get(after);
  if (!updated) throw new Error("webhook delivery: the retried row was not read back");
  await enqueue(ctx, [params.deliveryId]);
  return toDelivery(updated);
});
