import { defineModule } from "../../lib/module";
import { isWebhookEvent } from "../../lib/school-events";
import { permissions } from "./permissions";

const WEBHOOK_QUEUE = "school-webhook";

export default defineModule({
  name: "webhook",
  paths: ["/api/v1/webhook"],
  permissions,
  // Every school event of a webhook type (src/lib/school-events.ts) goes to the endpoints subscribed to it.
  events: async (ctx, events) => {
    const { emitWebhookEvent } = await import("./emit");
    for (const e of events.filter(isWebhookEvent)) await emitWebhookEvent(ctx, e.type, e.data);
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
