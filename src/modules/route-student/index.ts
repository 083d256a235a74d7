import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "route-student",
  paths: ["/api/v1/route-student"],
  permissions,
  load: async () => ({ operations: [] }),
});
