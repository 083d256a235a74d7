import { defineModule } from "../../lib/module";
import { isWebhookEvent } from "../../lib/school-events";
import { permissions } from "./permissions";

const WEBHOOK_QUEUE = "school-webhook";

export default defineModule({
  name: "webhook",
  paths: ["/api/v1/webhook"],
  permissions,
  // Every school event of a webhook type (src/lib/school-events.ts) goes to the endpoints subscribed to it.
  // Its message and deliveries are written in the verb's batch; the queue hears them once it committed.
  events: async (ctx, events, batch) => {
    const posted = events.filter(isWebhookEvent);
    if (posted.length === 0) return undefined;
    const { webhookEventIn, enqueue } = await import("./emit");
    const created = posted.map((e) => webhookEventIn(ctx, batch, e.type, e.data));
    return (results) =>
      enqueue(
        ctx,
        created.flatMap((slot) => results.get(slot).map((d) => d.id)),
      );
  },
  load: async () => {
    const [r, deliveries] = await Promise.all([import("./resource"), import("./deliveries")]);
    return {
      operations: [
        r.listWebhooks,
        r.getWebhook,
        r.createWebhook,
        r.updateWebhook,
        r.deleteWebhook,
        r.rotateWebhookSecret,
        deliveries.listWebhookDeliveries,
        deliveries.retryWebhookDelivery,
      ],
    };
  },
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "webhook-sweep",
      run: async (deps) => (await import("./sweep")).sweepWebhooks(deps),
    },
  ],
  consumers: { [WEBHOOK_QUEUE]: async (deps, message) => (await import("./deliver")).consumeWebhook(deps, message) },
  deadLetters: { [WEBHOOK_QUEUE]: async (deps, message) => (await import("./deliver")).deadWebhook(deps, message) },
});
