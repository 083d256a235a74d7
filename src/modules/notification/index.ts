/**
 * Notifications: each user's inbox (`/api/v1/notification`), sending to an audience (and to a
 * group's guardians, `/api/v1/group/{id}/notification`), preferences
 * (`/api/v1/notification-preference`), the push provider's topics (`/api/v1/user/push-provider`,
 * `/api/v1/user/{id}/push-provider`), the push queue's consumer and the sweep. Other modules
 * send through `notify` (./api.ts).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

/** The push queue (wrangler.toml; ./queue.ts has its messages). */
const PUSH_QUEUE = "school-push";

export default defineModule({
  name: "notification",
  paths: [],
  permissions,
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "sweep-notifications",
      run: async (deps) => (await import("./sweep")).sweepNotifications(deps),
    },
  ],
  consumers: { [PUSH_QUEUE]: async (deps, message) => (await import("./consumer")).consumePush(deps, message) },
  deadLetters: { [PUSH_QUEUE]: async (deps, message) => (await import("./consumer")).deadPush(deps, message) },
});
