/** Administrative staff: the built-in "staff" role's people in the current school, with their profile (position, employee number). */
import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "administrative-user",
  paths: ["/api/v1/administrative-user"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    // The export before `{id}`: `/export` is not an id.
    return {
      operations: [
        r.exportAdministrativeUsers,
        r.listAdministrativeUsers,
        r.getAdministrativeUser,
        r.createAdministrativeUser,
        r.updateAdministrativeUser,
        r.deleteAdministrativeUser,
      ],
    };
  },
});
