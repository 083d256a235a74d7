import { defineModule } from "../../lib/module";

export default defineModule({
  name: "version",
  paths: ["/api/v1/version"],
  load: async () => ({ operations: [(await import("./routes")).getAppVersion] }),
});
