/**
 * Webhook endpoints (docs/domain.md, "Webhooks"): a school admin (`webhook.manage`) registers the
 * URLs of the school's other systems and the event types each wants. The signing secret is made
 * by the service, answered once (on creation and on rotation) and kept encrypted.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import {
  WEBHOOK_EVENT_TYPES,
  WebhookEndpoints,
  type WebhookEventType,
  webhookEndpoints,
} from "../../db/schema/webhook";
import { eq, sql } from "../../db/sql";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { unprocessable } from "../../lib/errors";
import { m, verbatim } from "../../lib/message";
import { defineResource, IdParams, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { text } from "../../lib/text";
import { permissions } from "./permissions";
import { newSecret, sealSecret } from "./secret";
import { refusedDestination } from "./url";

/** How long the secret before a rotation still signs deliveries (both signatures are sent). */
export const ROTATION_OVERLAP_HOURS = 24;

export const EventType = z.enum(WEBHOOK_EVENT_TYPES).openapi({
  example: "exit-permission.confirmed",
  description:
    "An event type: exit-permission.confirmed, exit-permission.withdrawn (a confirmed permission no longer " +
    "holds), dismissal.released, route.boarded, route.dropped (a rider on a bus run), student.created, student.updated",
});

const EventTypes = z
  .array(EventType)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .openapi({ description: "The event types to deliver to it (each once; at least one)" });

const Url = z
  .url()
  .max(2000)
  .openapi({
    example: "https://sis.example.org/hooks/school",
    description:
      "Where events are posted. In production an https URL to a public address (no localhost, private, link-local " +
      "or metadata addresses); redirects are not followed",
  });

export const WebhookRecord = RecordBase.extend({
  url: z.string().openapi({ example: "https://sis.example.org/hooks/school", description: "Where events are posted" }),
  description: z.string().nullable().openapi({ example: "Student information system", description: "A note" }),
  eventTypes: z.array(EventType).openapi({ description: "The event types delivered to it" }),
  status: z
    .enum(["active", "paused"])
    .openapi({ description: "active receives events; paused (by an admin, or after repeated failures) does not" }),
  pausedReason: z.string().nullable().openapi({
    example: "Paused after 10 failed attempts in a row",
    description: "Why the service paused it; null otherwise",
  }),
  failureStreak: z
    .number()
    .int()
    .min(0)
    .openapi({ example: 0, description: "Failed attempts since its last successful delivery" }),
  previousSecretUntil: z.iso.datetime().nullable().openapi({
    example: "2026-11-24T15:00:00.000Z",
    description: "After a rotation: until when deliveries are also signed with the previous secret",
  }),
});

export const WebhookWithSecret = WebhookRecord.extend({
  secret: z.string().openapi({
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    description: "The signing secret (Standard Webhooks): shown only in this answer; keep it",
  }),
});

type Row = typeof webhookEndpoints.$inferSelect;

export const toWebhook = (_ctx: Ctx, row: Row): z.output<typeof WebhookRecord> => ({
  ...timestamps(row),
  url: row.url,
  description: row.description,
  eventTypes: row.eventTypes,
  status: row.status,
  pausedReason: row.pausedReason,
  failureStreak: row.failureStreak,
  previousSecretUntil: row.previousSecretUntil,
});

export const webhookResource = defineResource({
  name: "webhook",
  plural: "webhooks",
  label: m`Webhook`,
  path: "/api/v1/webhook",
  tag: "Operations",
  scope: "school",
  data: WebhookEndpoints,
  record: WebhookRecord,
  toRecord: toWebhook,
});

/** The URL's refusal under this deployment's rules, as a 422. */
async function checkUrl(ctx: SchoolCtx, url: string) {
  const refused = await refusedDestination(url, ctx.deps.config.environment === "development", ctx.deps.resolver);
  if (refused) throw unprocessable(m`This URL cannot receive webhooks: ${verbatim(refused)}`);
}

/** Each type once, in the document's order. */
const distinct = (types: readonly WebhookEventType[]) => WEBHOOK_EVENT_TYPES.filter((t) => types.includes(t));

export const listWebhooks = webhookResource.list({
  access: permissions.manage,
  filters: {
    status: {
      schema: z.enum(["active", "paused"]).optional().openapi({ description: "Only active, or only paused endpoints" }),
      where: (_ctx, v: "active" | "paused") => eq(webhookEndpoints.status, v),
      example: "active",
    },
  },
  sort: { createdAt: webhookEndpoints.createdAt },
  summary: "List the school's webhook endpoints",
});

