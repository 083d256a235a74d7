import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "holiday-cycle",
  paths: ["/api/v1/school-holiday-cycle", "/api/v1/school-configuration/:schoolConfigurationId/school-holiday-cycle"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      operations: [
        r.listSchoolHolidayCycles,
        r.getSchoolHolidayCycle,
        r.createSchoolHolidayCycle,
        r.updateSchoolHolidayCycle,
        r.deleteSchoolHolidayCycle,
        r.listSchoolConfigurationHolidayCycles,
      ],
    };
  },
});
