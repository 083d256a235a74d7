/**
 * Application modules: functional areas a school may have switched off. The
 * built-in catalogue is declared here, with fixed ids, because routes name their module by key
 * (`defineRoute({ module: "documents" })`, written as `x-module`) and the one authorization path
 * checks it without a lookup: access tokens carry, per school, the set of disabled module ids as a
 * bitmap (`ModuleSet`), as they carry permission ids. A migration inserts these rows
 * (`npm run db:builtins`); test/application-modules.test.ts checks code and database agree.
 *
 * The catalogue is append-only. Modules a super-admin creates through the API take ids from
 * FIRST_CUSTOM_MODULE_ID on: no route checks them (clients read their state), so tokens leave
 * them out.
 */

import { PermissionSet } from "./access";
import { ApiError, say } from "./errors";
import { m } from "./message";

export interface AppModuleDef {
  readonly id: number;
  readonly name: string;
  readonly description: string;
}

export const APP_MODULES = {
  transport: { id: 1, name: "Transport", description: "Vehicles, routes, availability and transportation rules" },
  "exit-permissions": {
    id: 2,
    name: "Exit permissions",
    description: "How a child goes home today: route changes, pickups, absences",
  },
  invitations: { id: 3, name: "Invitations", description: "Invitations sent to students' parents, and their answers" },
  events: { id: 4, name: "Events", description: "School events, shared by a public link, with reminders" },
  tasks: { id: 5, name: "Tasks", description: "What the school asks of parents: read, sign, fill, pay, book" },
  appointments: { id: 6, name: "Appointments", description: "Parent-teacher sessions, days and time slots" },
  "lost-articles": { id: 7, name: "Lost articles", description: "Lost and found: claims, deliveries, donations" },
  notifications: { id: 8, name: "Notifications", description: "The inbox and push notifications" },
  documents: { id: 9, name: "Documents", description: "Documents of the school with signed upload and download URLs" },
  dismissal: {
    id: 10,
    name: "Dismissal",
    description: "The live dismissal board: arrivals, calls, releases at the gate, reunification",
  },
} as const satisfies Record<string, AppModuleDef>;

export type AppModuleKey = keyof typeof APP_MODULES;

/** Ids of modules created through the API start here; built-in ones are below. */
export const FIRST_CUSTOM_MODULE_ID = 1000;

/** A set of module ids: the same base64url bitmap as a set of permission ids. */
export const ModuleSet: typeof PermissionSet = PermissionSet;

/** The 403 of a route whose module the current school has switched off: it names the module. */
export function moduleDisabled(key: AppModuleKey, schoolId: number) {
  return new ApiError(403, say.moduleDisabled(key, schoolId), { title: m`Module disabled` });
}
