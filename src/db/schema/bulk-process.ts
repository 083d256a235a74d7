/** Bulk processes (Excel imports). */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { dataTable } from "../table";
import { record, schoolId, users } from "./core";
import { documents } from "./document";

/**
 * An Excel import run by the bulk queue, or an export the queue writes (`school-export`: every
 * record of the school; `user-export`: one person's own data), whose document is the file written.
 */
export const bulkProcesses = sqliteTable(
  "bulk_process",
  {
    ...record,
    schoolId: schoolId(),
    entity: text("entity", {
      enum: [
        "students",
        "teachers",
        "families",
        "groups",
        "route-students",
        "administrative-staff",
        "school-export",
        "user-export",
      ],
    }).notNull(),
    documentId: integer("document_id")
      .notNull()
      .references(() => documents.id, { onDelete: "restrict" }),
    status: text("status", { enum: ["queued", "processing", "completed", "failed"] })
      .notNull()
      .default("queued"),
    totalRows: integer("total_rows").notNull().default(0),
    processedRows: integer("processed_rows").notNull().default(0),
    /** JSON array of `{ row, message }`. */
    errors: text("errors", { mode: "json" })
      .$type<{ row: number; column?: string; message: string }[]>()
      .notNull()
      .default([]),
    createdBy: integer("created_by").references(() => users.id, { onDelete: "set null" }),
    /**
     * The language `errors` are written in: the one the process was created in (src/lib/language.ts),
     * so the consumer and the sweep report to that person in their language. Older rows: English.
     */
    language: text("language", { enum: ["es", "en"] })
      .notNull()
      .default("en"),
    startedAt: text("started_at"),
    finishedAt: text("finished_at"),
  },
  (t) => [
    index("bulk_process_school_idx").on(t.schoolId, t.createdAt),
    index("bulk_process_status_idx").on(t.schoolId, t.status),
    // Deleting a document checks the foreign key: without this index that scans every process.
    index("bulk_process_document_idx").on(t.documentId),
    // The cron sweep looks for processes stuck in "processing" across schools.
    index("bulk_process_running_idx").on(t.status, t.startedAt),
  ],
);

export const BulkProcesses = dataTable(bulkProcesses, { entity: "bulk-process" });
