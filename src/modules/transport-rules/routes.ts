/**
 * Transportation rules content: the one text a school shows parents about its
 * transport rules. A singleton per school, so two custom routes rather than a resource: GET
 * answers an empty text until someone writes one, PUT replaces it (upsert on the school).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { TransportationRules, transportationRules } from "../../db/schema/transport-rules";
import type { SchoolCtx } from "../../lib/context";
import { ApiError } from "../../lib/errors";
import { m } from "../../lib/message";
import { defineResource } from "../../lib/resource";
import { defineRoute, json, jsonBody, noContent, operation } from "../../lib/route";
import { permissions } from "./permissions";

/** 64 KiB of UTF-8: far more than a rules page needs, well under D1's 100 KB statement limit. */
export const MAX_CONTENT_BYTES = 64 * 1024;

const path = "/api/v1/rules-transportation/content";

const Rules = z
  .object({
    content: z.string().openapi({ description: "The rules text; empty until the school writes one" }),
    updatedAt: z.iso.datetime().nullable().openapi({ description: "When it was last replaced; null if never" }),
    updatedBy: z.number().int().nullable().openapi({ description: "The user who last replaced it" }),
  })
  .openapi("TransportationRules");

const RulesInput = z.strictObject({
  content: z.string().openapi({ description: `The new text, at most ${MAX_CONTENT_BYTES} bytes of UTF-8` }),
});

/** The rules as a resource: its audited writes (the routes are the singleton GET and PUT below). */
const rules = defineResource({
  name: "transportationRules",
  plural: "transportationRules",
  label: m`Transportation rules`,
  path,
  tag: "Transport",
  scope: "school",
  data: TransportationRules,
  record: Rules,
  toRecord: (_ctx, row) => ({ content: row.content, updatedAt: row.updatedAt, updatedBy: row.updatedBy }),
});

const getRoute = defineRoute({
  method: "get",
  path,
  tag: "Transport",
  operationId: "getTransportationRules",
  summary: "Read the school's transportation rules",
  access: permissions.read,
  module: "transport",
  responses: { 200: json(Rules, "The rules (an empty text if none was written yet)") },
});

const replaceRoute = defineRoute({
  method: "put",
  path,
  tag: "Transport",
  operationId: "replaceTransportationRules",
  summary: "Replace the school's transportation rules",
  access: permissions.write,
  module: "transport",
  audit: "transport-rules",
  errors: [409, 413],
  examples: { 409: "The rules were written by another request just now; try again" },
  request: { body: jsonBody(RulesInput, "TransportationRulesInput") },
  responses: { 204: noContent },
});

/** The school's rules, or an empty text if none was written yet. */
export async function readRules(ctx: SchoolCtx) {
  const row = await TransportationRules.select(ctx).first();
  return { content: row?.content ?? "", updatedAt: row?.updatedAt ?? null, updatedBy: row?.updatedBy ?? null };
}

/** Replaces the school's rules (created on the first write), with its audit row. */
export async function replaceRules(ctx: SchoolCtx, content: string) {
  const bytes = new TextEncoder().encode(content).length;
  if (bytes > MAX_CONTENT_BYTES) {
    throw new ApiError(413, m`content is ${bytes} bytes of UTF-8; at most ${MAX_CONTENT_BYTES} are allowed`);
  }
  const existing = await TransportationRules.select(ctx, { id: transportationRules.id }).first();
  const values = { content, updatedBy: ctx.userId };
  if (existing) {
    await rules.commit(ctx, existing.id, new Batch(ctx).add(...rules.writes.update(ctx, existing.id, values)));
  } else {
    await new Batch(ctx)
      .add(...rules.writes.insert(ctx, values))
      .commit({ conflict: m`The rules were written by another request just now; try again` });
  }
}

export const getTransportationRules = operation(getRoute, readRules);

export const replaceTransportationRules = operation(replaceRoute, (ctx, { body }) => replaceRules(ctx, body.content));
