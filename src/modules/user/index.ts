import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import { getCurrentUser } from "./routes";

export default defineModule({ name: "user", permissions, operations: [getCurrentUser] });
