/**
 * Legal document operations whose handlers do more than the generic ones: updates and deletes of
 * drafts only (a published version is a 409), the latest published version of a kind (any
 * signed-in user), and acceptance (any signed-in user, for themselves).
 */
import { z } from "@hono/zod-openapi";
import { ctxOf } from "../../lib/context";
import { IdParams } from "../../lib/resource/old";
import { defineRoute, handled, json } from "../../lib/route";
import { permissions } from "./permissions";
import { Kind, LegalDocumentUpdate, legalDocumentResource } from "./resource";
import { AcceptanceRecord, accept, deleteDraft, latest, updateDraft } from "./service";

const update = legalDocumentResource.update({
  access: permissions.write,
  input: LegalDocumentUpdate,
  summary: "Update a draft legal document (a published version answers 409)",
});

export const updateLegalDocument = handled(update.route, async (c) => {
  await updateDraft(ctxOf(c), c.req.valid("param").id, c.req.valid("json"));
  return c.body(null, 204);
});

const del = legalDocumentResource.delete({
  access: permissions.write,
  errors: [409],
  summary: "Delete a draft legal document (a published version answers 409)",
});

export const deleteLegalDocument = handled(del.route, async (c) => {
  await deleteDraft(ctxOf(c), c.req.valid("param").id);
  return c.body(null, 204);
});

const lastRoute = defineRoute({
  method: "get",
  path: "/api/v1/legal-document/last",
  tag: "Documents",
  operationId: "getLastLegalDocument",
  summary: "The latest published version of a kind of legal document",
  description: "The published version with the highest number; a newer draft is not shown. 404 until one is published.",
  access: "user",
  scope: "platform",
  errors: [404],
  request: { query: z.strictObject({ kind: Kind }) },
  responses: { 200: json(legalDocumentResource.record, "The latest published version") },
});

export const getLastLegalDocument = handled(lastRoute, async (c) =>
  c.json(await latest(ctxOf(c), c.req.valid("query").kind), 200),
);

const acceptRoute = defineRoute({
  method: "post",
  path: "/api/v1/legal-document/{id}/accept",
  tag: "Documents",
  operationId: "acceptLegalDocument",
  summary: "Accept a published legal document version (the signed-in user; again: the same acceptance)",
  description:
    "Records that the signed-in user accepts this version, once: accepting it again answers the first " +
    "acceptance and records nothing. A draft answers 409. An older version may be accepted, but only the " +
    "latest published version of a kind satisfies `legal.mustAccept` of `GET /api/v1/user/me`.",
  access: "user",
  scope: "platform",
  audit: "legal-document-acceptance",
  errors: [409],
  request: { params: IdParams },
  responses: { 200: json(AcceptanceRecord, "The acceptance") },
});

export const acceptLegalDocument = handled(acceptRoute, async (c) =>
  c.json(await accept(ctxOf(c), c.req.valid("param").id), 200),
);
