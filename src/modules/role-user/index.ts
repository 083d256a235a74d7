/**
 * Role memberships: who holds which role in the school (`/api/v1/role-user`, a user's roles at
 * `/api/v1/user/{id}/roles`). Above both the roles and the people it joins; its permissions are the
 * role module's.
 */
import { defineModule } from "../../lib/module";

export default defineModule({
  name: "role-user",
  paths: ["/api/v1/role-user", "/api/v1/user/:id/roles"],
  load: async () => {
    const [u, roles] = await Promise.all([import("./role-user"), import("./user-roles")]);
    return {
      // Literal paths before `/{id}`: Hono tries a path's routes in the order they are added.
      operations: [
        u.assignMultipleRoles,
        u.removeRoleFromUser,
        u.listRoleUsers,
        u.createRoleUser,
        u.getRoleUser,
        u.updateRoleUser,
        u.deleteRoleUser,
        roles.assignUserRoles,
      ],
    };
  },
});
