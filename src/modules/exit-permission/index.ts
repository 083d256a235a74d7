import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "exit-permission",
  paths: ["/api/v1/exit-permission"],
  permissions,
  load: async () => {
    const [read, ask, decide] = await Promise.all([import("./resource"), import("./ask-routes"), import("./decide")]);
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
      ],
    };
  },
});
