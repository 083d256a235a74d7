import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "exit-permission",
  paths: ["/api/v1/exit-permission"],
  permissions,
  load: async () => {
    const [d, p] = await Promise.all([import("./downloads"), import("./pass")]);
    // Literal sub-paths before any `{id}` route.
    return {
      operations: [
        d.downloadExitPermissionsOperation,
        d.downloadRouteChangesOperation,
        p.getPickupPassKeyOperation,
        p.getPickupPassOperation,
      ],
    };
  },
});
