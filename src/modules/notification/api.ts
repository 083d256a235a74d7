/**
 * The notification module's face: the one verb every feature sends through, and its types.
 *
 * @example
 * import { notify } from "../notification/api";
 * const sending = notify(ctx, {
 *   category: "tasks",
 *   title: { en: "A new task", es: "Una nueva tarea" },   // written by the service: both languages
 *   body: task.title,                                       // written by staff: sent as is
 *   about: { entity: "task", id: Tasks.insertedId() },
 *   audience: { guardiansOf: studentIds },                  // one notification per guardian
 * });
 * await new Batch(ctx).add(...Tasks.insert(ctx, values), ...sending.statements).commit();
 * await sending.dispatch();                                 // after the commit; never rejects
 */
export type { Audience, Localized, NotificationCategory } from "../../db/schema/notification";
export { NOTIFICATION_CATEGORIES } from "../../db/schema/notification";
export { type Notice, notify, type Sending } from "./notify";

/** The operations served under the group module's paths (loaded with its operations). */
export async function groupOperations() {
  const send = await import("./send");
  return [send.sendGroupNotificationOperation];
}

/** The operations served under the user module's paths: the push provider's topics. */
export async function userOperations() {
  const provider = await import("./provider");
  return [
    provider.syncPushProviderRoleOperation,
    provider.cleanPushProviderTenantsOperation,
    provider.getPushProviderUserOperation,
  ];
}
