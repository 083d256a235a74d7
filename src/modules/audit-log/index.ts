import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import { getAuditLog, listAuditLogs } from "./resource";

export default defineModule({ name: "audit-log", permissions, operations: [listAuditLogs, getAuditLog] });
