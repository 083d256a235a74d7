/** Schools. Their operations come with the schools issue; the permissions exist already. */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({ name: "school", permissions });
