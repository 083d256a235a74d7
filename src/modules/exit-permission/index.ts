import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "exit-permission",
  paths: ["/api/v1/exit-permission"],
  permissions,
  load: async () => ({ operations: [] }),
});
