/**
 * The module registry: one line per functional area. The app's routes, the permission catalogue,
 * the cron dispatcher and the queue dispatcher are all assembled from this list.
 */
import { declarePermissionCatalogue } from "../lib/access";
import { declareFactHandlers } from "../lib/facts";
import type { Module } from "../lib/module";
import { declareSchoolEventHandlers } from "../lib/school-events";
import address from "./address";
import administrativeUser from "./administrative-user";
import applicationModule from "./application-module";
import appointment from "./appointment";
import auditLog from "./audit-log";
import auth from "./auth";
import bulkProcess from "./bulk-process";
import cronHistory from "./cron-history";
import delegate from "./delegate";
import dev from "./dev";
import deviceToken from "./device-token";
import dismissal from "./dismissal";
import document from "./document";
import event from "./event";
import exitPermission from "./exit-permission";
import family from "./family";
import group from "./group";
import health from "./health";
import holidayCycle from "./holiday-cycle";
import invitation from "./invitation";
import legalDocument from "./legal-document";
import lostArticle from "./lost-article";
import notification from "./notification";
import parent from "./parent";
import permission from "./permission";
import resetData from "./reset-data";
import role from "./role";
import roleUser from "./role-user";
import routeAvailability from "./route-availability";
import routeRun from "./route-run";
import routeStudent from "./route-student";
import scheduleConfiguration from "./schedule-configuration";
import school from "./school";
import schoolAdministrator from "./school-administrator";
import schoolConfiguration from "./school-configuration";
import schoolSchedule from "./school-schedule";
import student from "./student";
import task from "./task";
import teacher from "./teacher";
import transport from "./transport";
import transportRules from "./transport-rules";
import transportationSummary from "./transportation-summary";
import trustedAddress from "./trusted-address";
import trustedPerson from "./trusted-person";
import user from "./user";
import version from "./version";
import webhook from "./webhook";

export const MODULES: readonly Module[] = [
  health,
  version,
  auth,
  user,
  permission,
  role,
  roleUser,
  school,
  address,
  schoolAdministrator,
  teacher,
  administrativeUser,
  parent,
  delegate,
  student,
  trustedPerson,
  trustedAddress,
  family,
  group,
  applicationModule,
  schoolConfiguration,
  holidayCycle,
  scheduleConfiguration,
  schoolSchedule,
  document,
  deviceToken,
  bulkProcess,
  transport,
  routeStudent,
  routeAvailability,
  routeRun,
  transportRules,
  exitPermission,
  invitation,
  notification,
  event,
  lostArticle,
  task,
  appointment,
  transportationSummary,
  dismissal,
  cronHistory,
  auditLog,
  legalDocument,
  resetData,
  webhook,
  dev,
];

/** Every permission the modules declare, by id (ids and names are checked unique once, on first use). */
declarePermissionCatalogue(() => {
  const all = MODULES.flatMap((m) => Object.values(m.permissions ?? {})).sort((a, b) => a.id - b.id);
  for (const [i, p] of all.entries()) {
    const before = all[i - 1];
    if (before && (before.id === p.id || all.some((q) => q !== p && q.name === p.name))) {
      throw new Error(`permission ${p.name} (${p.id}) is declared twice`);
    }
  }
  return all;
});

/** Every module's handler of fact changes (src/lib/facts.ts). */
declareFactHandlers(() => MODULES.flatMap((m) => (m.facts ? [m.facts] : [])));

/** Every module's handler of school events (src/lib/school-events.ts). */
declareSchoolEventHandlers(() => MODULES.flatMap((m) => (m.events ? [m.events] : [])));

export { grantsOf, permissionCatalogue } from "../lib/access";
