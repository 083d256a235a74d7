import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "school-schedule",
  paths: ["/api/v1/school-schedule"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      operations: [
        r.listSchoolSchedules,
        r.getSchoolSchedule,
        r.createSchoolSchedule,
        r.updateSchoolSchedule,
        r.deleteSchoolSchedule,
      ],
    };
  },
});
