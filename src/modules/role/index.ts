/** Roles: sets of permissions (who holds which role is the role-user module's). */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "role",
  paths: ["/api/v1/role"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      // Literal paths before `/{id}`: Hono tries a path's routes in the order they are added.
      operations: [
        r.listAllRoles,
        r.exportRoles,
        r.listRoles,
        r.createRoleOperation,
        r.getRole,
        r.updateRoleOperation,
        r.deleteRoleOperation,
      ],
    };
  },
});
