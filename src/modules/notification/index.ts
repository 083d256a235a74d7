/**
 * Notifications: each user's inbox (`/api/v1/notification`), sending to an audience,
 * preferences (`/api/v1/notification-preference`), the push queue's consumer and the sweep.
 * Other modules send through `notify` (./api.ts). It also serves paths below other modules' (the
 * more specific path wins, src/app.ts): the send to a group's guardians
 * (`/api/v1/group/{id}/notification`) and the push provider's operations
 * (`/api/v1/user/push-provider/...`, `/api/v1/user/{id}/push-provider`).
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

/** The push queue (wrangler.toml; ./queue.ts has its messages). */
const PUSH_QUEUE = "school-push";

export default defineModule({
  name: "notification",
  paths: [
    "/api/v1/notification",
    "/api/v1/notification-preference",
    "/api/v1/group/:id/notification",
    "/api/v1/user/push-provider",
    "/api/v1/user/:id/push-provider",
  ],
  permissions,
  load: async () => {
    const [inbox, send, pref, provider] = await Promise.all([
      import("./inbox"),
      import("./send"),
      import("./preference"),
      import("./provider"),
    ]);
    // Literal sub-paths before the `{id}` routes.
    return {
      operations: [
        inbox.listNotificationsOperation,
        send.sendNotificationOperation,
        inbox.deleteAllNotificationsOperation,
        inbox.getNotificationOperation,
        inbox.updateNotificationOperation,
        inbox.deleteNotificationOperation,
        inbox.markNotificationReadOperation,
        pref.getMyNotificationPreferenceOperation,
        pref.saveNotificationPreferenceOperation,
        pref.getNotificationPreference,
        pref.updateNotificationPreference,
        pref.deleteNotificationPreference,
        send.sendGroupNotificationOperation,
        provider.syncPushProviderRoleOperation,
        provider.cleanPushProviderTenantsOperation,
        provider.getPushProviderUserOperation,
      ],
    };
  },
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
