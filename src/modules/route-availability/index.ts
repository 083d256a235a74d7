import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "route-availability",
  paths: ["/api/v1/route-availability", "/api/v1/route-availability-student"],
  permissions,
  load: async () => ({ operations: [] }),
});
