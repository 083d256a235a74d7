/**
 * Spreadsheet imports, by entity: `POST /api/v1/teacher/upload-file`,
 * `POST /api/v1/administrative-user/upload-file`, `POST /api/v1/family/upload-file` and
 * `POST /api/v1/group/upload-file` take the id of an uploaded .xlsx (a document of
 * the school, uploaded through its signed URL) and start a bulk process for it, queued for the
 * bulk consumer: the same as `POST /api/v1/bulk-process` with the entity fixed. The bulk-process
 * module owns these paths (the app dispatches the most specific module path first).
 *
 * Access: `bulk-process.write`, the permission that starts any import, and for people imports the
 * entity's own write permission and the right to give the role the import gives (`mayImport` in
 * ./routes.ts); what an import may write is decided by the import (people imports give only the
 * teacher or staff role, the families import only the parent role, never another).
 *
 * `GET /api/v1/bulk-process/template/{entity}` downloads the spreadsheet to fill in: the header row
 * and one example row.
 */
import { z } from "@hono/zod-openapi";
import { type Message, m } from "../../lib/message";
import { defineRoute, json, jsonBody, operation } from "../../lib/route";
import { type Cell, XLSX_TYPE, xlsxResponse } from "../../lib/xlsx";
import { FAMILY_COLUMNS, FAMILY_EXAMPLE } from "./family-import";
import { GROUP_COLUMNS, GROUP_EXAMPLE } from "./group-import";
import { IMPORTS } from "./people-import";
import { permissions } from "./permissions";
import { bulkProcessResource } from "./resource";
import { ROUTE_STUDENT_COLUMNS, ROUTE_STUDENT_EXAMPLE } from "./route-student-import";
import { create } from "./routes";
import { enqueue } from "./service";
import type { Column } from "./sheet";

const UploadFile = z.strictObject({
  documentId: z
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .openapi({ example: 1, description: "The uploaded .xlsx (a document of the school)" }),
});

/** Every entity with an importer, in the order the document lists them. */
const TEMPLATE_ENTITIES = ["teachers", "administrative-staff", "families", "groups", "route-students"] as const;
type TemplateEntity = (typeof TEMPLATE_ENTITIES)[number];

/** Each one's columns and the template's example row. */
const TEMPLATES: Record<TemplateEntity, { columns: readonly Column<string>[]; example: readonly Cell[] }> = {
  ...IMPORTS,
  families: { columns: FAMILY_COLUMNS, example: FAMILY_EXAMPLE },
  groups: { columns: GROUP_COLUMNS, example: GROUP_EXAMPLE },
  "route-students": { columns: ROUTE_STUDENT_COLUMNS, example: ROUTE_STUDENT_EXAMPLE },
};

function upload(
  path: string,
  entity: TemplateEntity,
  operationId: string,
  who: string,
  tag: "People" | "Groups" | "Transport" = "People",
  module?: "transport",
) {
  const route = defineRoute({
    method: "post",
    path,
    tag,
    operationId,
    summary: `Import ${who} from an uploaded spreadsheet (starts a bulk process)`,
    description:
      `Columns (header row, English or Spanish names, any order): ${TEMPLATES[entity].columns.map((c) => c.header).join(", ")}. ` +
      `The template is GET /api/v1/bulk-process/template/${entity}. Follow the process with GET /api/v1/bulk-process/{id}.`,
    access: permissions.write,
    module,
    audit: "bulk-process",
    errors: [404, 503],
    request: { body: jsonBody(UploadFile, `${operationId[0]?.toUpperCase()}${operationId.slice(1)}Input`) },
    responses: { 201: json(bulkProcessResource.record, "The queued bulk process") },
  });
  return operation(route, async (ctx, { body }) => {
    const created = await create.run(ctx, { body: { entity, documentId: body.documentId } });
    await enqueue(ctx, created.id);
    return created;
  });
}

export const uploadTeachersFile = upload("/api/v1/teacher/upload-file", "teachers", "uploadTeachersFile", "teachers");
export const uploadAdministrativeUsersFile = upload(
  "/api/v1/administrative-user/upload-file",
  "administrative-staff",
  "uploadAdministrativeUsersFile",
  "administrative staff",
);
export const uploadFamiliesFile = upload(
  "/api/v1/family/upload-file",
  "families",
  "uploadFamiliesFile",
  "families (one row per student, with its family and parents)",
);
export const uploadGroupsFile = upload(
  "/api/v1/group/upload-file",
  "groups",
  "uploadGroupsFile",
  "groups with their teachers and students",
  "Groups",
);
export const uploadRouteStudentsFile = upload(
  "/api/v1/route-student/upload-file",
  "route-students",
  "uploadRouteStudentsFile",
  "students on routes (route, stop, student id number, weekdays; a file imported again updates)",
  "Transport",
  "transport",
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
      entity: z.enum(TEMPLATE_ENTITIES).openapi({
        param: { name: "entity", in: "path" },
        example: "teachers",
        description: "What the template is for",
      }),
    }),
  },
  responses: {
    200: {
      description: "The .xlsx template",
      content: { [XLSX_TYPE]: { schema: z.string().openapi({ type: "string", format: "binary" }) } },
    },
  },
});

/** Each template's file and sheet name (in the language of the download). */
const TEMPLATE_NAMES: Record<TemplateEntity, { file: Message; sheet: Message }> = {
  teachers: { file: m`teachers-template.xlsx`, sheet: m`Teachers` },
  "administrative-staff": { file: m`administrative-staff-template.xlsx`, sheet: m`Administrative staff` },
  families: { file: m`families-template.xlsx`, sheet: m`Families` },
  groups: { file: m`groups-template.xlsx`, sheet: m`Groups` },
  "route-students": { file: m`route-students-template.xlsx`, sheet: m`Route students` },
};

export const getBulkProcessTemplate = operation(template, (_ctx, { params }) => {
  const { entity } = params;
  const spec = TEMPLATES[entity];
  return xlsxResponse(TEMPLATE_NAMES[entity].file, {
    name: TEMPLATE_NAMES[entity].sheet,
    columns: spec.columns.map((col) => col.header),
    rows: [spec.example],
  });
});
