/**
 * Spreadsheet imports of people, by entity: `POST /api/v1/teacher/upload-file` and
 * `POST /api/v1/administrative-user/upload-file` take the id of an uploaded .xlsx (a document of
 * the school, uploaded through its signed URL) and start a bulk process for it, queued for the
 * bulk consumer: the same as `POST /api/v1/bulk-process` with the entity fixed. The bulk-process
 * module owns these paths (the app dispatches the most specific module path first).
 *
 * Access: `bulk-process.write`, the permission that starts any import; what an import may write is
 * decided by the import (it gives only the teacher or staff role, never another).
 *
 * `GET /api/v1/bulk-process/template/{entity}` downloads the spreadsheet to fill in: the header row
 * and one example row.
 */
import { z } from "@hono/zod-openapi";
import { ctxOf } from "../../lib/context";
import { defineRoute, json, jsonBody, operation } from "../../lib/route";
import { XLSX_TYPE, xlsxResponse } from "../../lib/xlsx";
import { IMPORT_ENTITIES, IMPORTS, type ImportEntity } from "./people-import";
import { permissions } from "./permissions";
import { bulkProcessResource } from "./resource";
import { create } from "./routes";
import { enqueue } from "./service";

const UploadFile = z.strictObject({
  documentId: z
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .openapi({ example: 1, description: "The uploaded .xlsx (a document of the school)" }),
});

function upload(path: string, entity: ImportEntity, operationId: string, who: string) {
  const route = defineRoute({
    method: "post",
    path,
    tag: "People",
    operationId,
    summary: `Import ${who} from an uploaded spreadsheet (starts a bulk process)`,
    description:
      `Columns (header row, English or Spanish names, any order): ${IMPORTS[entity].columns.map((c) => c.header).join(", ")}. ` +
      `The template is GET /api/v1/bulk-process/template/${entity}. Follow the process with GET /api/v1/bulk-process/{id}.`,
    access: permissions.write,
    audit: "bulk-process",
    errors: [404, 503],
    request: { body: jsonBody(UploadFile, `${operationId[0]?.toUpperCase()}${operationId.slice(1)}Input`) },
    responses: { 201: json(bulkProcessResource.record, "The queued bulk process") },
  });
  return operation(route, async (c) => {
    const ctx = ctxOf(c);
    const created = await create.run(ctx, { entity, documentId: c.req.valid("json").documentId });
    await enqueue(ctx, created.id);
    return c.json(created, 201);
  });
}

export const uploadTeachersFile = upload("/api/v1/teacher/upload-file", "teachers", "uploadTeachersFile", "teachers");
export const uploadAdministrativeUsersFile = upload(
  "/api/v1/administrative-user/upload-file",
  "administrative-staff",
  "uploadAdministrativeUsersFile",
  "administrative staff",
);

const template = defineRoute({
  method: "get",
  path: "/api/v1/bulk-process/template/{entity}",
  tag: "Operations",
  operationId: "getBulkProcessTemplate",
  summary: "Download the spreadsheet template of an import (header row and one example row)",
  access: permissions.read,
  request: {
    params: z.object({
      entity: z
        .enum(IMPORT_ENTITIES as [ImportEntity, ...ImportEntity[]])
        .openapi({ param: { name: "entity", in: "path" }, example: "teachers" }),
    }),
  },
  responses: {
    200: {
      description: "The .xlsx template",
      content: { [XLSX_TYPE]: { schema: z.string().openapi({ type: "string", format: "binary" }) } },
    },
  },
});

export const getBulkProcessTemplate = operation(template, (c) => {
  const { entity } = c.req.valid("param");
  const spec = IMPORTS[entity];
  return xlsxResponse(`${entity}-template.xlsx`, {
    name: entity,
    columns: spec.columns.map((col) => col.header),
    rows: [spec.example],
  }) as never;
});
