import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "transport",
  paths: ["/api/v1/transport", "/api/v1/route"],
  permissions,
  load: async () => ({ operations: [] }),
});
