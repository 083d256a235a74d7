import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "invitation",
  paths: ["/api/v1/invitation", "/api/v1/invitation-student-response"],
  permissions,
  load: async () => ({ operations: [] }),
});
