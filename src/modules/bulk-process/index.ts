import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import { BULK_QUEUE } from "./queue";

export default defineModule({
  name: "bulk-process",
  paths: ["/api/v1/bulk-process"],
  permissions,
  load: async () => {
    const [{ listBulkProcesses, getBulkProcess }, routes] = await Promise.all([
      import("./resource"),
      import("./routes"),
    ]);
    return {
      operations: [
        listBulkProcesses,
        getBulkProcess,
        routes.createBulkProcess,
        routes.updateBulkProcess,
        routes.deleteBulkProcess,
      ],
    };
  },
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "sweep-bulk-processes",
      run: async (deps) => (await import("./service")).sweepBulkProcesses(deps),
    },
  ],
  consumers: { [BULK_QUEUE]: async (deps, message) => (await import("./consumer")).consumeBulkProcess(deps, message) },
});
