import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "notification",
  paths: [],
  permissions,
});
