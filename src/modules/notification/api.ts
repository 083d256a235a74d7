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
export { dispatchAll, type LocalizedSql, localizedSql, type Notice, notify, type Sending } from "./notify";
export { type ReminderSweep, type ReminderTable, sweepReminders } from "./reminders";
