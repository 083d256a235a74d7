/**
 * The webhook module's face: what other modules may use of it. Emitting an event costs one D1
 * round trip (nothing written when no endpoint of the school wants it) and is loaded on first use.
 */
import type { WebhookEventType } from "../../db/schema/webhook";
import type { SchoolCtx } from "../../lib/context";

export type { WebhookEventType } from "../../db/schema/webhook";
export { WEBHOOK_EVENT_TYPES } from "../../db/schema/webhook";

/**
 * Sends an event to every endpoint of the current school subscribed to `type`, signed, through the
 * webhook queue. Call it after the change it reports committed; it never throws.
 * @example await emitWebhookEvent(ctx, "dismissal.released", { date: "2026-11-23", studentIds: [7] });
 */
export async function emitWebhookEvent(ctx: SchoolCtx, type: WebhookEventType, data: Record<string, unknown>) {
  await (await import("./emit")).emitWebhookEvent(ctx, type, data);
}
