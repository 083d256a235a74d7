import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "schedule-configuration",
  paths: ["/api/v1/schedule-configuration"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      operations: [
        r.listScheduleConfigurations,
        r.getScheduleConfiguration,
        r.createScheduleConfiguration,
        r.updateScheduleConfiguration,
        r.deleteScheduleConfiguration,
      ],
    };
  },
});
