import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "cron-history",
  paths: ["/api/v1/cron-history"],
  permissions,
  load: async () => {
    const r = await import("./resource");
    return {
      operations: [
        r.listCronHistories,
        r.createCronHistory,
        r.getCronHistory,
        r.updateCronHistory,
        r.deleteCronHistory,
      ],
    };
  },
});
