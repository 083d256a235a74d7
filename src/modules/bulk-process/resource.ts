/**
 * Bulk processes: the record of an Excel import. Creating one queues it for the bulk
 * consumer (consumer.ts), which moves it queued -> processing -> completed | failed.
 *
 * What a user may change (PUT) is only `{ "status": "queued" }` on a failed process: queue it again
 * (after uploading a fixed file, or once the queue is back). Everything else about a process is
 * written by the consumer. A running process cannot be deleted.
 */
import { z } from "@hono/zod-openapi";
import { BulkProcesses, bulkProcesses } from "../../db/schema/bulk-process";
import { eq } from "../../db/sql";
import { m } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { permissions } from "./permissions";

export const ENTITIES = bulkProcesses.entity.enumValues;
/** What a spreadsheet may hold: every entity but the exports, which only their own routes start (export.ts). */
export const IMPORT_ENTITIES = [
  "students",
  "teachers",
  "families",
  "groups",
  "route-students",
  "administrative-staff",
] as const satisfies readonly (typeof ENTITIES)[number][];
export const STATUSES = bulkProcesses.status.enumValues;

const RowErrorSchema = z
  .object({
    row: z.number().int().openapi({ description: "Spreadsheet row (1 is the header); 0 for the file as a whole" }),
    column: z
      .string()
      .optional()
      .openapi({ description: "The column, as headed in the file, when the error is one cell's" }),
    message: z.string().openapi({ description: "What is wrong with the row or cell" }),
  })
  .openapi("BulkProcessRowError");

/** The errors column holds a JSON array written only by this module; anything else reads as none. */
function parseErrors(stored: unknown): z.infer<typeof RowErrorSchema>[] {
  const parsed = z.array(RowErrorSchema).safeParse(stored);
  return parsed.success ? parsed.data : [];
}

export const bulkProcessResource = defineResource({
  name: "bulkProcess",
  plural: "bulkProcesses",
  label: m`Bulk process`,
  path: "/api/v1/bulk-process",
  tag: "Operations",
  scope: "school",
  data: BulkProcesses,
  record: RecordBase.extend({
    entity: z.enum(ENTITIES).openapi({
      description: "What the spreadsheet holds; or, for `school-export` and `user-export`, what the file written holds",
    }),
    documentId: z
      .number()
      .int()
      .openapi({ description: "The uploaded spreadsheet (a document of the school); of an export, the file written" }),
    status: z.enum(STATUSES).openapi({ description: "queued -> processing -> completed | failed" }),
    totalRows: z.number().int().openapi({ description: "Data rows in the file (the header aside); 0 until read" }),
    processedRows: z.number().int().openapi({ description: "Rows imported so far (the refused ones are in `errors`)" }),
    errors: z.array(RowErrorSchema).openapi({ description: "Each refused row or cell, with why; [] when none" }),
    createdBy: z.number().int().nullable().openapi({ description: "The user who started it" }),
    startedAt: z.iso.datetime().nullable().openapi({ description: "When the queue started it; null while queued" }),
    finishedAt: z.iso.datetime().nullable().openapi({ description: "When it completed or failed; null before" }),
  }),
  toRecord: (_ctx, row) => ({
    ...timestamps(row),
    entity: row.entity,
    documentId: row.documentId,
    status: row.status,
    totalRows: row.totalRows,
    processedRows: row.processedRows,
    errors: parseErrors(row.errors),
    createdBy: row.createdBy,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
  }),
});

export const listBulkProcesses = bulkProcessResource.list({
  access: permissions.read,
  filters: {
    status: {
      schema: z.enum(STATUSES).optional().openapi({ description: "Only processes in this status" }),
      where: (_ctx, v: (typeof STATUSES)[number]) => eq(bulkProcesses.status, v),
      example: "failed",
    },
  },
  sort: { createdAt: bulkProcesses.createdAt },
  // Newest first: the list is an import history.
  defaultOrder: [
    { by: bulkProcesses.createdAt, desc: true },
    { by: bulkProcesses.id, desc: true },
  ],
});

export const getBulkProcess = bulkProcessResource.get({ access: permissions.read });