export const getWebhook = webhookResource.get({ access: permissions.manage });

const WebhookCreate = z.strictObject({
  url: Url,
  description: text({ max: 200 }).optional(),
  eventTypes: EventTypes,
});

const createRoute = defineRoute({
  method: "post",
  path: "/api/v1/webhook",
  tag: "Operations",
  operationId: "createWebhook",
  summary: "Register a webhook endpoint (its signing secret is in this answer only)",
  description:
    "Events of the chosen types are posted to the URL, signed as the Standard Webhooks specification says " +
    "(`webhook-id`, `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 with the secret answered here, once). " +
    "A URL production may not call (not https, a private or loopback address) is a 422.",
  access: permissions.manage,
  scope: "school",
  audit: "webhook",
  errors: [422],
  examples: { 422: "This URL cannot receive webhooks: not https" },
  request: { body: jsonBody(WebhookCreate, "WebhookCreate") },
  responses: { 201: json(WebhookWithSecret, "The endpoint, with its secret (shown once)") },
});

export const createWebhook = operation(createRoute, async (ctx, { body }: InputOf<typeof createRoute>) => {
  await checkUrl(ctx, body.url);
  const secret = newSecret();
  const batch = new Batch(ctx).add(
    ...WebhookEndpoints.insert(ctx, {
      url: body.url,
      description: body.description ?? null,
      eventTypes: distinct(body.eventTypes),
      secret: await sealSecret(ctx.deps.config.authSecret, secret),
    }),
  );
  const read = batch.read(WebhookEndpoints.select(ctx).where(eq(webhookEndpoints.id, WebhookEndpoints.insertedId())));
  const [row] = (await batch.commit()).get(read);
  if (!row) throw new Error("webhook: the created row was not read back");
  return { ...toWebhook(ctx, row), secret };
});

export const updateWebhook = webhookResource.update({
  access: permissions.manage,
  input: z.object({
    url: Url.optional(),
    description: text({ max: 200 }).nullable().optional(),
    eventTypes: EventTypes.optional(),
    status: z
      .enum(["active", "paused"])
      .optional()
      .openapi({ description: "paused stops deliveries; active resumes them (and forgets the failures)" }),
  }),
  errors: [422],
  examples: { 422: "This URL cannot receive webhooks: not https" },
  values: async (ctx, { body }) => {
    if (body.url !== undefined) await checkUrl(ctx, body.url);
    return {
      ...(body.url !== undefined && { url: body.url }),
      ...(body.description !== undefined && { description: body.description }),
      ...(body.eventTypes && { eventTypes: distinct(body.eventTypes) }),
      ...(body.status && { status: body.status, pausedReason: null }),
      ...(body.status === "active" && { failureStreak: 0 }),
    };
  },
  summary: "Update a webhook endpoint: its URL, description, event types, or pause and resume it",
});

export const deleteWebhook = webhookResource.delete({
  access: permissions.manage,
  summary: "Delete a webhook endpoint (and its delivery log)",
});

const rotateRoute = defineRoute({
  method: "patch",
  path: "/api/v1/webhook/{id}/rotate-secret",
  tag: "Operations",
  operationId: "rotateWebhookSecret",
  summary: "Rotate a webhook endpoint's signing secret (the new one is in this answer only)",
  description:
    `For ${ROTATION_OVERLAP_HOURS} hours deliveries carry two signatures, with the new secret and with the ` +
    "previous one, so the receiver can switch over without missing an event.",
  access: permissions.manage,
  scope: "school",
  audit: "webhook",
  request: { params: IdParams },
  responses: { 200: json(WebhookWithSecret, "The endpoint, with its new secret (shown once)") },
});

export const rotateWebhookSecret = operation(rotateRoute, async (ctx, { params }: InputOf<typeof rotateRoute>) => {
  const secret = newSecret();
  const until = new Date(ctx.deps.clock.now().getTime() + ROTATION_OVERLAP_HOURS * 3600_000).toISOString();
  const sealed = await sealSecret(ctx.deps.config.authSecret, secret);
  const row = await webhookResource.changeAndRead(ctx, params.id, {
    action: "rotate-secret",
    set: { secret: sealed, previousSecret: sql`${webhookEndpoints.secret}`, previousSecretUntil: until },
  });
  return { ...row, secret };
});
