import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "permission",
  paths: ["/api/v1/permission"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      operations: [r.listPermissions, r.getPermission, r.createPermission, r.updatePermission, r.deletePermission],
    };
  },
});
