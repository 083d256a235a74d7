/**
 * Exit permissions: how a student goes home on a date (route change, no after-school, auto pickup,
 * absence), asked by families and staff and decided by the one rules engine; fixed ones made daily
 * ahead; the Excel downloads; the public pickup pass and the key that verifies it.
 */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "exit-permission",
  paths: ["/api/v1/exit-permission"],
  permissions,
  // Every change of a fact the afternoon's decisions stand on decides them again (src/lib/facts.ts).
  facts: async (ctx, change) => (await import("./redecide")).redecide(ctx, change),
  jobs: [
    {
      cron: "0 2 * * *",
      name: "generate-fixed-exit-permissions",
      run: async (deps) => (await import("./fixed")).generateFixedExitPermissions(deps),
    },
  ],
  load: async () => {
    const [read, ask, decide, fixed, downloads, pass] = await Promise.all([
      import("./resource"),
      import("./ask-routes"),
      import("./decide"),
      import("./fixed"),
      import("./downloads"),
      import("./pass"),
    ]);
    return {
      // Literal sub-paths (`/download`, `/pass-key`, `/public`, `/pass-revocations`, `/type`) before `/{id}`.
      operations: [
        read.listExitPermissions,
        ask.createExitPermissionOperation,
        ask.dryRunExitPermissionOperation,
        ask.createRouteChangeOperation,
        ask.createNoAfterSchoolOperation,
        ask.createAutoPickupOperation,
        ask.createAbsenceOperation,
        downloads.downloadExitPermissionsOperation,
        downloads.downloadRouteChangesOperation,
        pass.getPickupPassKeyOperation,
        pass.getPickupPassOperation,
        pass.listPickupPassRevocationsOperation,
        read.listExitPermissionsByTypeOperation,
        read.getExitPermission,
        decide.updateExitPermissionOperation,
        decide.deleteExitPermissionOperation,
        decide.confirmExitPermissionOperation,
        decide.respondExitPermissionOperation,
        ...fixed.fixedOperations,
        fixed.listGeneratedOperation,
      ],
    };
  },
});
