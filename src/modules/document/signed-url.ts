/**
 * `POST /api/v1/documents/{entity}/signed-url` (spec 4.2): a presigned object-storage URL for a
 * document of the current school. PUT (the default) is an upload: the document record is created
 * or updated for the slug in the same statement, and the URL signs the declared content type.
 * GET is a download of a document that exists. URLs expire after SIGNED_URL_SECONDS.
 */
import { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { ApiError, notFound } from "../../lib/errors";
import { type Caller, callerOf, schoolOf } from "../../lib/resource";
import { defineRoute, json, jsonBody } from "../../lib/route";
import { createRouter } from "../../lib/router";
import { DocumentName, DocumentRecord, ownSlug, Slug, toDocument } from "./resource";
import { documents } from "./schema";

/** Short enough that a leaked URL is soon useless, long enough for a phone to upload a scan. */
export const SIGNED_URL_SECONDS = 5 * 60;

/** `type/subtype` (RFC 6838 restricted names), without parameters: it is signed as sent. */
const MediaType = z
  .string()
  .max(255)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/,
    "Expected a media type like application/pdf",
  )
  .openapi({ example: "application/pdf" });

const EntityParams = z.object({
  entity: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,39}$/, "Expected a lowercase kebab-case word like documents")
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

const SignedDocument = DocumentRecord.extend({
  url: z.url().openapi({ description: "The presigned URL" }),
  method: z.enum(["GET", "PUT"]),
  expiresAt: z.iso.datetime().openapi({ description: `When the URL stops working (${SIGNED_URL_SECONDS} s)` }),
  headers: z
    .record(z.string(), z.string())
    .openapi({ description: "Headers to send with the request", example: { "content-type": "application/pdf" } }),
}).openapi("SignedDocument");

export type SignedUrlInput = z.infer<typeof SignedUrlBody>;

/** The service verb: checks the key, writes or reads the record, then signs. */
export async function signDocumentUrl(caller: Caller, entity: string, input: SignedUrlInput) {
  const { db, clock, signer } = caller.deps;
  // The route declares document.read (enough for GET); an upload also needs document.write.
  if (input.method === "PUT" && !caller.principal.can("document.write")) {
    throw new ApiError(403, `Missing permission document.write in school ${caller.schoolId}`);
  }
  ownSlug(input.slug, caller.schoolId);
  const schoolId = schoolOf(caller);
  const now = clock.now();

  let row: typeof documents.$inferSelect | undefined;
  if (input.method === "PUT") {
    const at = now.toISOString();
    const fields = { name: input.name, entity, contentType: input.contentType, updatedAt: at };
    [row] = await db
      .insert(documents)
      .values({ ...fields, schoolId, slug: input.slug, createdAt: at })
      .onConflictDoUpdate({ target: [documents.schoolId, documents.slug], set: fields })
      .returning();
  } else {
    [row] = await db
      .select()
      .from(documents)
      .where(and(eq(documents.schoolId, schoolId), eq(documents.slug, input.slug)))
      .limit(1);
    if (!row) throw notFound(`Document ${input.slug}`);
  }
  if (!row) throw new Error("upsert returned no row");

  const signed = await signer.sign({
    key: row.slug,
    method: input.method,
    contentType: input.contentType,
    expiresIn: SIGNED_URL_SECONDS,
    now,
  });
  return { ...toDocument(row), ...signed };
}

const signedUrl = defineRoute({
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
  access: "document.read",
  request: { params: EntityParams, body: jsonBody(SignedUrlBody) },
  responses: { 200: json(SignedDocument, "The document and its presigned URL") },
});

export const documentSignedUrlRouter = createRouter().openapi(signedUrl, async (c) =>
  c.json(await signDocumentUrl(callerOf(c), c.req.valid("param").entity, c.req.valid("json")), 200),
);
