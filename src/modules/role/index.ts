/** Roles (sets of permissions) and role memberships (who holds which role in the school). */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "role",
  paths: ["/api/v1/role", "/api/v1/role-user"],
  permissions,
  load: async () => {
    const [r, u] = await Promise.all([import("./resource"), import("./role-user")]);
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
        u.assignMultipleRoles,
        u.removeRoleFromUser,
        u.listRoleUsers,
        u.createRoleUser,
        u.getRoleUser,
        u.updateRoleUser,
        u.deleteRoleUser,
      ],
    };
  },
});
