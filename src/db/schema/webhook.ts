/**
 * Webhooks (docs/domain.md, "Webhooks"): the endpoints a school's other systems registered, the
 * events the school emitted for them, and one delivery per event and endpoint with its attempts.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { record, schoolId } from "./core";

/** The event types an endpoint may subscribe to (the OpenAPI document lists them). */
export const WEBHOOK_EVENT_TYPES = [
  "exit-permission.confirmed",
  "exit-permission.withdrawn",
  "dismissal.released",
  "route.boarded",
  "route.dropped",
  "student.created",
  "student.updated",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** An endpoint of the school's: where events are posted, signed with its secret. */
export const webhookEndpoints = sqliteTable(
  "webhook_endpoint",
  {
    ...record,
    schoolId: schoolId(),
    url: text("url").notNull(),
    description: text("description"),
    eventTypes: text("event_types", { mode: "json" }).$type<WebhookEventType[]>().notNull(),
    /** `active` receives deliveries; `paused` (by an admin, or after repeated failures) does not. */
    status: text("status", { enum: ["active", "paused"] })
      .notNull()
      .default("active"),
    /** Why it was paused by the service (failures); null when active or paused by an admin. */
    pausedReason: text("paused_reason"),
    /** Failed attempts since the last success: at the limit the endpoint is paused. */
    failureStreak: integer("failure_streak").notNull().default(0),
    /** The signing secret (`whsec_...`), encrypted with the service's key (src/modules/webhook/secret.ts). */
    secret: text("secret").notNull(),
    /** The secret before the last rotation, signed with too until `previous_secret_until`. */
    previousSecret: text("previous_secret"),
    previousSecretUntil: text("previous_secret_until"),
  },
  (t) => [
    index("webhook_endpoint_school_idx").on(t.schoolId, t.createdAt),
    index("webhook_endpoint_status_idx").on(t.schoolId, t.status, t.createdAt),
  ],
);

/** One event the school emitted, as the payload every endpoint receives (`webhook-id` = `msg_id`). */
export const webhookMessages = sqliteTable(
  "webhook_message",
  {
    ...record,
    schoolId: schoolId(),
    /** The Standard Webhooks message id (`msg_...`): the same on every attempt, so a receiver can dedupe. */
    msgId: text("msg_id").notNull(),
    eventType: text("event_type", { enum: WEBHOOK_EVENT_TYPES }).notNull(),
    /** The JSON body sent: `{ type, timestamp, data }`. */
    payload: text("payload").notNull(),
  },
  (t) => [uniqueIndex("webhook_message_msg_uq").on(t.msgId), index("webhook_message_school_idx").on(t.schoolId)],
);

/** What one attempt answered. */
export interface WebhookAttempt {
  at: string;
  /** The HTTP status answered, or null when none was (a refused connection, a timeout). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** One event to one endpoint: at most one per pair, however often its queue message arrives. */
export const webhookDeliveries = sqliteTable(
  "webhook_delivery",
  {
    ...record,
    schoolId: schoolId(),
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    messageId: integer("message_id")
      .notNull()
      .references(() => webhookMessages.id, { onDelete: "cascade" }),
    status: text("status", { enum: ["pending", "delivered", "failed"] })
      .notNull()
      .default("pending"),
    /** Attempts made in this round (a manual retry starts a new round). */
    attempts: integer("attempts").notNull().default(0),
    attemptLog: text("attempt_log", { mode: "json" }).$type<WebhookAttempt[]>().notNull().default([]),
    /** When the next attempt is due (while one is under way: when its claim lapses). */
    nextAttemptAt: text("next_attempt_at"),
    /** The consumer run that holds the attempt under way (one sender at a time). */
    claim: text("claim"),
    deliveredAt: text("delivered_at"),
  },
  (t) => [
    uniqueIndex("webhook_delivery_uq").on(t.endpointId, t.messageId),
    index("webhook_delivery_endpoint_idx").on(t.schoolId, t.endpointId, t.createdAt),
    index("webhook_delivery_message_idx").on(t.messageId),
    index("webhook_delivery_pending_idx").on(t.status, t.nextAttemptAt),
  ],
);

export const WebhookEndpoints = dataTable(webhookEndpoints, {
  entity: "webhook",
  secret: ["secret", "previousSecret"],
});
export const WebhookMessages = dataTable(webhookMessages, { entity: "webhook-message" });
export const WebhookDeliveries = dataTable(webhookDeliveries, { entity: "webhook-delivery" });
