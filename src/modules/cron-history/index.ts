import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "cron-history",
  paths: ["/api/v1/cron-history"],
  permissions,
  load: async () => {
    const { listCronHistories, getCronHistory } = await import("./resource");
    return { operations: [listCronHistories, getCronHistory] };
  },
});
