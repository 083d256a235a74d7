import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "school-schedule",
  paths: ["/api/v1/school-schedule"],
  permissions,
  load: async () => {
    const [r, day] = await Promise.all([import("./resource"), import("./day")]);
    return {
      operations: [
        r.listSchoolSchedules,
        // Before `/{id}`: "day" is not an id.
        day.getSchoolDayOperation,
        r.getSchoolSchedule,
        r.createSchoolSchedule,
        r.updateSchoolSchedule,
        r.deleteSchoolSchedule,
      ],
    };
  },
});
