/**
 * The audit trail: one row per state change, written in the same D1 batch as the change
 * (src/db/audit.ts). Rows are never updated or deleted (triggers refuse it) and outlive the
 * records and schools they describe, so `school_id` is a plain integer, not a foreign key.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** When the change happened (the clock of the request or job that made it). */
    createdAt: text("created_at").notNull(),
    /** Always `created_at`: audit rows never change (the record contract has both). */
    updatedAt: text("updated_at").notNull(),
    /** The school the record belongs to; null for platform records (the permission catalogue). */
    schoolId: integer("school_id"),
    /** Who: a signed-in user, a scheduled job or an import (a bulk process). */
    actorType: text("actor_type", { enum: ["user", "job", "import"] }).notNull(),
    /** The user id, or the bulk process id of an import; null for a job. */
    actorId: integer("actor_id"),
    /** The job name, or null. */
    actorName: text("actor_name"),
    /** The resource, as in its permissions: `document`, `device-token`, ... */
    entity: text("entity").notNull(),
    recordId: integer("record_id").notNull(),
    /** `create`, `update`, `delete` or the name of an action (`confirm`, `claim`, ...). */
    action: text("action").notNull(),
    /** JSON `{ field: { old, new } }` of the fields that changed; secrets are masked. */
    changes: text("changes").notNull(),
    requestId: text("request_id"),
  },
  (t) => [
    index("audit_log_school_idx").on(t.schoolId, t.createdAt),
    index("audit_log_record_idx").on(t.schoolId, t.entity, t.recordId, t.createdAt),
    index("audit_log_entity_idx").on(t.schoolId, t.entity, t.createdAt),
    index("audit_log_actor_idx").on(t.schoolId, t.actorType, t.actorId, t.actorName, t.createdAt),
    index("audit_log_created_idx").on(t.createdAt),
  ],
);
