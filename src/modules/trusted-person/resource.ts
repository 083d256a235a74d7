/**
 * Trusted people (`/api/v1/trusted-person`): whom a parent authorises to pick a student up. A parent
 * registers one for their own children (a delegate for the parent they act for), staff for any
 * student of the school; the school approves or rejects it (`PATCH .../status`). While pending it
 * can be changed (name, relationship, phone, photo, ID document); once decided, a change is a 409.
 * Visibility and registrants: ./common.ts. Photo and ID document: presigned URLs under
 * `{schoolId}/trusted-people/{id}/`.
 */
import { z } from "@hono/zod-openapi";
import { schoolOf } from "../../lib/context";
import { Phone } from "../../lib/phone";
import { defineResource, type Filter, IdParams, RecordBase, timestamps } from "../../lib/resource";
import { defineRoute, json, jsonBody, operation } from "../../lib/route";
import type { SignedUrl } from "../../lib/s3";
import { text } from "../../lib/text";
import { SIGNED_URL_SECONDS } from "../document/signed-url";
import {
  type ActingCtx,
  actingCtx,
  DecisionBody,
  decided,
  decisionFields,
  decisionOf,
  notPending,
  RecordId,
  registrant,
  statusFilter,
  studentIdFilter,
  visibleThrough,
} from "./common";
import { permissions } from "./permissions";
import { trustedPeople } from "./schema";

const Record = RecordBase.extend({
  studentId: z.number().int().openapi({ example: 1 }),
  parentId: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "The parent profile that registered it; null when the school did" }),
  name: z.string().openapi({ example: "Laura Gomez" }),
  relationship: z.string().openapi({ example: "aunt" }),
  phone: z.string().openapi({ example: "+525512345678" }),
  photo: z.string().nullable().openapi({ description: "Object key of the photo (GET .../signed-url to view it)" }),
  idDocument: z.string().nullable().openapi({ description: "Object key of the ID document" }),
  ...decisionFields,
});

export const trustedPersonResource = defineResource({
  name: "trustedPerson",
  plural: "trustedPeople",
  label: "Trusted person",
  entity: "trusted-person",
  path: "/api/v1/trusted-person",
  tag: "People",
  scope: "school",
  table: trustedPeople,
  record: Record,
  toRecord: (row) => ({
    ...timestamps(row),
    studentId: row.studentId,
    parentId: row.parentId,
    name: row.name,
    relationship: row.relationship,
    phone: row.phone,
    photo: row.photo,
    idDocument: row.idDocument,
    status: row.status,
    decidedBy: row.decidedBy,
    decidedAt: row.decidedAt,
    reason: row.reason,
  }),
  visibleTo: visibleThrough(trustedPeople.studentId),
});

const resource = trustedPersonResource;

const filters = {
  studentId: studentIdFilter(trustedPeople.studentId) satisfies Filter<number>,
  status: statusFilter(trustedPeople.status) satisfies Filter<string>,
};

const list = resource.list({
  access: permissions.read,
  filters,
  summary: "List trusted people (paginated), oldest first",
  description: "Staff see the school's; a parent (or their delegate) those of their own children.",
});
export const listTrustedPeople = operation(list.route, async (c) =>
  c.json(await list.run(await actingCtx(c), c.req.valid("query"), c.req.url), 200),
);

const get = resource.get({ access: permissions.read });
export const getTrustedPerson = operation(get.route, async (c) =>
  c.json(await get.run(await actingCtx(c), c.req.valid("param").id), 200),
);

const Name = text({ max: 200 }).openapi({ example: "Laura Gomez" });
const Relationship = text({ max: 50 }).openapi({ example: "aunt", description: "Free text: aunt, neighbour, nanny" });

const CreateBody = z.object({
  studentId: RecordId.openapi({ example: 1, description: "A parent: one of their own children (else 404)" }),
  parentId: RecordId.optional().openapi({
    description: "The registering parent: staff may name a guardian of the student; a parent is that themself",
  }),
  name: Name,
  relationship: Relationship,
  phone: Phone,
});

const create = resource.create({
  access: permissions.write,
  input: CreateBody,
  values: async (input, ctx) => ({
    studentId: input.studentId,
    parentId: await registrant(ctx as ActingCtx, input.studentId, input.parentId),
    name: input.name,
    relationship: input.relationship,
    phone: input.phone,
  }),
  summary: "Register a trusted person for a student (pending until the school decides)",
  description: "A parent for their own children only (another student is a 404), staff for any student of the school.",
  errors: [422],
});
export const createTrustedPerson = operation(create.route, async (c) =>
  c.json(await create.run(await actingCtx(c), c.req.valid("json")), 201),
);

const UpdateBody = z.object({ name: Name.optional(), relationship: Relationship.optional(), phone: Phone.optional() });

const update = resource.update({
  access: permissions.write,
  input: UpdateBody,
  summary: "Change a pending trusted person (409 once decided)",
});
/** Changes the fields sent, only while pending: the state is part of the UPDATE's condition. */
export async function updateTrustedPerson(ctx: ActingCtx, id: number, input: z.output<typeof UpdateBody>) {
  await resource.change(ctx, id, {
    action: "update",
    set: input,
    from: { column: trustedPeople.status, states: ["pending"] },
    conflict: notPending("Trusted person", id),
  });
}
export const updateTrustedPersonOperation = operation(update.route, async (c) => {
  await updateTrustedPerson(await actingCtx(c), c.req.valid("param").id, c.req.valid("json"));
  return c.body(null, 204);
});

