/**
 * Exports through the bulk queue (the file is written by export.ts):
 *
 * - `POST /api/v1/school/{id}/export`: every record of one school (the super-admin: any school;
 *   a school's administrator, `school.export`: their own, another school's id is a 404);
 * - `POST /api/v1/user/me/export`: the caller's own data in the current school (a privacy request;
 *   any member, for themself only).
 *
 * Each answers 202 with the export's bulk process, queued; its `GET` (`.../export/{exportId}`)
 * answers the process and, once completed, a presigned URL to download the file. The file is a
 * document of the school under an entity the document routes do not serve (`exports`,
 * `user-exports`: src/modules/document/resource.ts), so only these routes hand it out.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { columnsOf } from "../../db/query";
import { BulkProcesses, bulkProcesses } from "../../db/schema/bulk-process";
import { Schools } from "../../db/schema/core";
import { Documents, documents } from "../../db/schema/document";
import { and, eq } from "../../db/sql";
import type { SchoolCtx, UserCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { currentLanguage } from "../../lib/language";
import { m } from "../../lib/message";
import { orNull } from "../../lib/nullable";
import { recordId } from "../../lib/params";
import { IdParams } from "../../lib/resource";
import { defineRoute, json, operation } from "../../lib/route";
import { signedUrlFields } from "../../lib/signed-url";
import { SIGNED_URL_SECONDS } from "../document/api";
import { permissions as schoolPermissions } from "../school/api";
import { EXPORT_CONTENT_TYPE } from "./export";
import { permissions } from "./permissions";
import { bulkProcessResource } from "./resource";
import { enqueue } from "./service";

type ExportEntity = "school-export" | "user-export";

const Download = z
  .object(signedUrlFields(SIGNED_URL_SECONDS, EXPORT_CONTENT_TYPE))
  .openapi("ExportDownload", { description: "A presigned GET of the export's file (.jsonl.gz)" });

const ExportRecord = bulkProcessResource.record
  .extend({
    download: orNull(Download).openapi({
      description: "Once the process is completed: a presigned URL to download the file; null before",
    }),
  })
  .openapi("Export");

const ExportParams = IdParams.extend({
  exportId: recordId().openapi({
    param: { name: "exportId", in: "path" },
    example: 1,
    description: "The export's bulk process id",
  }),
});

const MyExportParams = z.object({
  id: recordId().openapi({
    param: { name: "id", in: "path" },
    example: 1,
    description: "The export's bulk process id",
  }),
});

/** The school `id` as the caller reaches it: a school admin only their own (another is a 404). */
async function schoolCtx(ctx: UserCtx, id: number): Promise<UserCtx<number>> {
  // As every school route decides (the school module's `visibleSchools`): the platform's operators
  // (school.write) reach every school, a member only the one they act in.
  if (ctx.schoolId !== id && !ctx.can(schoolPermissions.write)) throw notFound(m`School ${id} not found`);
  if (!(await Schools.find(ctx, id))) throw notFound(m`School ${id} not found`);
  return { ...ctx, schoolId: id };
}

/** The process and its file, with a presigned download once it is completed. */
async function answer(ctx: SchoolCtx, row: typeof bulkProcesses.$inferSelect, slug: string) {
  const record = bulkProcessResource.toRecord(ctx, row);
  const download =
    row.status === "completed"
      ? await ctx.deps.signer.sign({
          key: slug,
          method: "GET",
          expiresIn: SIGNED_URL_SECONDS,
          now: ctx.deps.clock.now(),
        })
      : null;
  return { ...record, download };
}

/** Records the file and the process in one batch, then queues it. */
async function start(ctx: SchoolCtx, entity: ExportEntity) {
  const now = ctx.deps.clock.now();
  const stamp = now.toISOString().replace(/[-:]|\.\d{3}/g, "");
  const school = ctx.schoolId;
  const who = entity === "school-export" ? "school" : `user-${ctx.userId}`;
  const slug = `${school}/documents/export-${who}-${stamp}-${crypto.randomUUID().slice(0, 8)}.jsonl.gz`;
  const batch = new Batch(ctx)
    .add(
      ...Documents.insert(ctx, {
        name: `export-${who}-${stamp}.jsonl.gz`,
        slug,
        entity: entity === "school-export" ? "exports" : "user-exports",
        contentType: EXPORT_CONTENT_TYPE,
      }),
    )
    .add(
      ...BulkProcesses.insert(ctx, {
        entity,
        // The document this batch has just inserted.
        documentId: Documents.insertedId(),
        status: "queued",
        createdBy: ctx.userId,
        // Its errors, if any, are written in the language of whoever asked.
        language: currentLanguage(),
      }),
    );
  const created = batch.read(BulkProcesses.select(ctx).where(eq(bulkProcesses.id, BulkProcesses.insertedId())));
  const [row] = (await batch.commit()).get(created);
  if (!row) throw new Error("the export's process was not read back");
  await enqueue(ctx, row.id);
  return answer(ctx, row, slug);
}

