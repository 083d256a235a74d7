/** The webhook queue's messages: one per delivery (an event to one endpoint). */
import { z } from "@hono/zod-openapi";

export const WEBHOOK_QUEUE = "school-webhook";

export const WebhookQueueMessage = z.object({
  kind: z.literal("webhook"),
  deliveryId: z.number().int(),
  schoolId: z.number().int(),
});
export type WebhookQueueMessage = z.infer<typeof WebhookQueueMessage>;

/**
 * Seconds before each retry of a failed attempt (the Standard Webhooks schedule, cut to 24 hours):
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 6 h. After the last, the delivery has failed for good.
 */
export const RETRY_SCHEDULE = [5, 300, 1800, 7200, 18_000, 36_000, 21_600] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE.length + 1;
/** Failed attempts in a row, across deliveries, after which an endpoint is paused and the school told. */
export const PAUSE_AFTER = 10;
/** How long one attempt may take before it counts as failed. */
export const ATTEMPT_TIMEOUT_MS = 15_000;
