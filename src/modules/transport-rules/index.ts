import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import { getTransportationRules, replaceTransportationRules } from "./routes";

export default defineModule({
  name: "transport-rules",
  permissions,
  operations: [getTransportationRules, replaceTransportationRules],
});
