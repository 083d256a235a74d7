/**
 * The audit trail's reader: the rows of the current school, or, on platform routes (no current
 * school: the super-admin's view), every school's. Apart from the table's file because the audit
 * writer (src/db/audit.ts), which every accessor uses, imports the table.
 */
import { dataTable } from "../table";
import { auditLog } from "./audit-log";

export const AuditLog = dataTable(auditLog, { entity: "audit-log", tenancy: "school-or-platform" });