const remove = resource.delete({ access: permissions.write, summary: "Delete (withdraw) a trusted person" });
export const deleteTrustedPerson = operation(remove.route, async (c) => {
  await remove.run(await actingCtx(c), c.req.valid("param").id);
  return c.body(null, 204);
});

const decide = resource.action({
  name: "status",
  verb: "decide",
  method: "patch",
  access: permissions.review,
  input: DecisionBody,
  from: { column: trustedPeople.status, states: ["pending"] },
  conflict: (id) => notPending("Trusted person", id),
  set: (ctx, input) => decided(ctx, input),
  summary: "Approve or reject a pending trusted person (update status)",
  description:
    "Records who decided, when and why. A request already decided is a 409; of two racing decisions one wins.",
});
export const decideTrustedPerson = operation(decide.route, async (c) =>
  c.json(await decide.run(await actingCtx(c), c.req.valid("param").id, decisionOf(c, DecisionBody)), 200),
);

// Images: presigned URLs under the school's prefix.

export const IMAGE_KINDS = ["photo", "id-document"] as const;
const IMAGE_TYPES = ["image/jpeg", "image/png", "image/webp", "image/heic", "application/pdf"] as const;

const UploadBody = z
  .object({
    kind: z.enum(IMAGE_KINDS).openapi({ example: "photo" }),
    contentType: z
      .enum(IMAGE_TYPES)
      .openapi({ example: "image/jpeg", description: "The upload must send exactly this content-type" }),
  })
  .strict()
  .refine((v) => v.kind !== "photo" || v.contentType.startsWith("image/"), {
    message: "A photo is an image",
    path: ["contentType"],
  });

const Signed = z.object({
  url: z.url(),
  method: z.enum(["GET", "PUT"]),
  expiresAt: z.iso.datetime(),
  headers: z.record(z.string(), z.string()),
});

const Upload = Signed.extend({
  id: z.number().int().openapi({ description: "The trusted person" }),
  kind: z.enum(IMAGE_KINDS),
  key: z.string().openapi({ example: "1/trusted-people/7/photo" }),
}).openapi("TrustedPersonUpload");

/** The object key of a trusted person's image: under the school's prefix, one per kind. */
export const imageKey = (schoolId: number, id: number, kind: (typeof IMAGE_KINDS)[number]) =>
  `${schoolId}/trusted-people/${id}/${kind}`;

/**
 * Records the image's key on a pending trusted person (guarded like any change, with its audit row)
 * and answers a presigned PUT for it.
 */
export async function signUpload(ctx: ActingCtx, id: number, input: z.output<typeof UploadBody>) {
  const key = imageKey(schoolOf(ctx), id, input.kind);
  await resource.change(ctx, id, {
    action: "upload",
    set: input.kind === "photo" ? { photo: key } : { idDocument: key },
    from: { column: trustedPeople.status, states: ["pending"] },
    conflict: notPending("Trusted person", id),
  });
  const signed = await ctx.deps.signer.sign({
    key,
    method: "PUT",
    contentType: input.contentType,
    expiresIn: SIGNED_URL_SECONDS,
    now: ctx.deps.clock.now(),
  });
  return { id, kind: input.kind, key, ...signed };
}

export const createTrustedPersonUploadUrl = operation(
  defineRoute({
    method: "put",
    path: "/api/v1/trusted-person/{id}/signed-url",
    tag: "People",
    operationId: "createTrustedPersonUploadUrl",
    summary: "Get a presigned URL to upload a trusted person's photo or ID document",
    description:
      "Stores the key (`{schoolId}/trusted-people/{id}/{kind}`) on the pending trusted person and answers a " +
      `presigned PUT that expires after ${SIGNED_URL_SECONDS} seconds; the upload must send the returned headers. ` +
      "409 once the request is decided.",
    access: permissions.write,
    audit: "trusted-person",
    errors: [409],
    request: { params: IdParams, body: jsonBody(UploadBody, "TrustedPersonUploadRequest") },
    responses: { 200: json(Upload, "The key and its presigned upload URL") },
  }),
  async (c) => c.json(await signUpload(await actingCtx(c), c.req.valid("param").id, c.req.valid("json")), 200),
);

const Images = z
  .object({
    id: z.number().int(),
    photo: Signed.nullable().openapi({ description: "A presigned GET of the photo; null when none was uploaded" }),
    idDocument: Signed.nullable().openapi({ description: "A presigned GET of the ID document; null when none" }),
  })
  .openapi("TrustedPersonImages");

/** Presigned GETs of a visible trusted person's images. */
export async function signDownloads(ctx: ActingCtx, id: number) {
  const person = await resource.find(ctx, id);
  const now = ctx.deps.clock.now();
  const sign = (key: string | null): Promise<SignedUrl> | null =>
    key === null ? null : ctx.deps.signer.sign({ key, method: "GET", expiresIn: SIGNED_URL_SECONDS, now });
  const [photo, idDocument] = await Promise.all([sign(person.photo), sign(person.idDocument)]);
  return { id, photo, idDocument };
}

export const getTrustedPersonImages = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/trusted-person/{id}/signed-url",
    tag: "People",
    operationId: "getTrustedPersonImages",
    summary: "Get presigned URLs to view a trusted person's photo and ID document",
    description: `Staff, and the parents who see the record. URLs expire after ${SIGNED_URL_SECONDS} seconds.`,
    access: permissions.read,
    request: { params: IdParams },
    responses: { 200: json(Images, "Presigned GET URLs (null where nothing was uploaded)") },
  }),
  async (c) => c.json(await signDownloads(await actingCtx(c), c.req.valid("param").id), 200),
);
