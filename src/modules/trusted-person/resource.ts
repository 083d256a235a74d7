/**
 * Trusted people (`/api/v1/trusted-person`): whom a parent authorises to pick a student up. A parent
 * registers one for their own children (a delegate for the parent they act for), staff for any
 * student of the school; the school approves or rejects it (`PATCH .../status`). While pending it
 * can be changed (name, relationship, phone, photo, ID document); once decided, a change is a 409.
 * Visibility and registrants: ./common.ts. Photo and ID document: presigned URLs under
 * `{schoolId}/trusted-people/{id}/`.
 */
import { z } from "@hono/zod-openapi";
import { TrustedPeople, trustedPeople } from "../../db/schema/trusted-person";
import { eq } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { Phone } from "../../lib/phone";
import { IdParams } from "../../lib/resource";
import { defineRoute, json, jsonBody, operation } from "../../lib/route";
import type { SignedUrl } from "../../lib/s3";
import { signedUrlFields } from "../../lib/signed-url";
import { text } from "../../lib/text";
import { SIGNED_URL_SECONDS } from "../document/api";
import { contactOf } from "../user/api";
import { actingContext } from "./common";
import { permissions } from "./permissions";
import { defineTrustedRequests } from "./requests";

const Name = text({ max: 200 }).openapi({ example: "Laura Gomez", description: "The trusted person's full name" });
const Relationship = text({ max: 50 }).openapi({ example: "aunt", description: "Free text: aunt, neighbour, nanny" });

const trusted = defineTrustedRequests({
  name: "trustedPerson",
  plural: "trustedPeople",
  label: m`Trusted person`,
  pluralLabel: "trusted people",
  fact: "trusted-person",
  path: "/api/v1/trusted-person",
  tag: "People",
  data: TrustedPeople,
  fields: {
    name: z.string().openapi({ example: "Laura Gomez", description: "The trusted person's full name" }),
    relationship: z
      .string()
      .openapi({ example: "aunt", description: "How they are related to the student (free text)" }),
    phone: z.string().openapi({
      example: "+525512345678",
      description:
        "Masked (+52••••••••78) without user.contact, except for the student's own parents (and their delegates)",
    }),
    photo: z.string().nullable().openapi({ description: "Object key of the photo (GET .../signed-url to view it)" }),
    idDocument: z.string().nullable().openapi({ description: "Object key of the ID document" }),
  },
  toRecord: (ctx, row) => ({
    name: row.name,
    relationship: row.relationship,
    // Without trusted.manage a caller sees their own children's only: parents call them.
    ...contactOf(ctx, null, { phone: row.phone }, !ctx.can(permissions.manage)),
    photo: row.photo,
    idDocument: row.idDocument,
  }),
  create: { name: Name, relationship: Relationship, phone: Phone },
  update: z.object({ name: Name.optional(), relationship: Relationship.optional(), phone: Phone.optional() }),
});

export const trustedPersonResource = trusted.resource;
const resource = trustedPersonResource;

// Images: presigned URLs under the school's prefix.

export const IMAGE_KINDS = ["photo", "id-document"] as const;
const IMAGE_TYPES = ["image/jpeg", "image/png", "image/webp", "image/heic", "application/pdf"] as const;

const UploadBody = z
  .object({
    kind: z.enum(IMAGE_KINDS).openapi({ example: "photo", description: "Which image: the photo or the ID document" }),
    contentType: z
      .enum(IMAGE_TYPES)
      .openapi({ example: "image/jpeg", description: "The upload must send exactly this content-type" }),
  })
  .strict()
  .refine((v) => v.kind !== "photo" || v.contentType.startsWith("image/"), {
    ...zodMessage(m`A photo is an image`),
    path: ["contentType"],
  });

const Signed = z.object(signedUrlFields(SIGNED_URL_SECONDS, "image/jpeg"));

const Upload = Signed.extend({
  id: z.number().int().openapi({ description: "The trusted person" }),
  kind: z.enum(IMAGE_KINDS).openapi({ description: "Which image: the photo or the ID document" }),
  key: z.string().openapi({ example: "1/trusted-people/7/photo", description: "The object key the upload stores" }),
}).openapi("TrustedPersonUpload");