/** One export of `entity` (a person's: only their own), with its file's key; 404 otherwise. */
async function read(ctx: SchoolCtx, id: number, entity: ExportEntity) {
  const found = await BulkProcesses.select(ctx, { ...columnsOf(bulkProcesses), slug: documents.slug })
    .join(Documents, eq(documents.id, bulkProcesses.documentId))
    .where(
      and(
        eq(bulkProcesses.id, id),
        eq(bulkProcesses.entity, entity),
        entity === "user-export" ? eq(bulkProcesses.createdBy, ctx.userId ?? 0) : undefined,
      ),
    )
    .first();
  if (!found) throw notFound(m`Export ${id} not found`);
  const { slug, ...row } = found;
  return answer(ctx, row, slug);
}

const SCHOOL_DESCRIPTION =
  "Writes every record of the school as JSON lines (gzipped): a first line saying what the file is, " +
  'one line per row (`{"table":"student","row":{...}}`, the row\'s SQL columns) of the school\'s own row and ' +
  'of every table with rows of the school, then one line per object-storage key its rows name (`{"object":"1/documents/x.pdf"}`). ' +
  "The bulk queue writes it: follow the process with GET /api/v1/school/{id}/export/{exportId}, which answers a " +
  "presigned download URL once it is completed. The super-admin exports any school; a school administrator " +
  "(school.export) their own. docs/operations.md says what to do with it.";

export const exportSchool = operation(
  defineRoute({
    method: "post",
    path: "/api/v1/school/{id}/export",
    tag: "Schools",
    operationId: "exportSchool",
    summary: "Export every record of a school (202: the bulk process writing the file)",
    description: SCHOOL_DESCRIPTION,
    access: permissions.export,
    scope: "platform",
    audit: "bulk-process",
    errors: [503],
    labels: { id: m`School` },
    request: { params: IdParams },
    responses: { 202: json(ExportRecord, "The export, queued") },
  }),
  async (ctx, { params }) => start(await schoolCtx(ctx, params.id), "school-export"),
);

export const getSchoolExport = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/school/{id}/export/{exportId}",
    tag: "Schools",
    operationId: "getSchoolExport",
    summary: "A school export: its bulk process, and a presigned download URL once completed",
    access: permissions.export,
    scope: "platform",
    labels: { id: m`School`, exportId: m`Export` },
    request: { params: ExportParams },
    responses: { 200: json(ExportRecord, "The export") },
  }),
  async (ctx, { params }) => read(await schoolCtx(ctx, params.id), params.exportId, "school-export"),
);

export const exportMyData = operation(
  defineRoute({
    method: "post",
    path: "/api/v1/user/me/export",
    tag: "People",
    operationId: "exportMyData",
    summary: "Export my own data in the current school (a privacy request; 202: the bulk process writing the file)",
    description:
      "Writes, as JSON lines (gzipped), the caller's user row and what is theirs in the current school: their " +
      "memberships, parent and guardian rows, their children and families, the permissions and tasks of those " +
      "children, their notifications, devices (token values left out), delegations and answers; never a row " +
      "that names another family's student, family or parent. Follow it with GET /api/v1/user/me/export/{id}, " +
      "which answers a presigned download URL once it is completed.",
    access: "member",
    audit: "bulk-process",
    errors: [503],
    responses: { 202: json(ExportRecord, "The export, queued") },
  }),
  (ctx) => start(ctx, "user-export"),
);

export const getMyExport = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/user/me/export/{id}",
    tag: "People",
    operationId: "getMyExport",
    summary: "One of my exports: its bulk process, and a presigned download URL once completed",
    access: "member",
    labels: { id: m`Export` },
    request: { params: MyExportParams },
    responses: { 200: json(ExportRecord, "The export") },
  }),
  (ctx, { params }) => read(ctx, params.id, "user-export"),
);
