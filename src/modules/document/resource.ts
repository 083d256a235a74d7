/**
 * Documents: files of a school in object storage. The record's `slug` is the object key,
 * `{schoolId}/documents/{file name}`, so a school's keys never leave its own prefix. The list is
 * the current school's documents: every query is scoped to it.
 * Presigned URLs are an action next to it (signed-url.ts).
 */
import { z } from "@hono/zod-openapi";
import { BulkProcesses, bulkProcesses } from "../../db/schema/bulk-process";
import { Documents, documents } from "../../db/schema/document";
import { and, eq, sql } from "../../db/sql";
import { badRequest, conflict } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { defineResource, RecordBase, timestamps } from "../../lib/resource";
import { contains, searchTerm } from "../../lib/search";
import { SAFE_TEXT, text, UNSAFE_TEXT } from "../../lib/text";
import { permissions } from "./permissions";

export const MAX_FILE_NAME = 200;

/**
 * The shape of a key: a school id, `documents`, then one file-name segment with no slash,
 * backslash or control character. Whether the school is the caller's is checked by `ownSlug`.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const SLUG = /^[1-9]\d{0,9}\/documents\/[^/\\\u0000-\u001f\u007f-\u009f]{1,200}$/;

export const Slug = z
  .string()
  .max(MAX_FILE_NAME + 25)
  .regex(
    SLUG,
    zodMessage(
      m`Expected {schoolId}/documents/{file name}: a file name of 1 to ${MAX_FILE_NAME} characters without /, \\ or control characters`,
    ),
  )
  .refine((v) => !v.includes(".."), zodMessage(m`Must not contain ..`))
  // A file name `.` is a dot segment: URL normalisation drops it, so the URL would sign another key.
  .refine((v) => !v.endsWith("/."), zodMessage(m`The file name must not be .`))
  .regex(SAFE_TEXT, UNSAFE_TEXT)
  .openapi({
    example: "1/documents/report-card-2026.pdf",
    description: "Object key: `{schoolId}/documents/{file name}`, where schoolId is the current school",
  });

export const DocumentName = text({ max: MAX_FILE_NAME }).openapi({
  example: "Report card 2026",
  description: "The document's name, as people see it",
});

/** A slug is only usable under the caller's own school prefix. */
export function ownSlug(slug: string, schoolId: number | null) {
  const prefix = `${schoolId}/documents/`;
  if (schoolId === null || !slug.startsWith(prefix)) {
    throw badRequest(m`Invalid body: slug must start with ${prefix}`, [
      { path: "slug", message: m`Must start with ${prefix} (the current school's documents)` },
    ]);
  }
}

export const DocumentRecord = RecordBase.extend({
  name: z.string().openapi({ example: "Report card 2026", description: "The document's name, as people see it" }),
  slug: z.string().openapi({
    example: "1/documents/report-card-2026.pdf",
    description: "Its object key: `{schoolId}/documents/{file name}`, unique in the school",
  }),
  contentType: z
    .string()
    .nullable()
    .openapi({ example: "application/pdf", description: "Declared when an upload URL was issued; null before" }),
  entity: z.string().openapi({ example: "documents", description: "What the document belongs to" }),
});

export const toDocument = (row: typeof documents.$inferSelect): z.infer<typeof DocumentRecord> => ({
  ...timestamps(row),
  name: row.name,
  slug: row.slug,
  contentType: row.contentType,
  entity: row.entity,
});

/**
 * The entities of the files the service writes itself: school and personal exports
 * (src/modules/bulk-process/export.ts). Only their own routes reach them: the document routes
 * neither list, read, sign nor overwrite them (an export is not every document reader's to download).
 */
export const EXPORT_ENTITIES = ["exports", "user-exports"] as const;
const notExport = sql`${documents.entity} NOT IN ('exports', 'user-exports')`;

export const documentResource = defineResource({
  name: "document",
  plural: "documents",
  label: m`Document`,
  path: "/api/v1/documents",
  tag: "Documents",
  scope: "school",
  module: "documents",
  data: Documents,
  record: DocumentRecord,
  toRecord: (_ctx, row) => toDocument(row),
  conflictMessage: m`A document with this slug already exists in this school`,
  visibleTo: () => notExport,
});

/** Documents the document routes serve: every one but the exports. */
export const servedDocument = (slug: string) => and(eq(documents.slug, slug), notExport);

export const listDocuments = documentResource.list({
  access: permissions.read,
  filters: {
    name: {
      schema: searchTerm("Part of the document name"),
      where: (_ctx, v: string) => contains(documents.nameSearch, v),
      example: "report",
    },
  },
  sort: { name: documents.name, createdAt: documents.createdAt },
  summary: "List the current school's documents (paginated)",
});

export const getDocument = documentResource.get({ access: permissions.read });

export const createDocument = documentResource.create({
  access: permissions.write,
  input: z.object({ name: DocumentName, slug: Slug }),
  values: (ctx, { body }) => {
    ownSlug(body.slug, ctx.schoolId);
    return body;
  },
  summary: "Create a document for the current school",
});

export const updateDocument = documentResource.update({
  access: permissions.write,
  input: z.object({ name: DocumentName.optional(), slug: Slug.optional() }),
  values: (ctx, { body }) => {
    if (body.slug !== undefined) ownSlug(body.slug, ctx.schoolId);
    return body;
  },
});

export const deleteDocument = documentResource.delete({
  access: permissions.write,
  // A bulk process keeps its source file (the foreign key restricts the delete): say which.
  check: async (ctx, { id }) => {
    const used = await BulkProcesses.select(ctx, { id: bulkProcesses.id })
      .where(eq(bulkProcesses.documentId, id))
      .first();
    if (used) throw conflict(m`Document ${id} is the file of bulk process ${used.id}; delete that first`);
  },
  errors: [409],
  examples: { 409: "Document 42 is the file of bulk process 7; delete that first" },
});
