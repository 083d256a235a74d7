import { defineModule } from "../../lib/module";

export default defineModule({
  name: "health",
  paths: ["/api/health"],
  load: async () => ({ operations: [(await import("./routes")).getHealth] }),
});