/** The object key of a trusted person's image: under the school's prefix, one per kind. */
export const imageKey = (schoolId: number, id: number, kind: (typeof IMAGE_KINDS)[number]) =>
  `${schoolId}/trusted-people/${id}/${kind}`;

/**
 * Records the image's key on a pending trusted person (a change like an update: who may, with its
 * audit row) and answers a presigned PUT for it.
 */
export async function signUpload(ctx: SchoolCtx, id: number, input: z.output<typeof UploadBody>) {
  const key = imageKey(ctx.schoolId, id, input.kind);
  await trusted.alter(ctx, id, "upload", input.kind === "photo" ? { photo: key } : { idDocument: key });
  const signed = await ctx.deps.signer.sign({
    key,
    method: "PUT",
    contentType: input.contentType,
    expiresIn: SIGNED_URL_SECONDS,
    now: ctx.deps.clock.now(),
  });
  return { id, kind: input.kind, key, ...signed };
}

const createTrustedPersonUploadUrl = operation(
  defineRoute({
    method: "put",
    path: "/api/v1/trusted-person/{id}/signed-url",
    tag: "People",
    operationId: "createTrustedPersonUploadUrl",
    summary: "Get a presigned URL to upload a trusted person's photo or ID document",
    description:
      "Stores the key (`{schoolId}/trusted-people/{id}/{kind}`) on the pending trusted person and answers a " +
      `presigned PUT that expires after ${SIGNED_URL_SECONDS} seconds; the upload must send the returned headers. ` +
      "409 once the request is decided. Who may: as for a change (staff; else the parent who registered it, 403, " +
      "while the school lets them change the student's way home, 422).",
    access: permissions.write,
    context: actingContext,
    audit: "trusted-person",
    errors: [409, 422],
    examples: {
      409: "Trusted person 42 is approved; only a pending request can be changed or decided",
      422: "Parent 7 may not authorise trusted people or addresses for student 42: this guardian may not request changes to the student's way home",
    },
    request: { params: IdParams, body: jsonBody(UploadBody, "TrustedPersonUploadRequest") },
    responses: { 200: json(Upload, "The key and its presigned upload URL") },
  }),
  (ctx, { params, body }) => signUpload(ctx, params.id, body),
);

const Images = z
  .object({
    id: z.number().int(),
    photo: Signed.nullable().openapi({ description: "A presigned GET of the photo; null when none was uploaded" }),
    idDocument: Signed.nullable().openapi({ description: "A presigned GET of the ID document; null when none" }),
  })
  .openapi("TrustedPersonImages");

/** Presigned GETs of a visible trusted person's images. */
export async function signDownloads(ctx: SchoolCtx, id: number) {
  const person = await TrustedPeople.select(ctx, { photo: trustedPeople.photo, idDocument: trustedPeople.idDocument })
    .where(resource.scoped(ctx, eq(trustedPeople.id, id), "read"))
    .first();
  if (!person) throw notFound(m`Trusted person ${id} not found`);
  const now = ctx.deps.clock.now();
  const sign = (key: string | null): Promise<SignedUrl> | null =>
    key === null ? null : ctx.deps.signer.sign({ key, method: "GET", expiresIn: SIGNED_URL_SECONDS, now });
  const [photo, idDocument] = await Promise.all([sign(person.photo), sign(person.idDocument)]);
  return { id, photo, idDocument };
}

const getTrustedPersonImages = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/trusted-person/{id}/signed-url",
    tag: "People",
    operationId: "getTrustedPersonImages",
    summary: "Get presigned URLs to view a trusted person's photo and ID document",
    description: `Staff, and the parents who see the record. URLs expire after ${SIGNED_URL_SECONDS} seconds.`,
    access: permissions.read,
    context: actingContext,
    request: { params: IdParams },
    responses: { 200: json(Images, "Presigned GET URLs (null where nothing was uploaded)") },
  }),
  (ctx, { params }) => signDownloads(ctx, params.id),
);

/** The operations, in the document's order: the shared ones, then the images'. */
export const operations = [...trusted.operations, createTrustedPersonUploadUrl, getTrustedPersonImages];
