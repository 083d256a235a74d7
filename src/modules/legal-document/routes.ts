/**
 * Legal document operations whose handlers do more than the generic ones: updates and deletes of
 * drafts only (a published version is a 409), the latest published version of a kind (any
 * signed-in user), and acceptance (any signed-in user, for themselves).
 */
import { z } from "@hono/zod-openapi";
import { legalDocuments } from "../../db/schema/legal-document";
import { m } from "../../lib/message";
import { IdParams } from "../../lib/resource";
import { defineRoute, json, operation } from "../../lib/route";
import { permissions } from "./permissions";
import { Kind, LegalDocumentUpdate, legalDocumentResource } from "./resource";
import { AcceptanceRecord, accept, latest } from "./service";

/** The guards of a change only a draft may take (a published version: 409; users may have accepted it). */
const draftOnly = (action: "update" | "delete") => ({
  from: { column: legalDocuments.status, states: ["draft"] },
  conflict:
    ({ id }: { id: number }) =>
    () =>
      action === "update"
        ? m`Legal document ${id} is published: a published version cannot be updated; create a new version instead`
        : m`Legal document ${id} is published: a published version cannot be deleted; create a new version instead`,
});

export const updateLegalDocument = legalDocumentResource.update({
  access: permissions.write,
  input: LegalDocumentUpdate,
  ...draftOnly("update"),
  summary: "Update a draft legal document (a published version answers 409)",
});

export const deleteLegalDocument = legalDocumentResource.delete({
  access: permissions.write,
  ...draftOnly("delete"),
  errors: [409],
  summary: "Delete a draft legal document (a published version answers 409)",
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
  examples: { 404: "No published terms of service yet" },
  request: { query: z.strictObject({ kind: Kind }) },
  responses: { 200: json(legalDocumentResource.record, "The latest published version") },
});

export const getLastLegalDocument = operation(lastRoute, (ctx, { query }) => latest(ctx, query.kind));

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
  examples: { 409: "Legal document 42 is a draft; only a published version can be accepted" },
  request: { params: IdParams },
  responses: { 200: json(AcceptanceRecord, "The acceptance") },
});

export const acceptLegalDocument = operation(acceptRoute, (ctx, { params }) => accept(ctx, params.id));
