import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "exit-permission",
  paths: ["/api/v1/exit-permission"],
  permissions,
  jobs: [
    {
      cron: "0 2 * * *",
      name: "generate-fixed-exit-permissions",
      run: async (deps) => (await import("./fixed")).generateFixedExitPermissions(deps),
    },
  ],
  load: async () => {
    const [read, ask, decide, fixed] = await Promise.all([
      import("./resource"),
      import("./ask-routes"),
      import("./decide"),
      import("./fixed"),
    ]);
    return {
      operations: [
        read.listExitPermissions,
        ask.createExitPermissionOperation,
        ask.dryRunExitPermissionOperation,
        ask.createRouteChangeOperation,
        ask.createNoAfterSchoolOperation,
        ask.createAutoPickupOperation,
        ask.createAbsenceOperation,
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
