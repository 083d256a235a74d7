import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "transport-rules",
  paths: ["/api/v1/rules-transportation"],
  permissions,
  load: async () => {
    const { getTransportationRules, replaceTransportationRules } = await import("./routes");
    return { operations: [getTransportationRules, replaceTransportationRules] };
  },
});
