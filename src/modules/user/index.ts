import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "user",
  paths: ["/api/v1/user"],
  permissions,
  load: async () => ({
    operations: [(await import("./routes")).getCurrentUser, (await import("../role/user-roles")).assignUserRoles],
  }),
});
