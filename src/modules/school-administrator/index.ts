/** School administrators: the school-admin role's memberships in the current school. */
import { defineModule } from "../../lib/module";

export default defineModule({
  name: "school-administrator",
  paths: ["/api/v1/school-administrator"],
  load: async () => {
    const r = await import("./resource");
    return {
      operations: [
        r.listSchoolAdministrators,
        r.getSchoolAdministrator,
        r.createSchoolAdministrator,
        r.updateSchoolAdministrator,
        r.deleteSchoolAdministrator,
      ],
    };
  },
});
