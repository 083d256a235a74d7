import { defineModule } from "../../lib/module";
import { BULK_QUEUE, consumeBulkProcess } from "./consumer";
import { permissions } from "./permissions";
import { getBulkProcess, listBulkProcesses } from "./resource";
import { createBulkProcess, deleteBulkProcess, updateBulkProcess } from "./routes";
import { sweepBulkProcesses } from "./service";

export default defineModule({
  name: "bulk-process",
  permissions,
  operations: [listBulkProcesses, getBulkProcess, createBulkProcess, updateBulkProcess, deleteBulkProcess],
  jobs: [{ cron: "*/5 * * * *", name: "sweep-bulk-processes", run: sweepBulkProcesses }],
  consumers: { [BULK_QUEUE]: consumeBulkProcess },
});
