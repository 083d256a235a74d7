import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "school-configuration",
  paths: ["/api/v1/school-configuration"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      operations: [
        r.listSchoolConfigurations,
        r.getSchoolConfiguration,
        r.createSchoolConfiguration,
        r.updateSchoolConfiguration,
        r.deleteSchoolConfiguration,
      ],
    };
  },
});
