/** The data reset (`DELETE /api/v1/reset-data`): development and staging only. */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "reset-data",
  paths: ["/api/v1/reset-data"],
  permissions,
  load: async () => ({ operations: [(await import("./routes")).resetDataOperation] }),
});
