import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";

export default defineModule({
  name: "audit-log",
  paths: ["/api/v1/audit-log"],
  permissions,
  load: async () => {
    const { listAuditLogs, getAuditLog } = await import("./resource");
    return { operations: [listAuditLogs, getAuditLog] };
  },
});
