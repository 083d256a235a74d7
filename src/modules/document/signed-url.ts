/**
 * `POST /api/v1/documents/{entity}/signed-url`: a presigned object-storage URL for a
 * document of the current school. PUT (the default) is an upload: the document record is created
 * or updated for the slug in the same statement, and the URL signs the declared content type.
 * GET is a download of a document that exists. URLs expire after SIGNED_URL_SECONDS.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Documents, documents } from "../../db/schema/document";
import { eq } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { ApiError, notFound } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { defineRoute, type InputOf, json, jsonBody, operation } from "../../lib/route";
import { signedUrlFields } from "../../lib/signed-url";
import { permissions } from "./permissions";
import { DocumentName, DocumentRecord, documentResource, ownSlug, Slug, servedDocument, toDocument } from "./resource";

/** Short enough that a leaked URL is soon useless, long enough for a phone to upload a scan. */
export const SIGNED_URL_SECONDS = 5 * 60;

/** `type/subtype` (RFC 6838 restricted names), without parameters: it is signed as sent. */
const MediaType = z
  .string()
  .max(255)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/,
    zodMessage(m`Expected a media type like application/pdf`),
  )
  .openapi({ example: "application/pdf" });

const EntityParams = z.object({
  entity: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,39}$/, zodMessage(m`Expected a lowercase kebab-case word like documents`))
    .openapi({
      param: { name: "entity", in: "path" },
      example: "documents",
      description: "What the document belongs to: documents, students, tasks, events, ...",
    }),
});

const SignedUrlBody = z
  .object({
    contentType: MediaType.describe("Media type of the file; an upload must send exactly this content-type"),
    slug: Slug,
    name: DocumentName,
    method: z.enum(["GET", "PUT"]).default("PUT").openapi({ description: "PUT to upload (default), GET to download" }),
  })
  .strict();

const SignedDocument = DocumentRecord.extend(signedUrlFields(SIGNED_URL_SECONDS, "application/pdf")).openapi(
  "SignedDocument",
);

/**
 * The service verb: checks the key, then for an upload creates the document for the slug or
 * updates its name, entity and content type (each with its audit row); for a download reads it.
 * Then signs.
 */
export async function signDocumentUrl(ctx: SchoolCtx, { params, body }: InputOf<typeof route>) {
  const { clock, signer } = ctx.deps;
  // The route declares document.read (enough for GET); an upload also needs document.write.
  if (body.method === "PUT" && !ctx.can(permissions.write)) {
    throw new ApiError(403, m`Missing permission document.write in school ${ctx.schoolId}`);
  }
  ownSlug(body.slug, ctx.schoolId);
  const now = clock.now();
  const found = await Documents.select(ctx).where(servedDocument(body.slug)).first();

  let row = found;
  if (body.method === "PUT") {
    const fields = { name: body.name, entity: params.entity, contentType: body.contentType };
    const batch = new Batch(ctx);
    if (found) batch.add(...documentResource.writes.update(ctx, found.id, fields));
    else batch.add(...Documents.insert(ctx, { ...fields, slug: body.slug }));
    const written = batch.read(Documents.select(ctx).where(eq(documents.slug, body.slug)));
    const results = found
      ? await documentResource.commit(ctx, found.id, batch)
      : await batch.commit({ conflict: m`This document was created by another request just now; ask again` });
    row = results.get(written)[0];
  }
  if (!row) throw notFound(m`Document ${body.slug} not found`);

  const signed = await signer.sign({
    key: row.slug,
    method: body.method,
    contentType: body.contentType,
    expiresIn: SIGNED_URL_SECONDS,
    now,
  });
  return { ...toDocument(row), ...signed };
}

const route = defineRoute({
  method: "post",
  path: "/api/v1/documents/{entity}/signed-url",
  tag: "Documents",
  operationId: "createDocumentSignedUrl",
  summary: "Get a presigned URL to upload (PUT, creates or updates the document) or download (GET) a document",
  description:
    "The slug must be under the current school: `{schoolId}/documents/{file name}`. " +
    "PUT needs document.write and records the document (name, content type, entity) for the slug; " +
    "the upload must send the returned `headers`. GET needs an existing document. " +
    `URLs expire after ${SIGNED_URL_SECONDS} seconds.`,
  access: permissions.read,
  module: "documents",
  audit: "document",
  errors: [409],
  examples: { 409: "This document was created by another request just now; ask again" },
  request: { params: EntityParams, body: jsonBody(SignedUrlBody, "SignedUrlRequest") },
  responses: { 200: json(SignedDocument, "The document and its presigned URL") },
});

export const createDocumentSignedUrl = operation(route, signDocumentUrl);
