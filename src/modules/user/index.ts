import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "user",
  paths: ["/api/v1/user"],
  permissions,
  load: async () => {
    const [me, r] = await Promise.all([import("./routes"), import("./resource")]);
    // Literal sub-paths before the `{id}` routes.
    return {
      operations: [
        me.getCurrentUser,
        r.deleteMe,
        r.updateMe,
        r.getMyPermissions,
        r.listLanguages,
        r.getShareUrl,
        r.listUsersByRole,
        r.deleteUsers,
        r.inviteSchool,
        r.inviteInactiveUsers,
        r.inviteSomeUsers,
        r.assignPending,
        r.listUsers,
        r.createUser,
        r.getUser,
        r.updateUser,
        r.deleteUser,
        r.getUserProfile,
      ],
    };
  },
});
