import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "transportation-summary",
  paths: ["/api/v1/transportation-summary"],
  permissions,
  load: async () => {
    const s = await import("./summary");
    return { operations: [s.listPendingAuthorizationsOperation, s.getTransportationSummaryOperation] };
  },
});
