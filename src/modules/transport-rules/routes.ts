/**
 * Transportation rules content (spec 4.6): the one text a school shows parents about its
 * transport rules. A singleton per school, so two custom routes rather than a resource: GET
 * answers an empty text until someone writes one, PUT replaces it (upsert on the school).
 */
import { z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { ApiError } from "../../lib/errors";
import { schoolOf } from "../../lib/resource";
import { defineRoute, json, jsonBody, noContent } from "../../lib/route";
import { createRouter } from "../../lib/router";
import { transportationRules } from "./schema";

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

const RulesInput = z
  .strictObject({
    content: z.string().openapi({ description: `The new text, at most ${MAX_CONTENT_BYTES} bytes of UTF-8` }),
  })
  .openapi("TransportationRulesInput");

const getRules = defineRoute({
  method: "get",
  path,
  tag: "Transport",
  operationId: "getTransportationRules",
  summary: "Read the school's transportation rules",
  access: "transport-rules.read",
  responses: { 200: json(Rules, "The rules (an empty text if none was written yet)") },
});

const replaceRules = defineRoute({
  method: "put",
  path,
  tag: "Transport",
  operationId: "replaceTransportationRules",
  summary: "Replace the school's transportation rules",
  access: "transport-rules.write",
  errors: [413],
  request: { body: jsonBody(RulesInput) },
  responses: { 204: noContent },
});

export const transportRulesRouter = createRouter()
  .openapi(getRules, async (c) => {
    const { db } = c.var.deps;
    const schoolId = schoolOf(c.var.principal);
    const [row] = await db
      .select()
      .from(transportationRules)
      .where(eq(transportationRules.schoolId, schoolId))
      .limit(1);
    return c.json(
      { content: row?.content ?? "", updatedAt: row?.updatedAt ?? null, updatedBy: row?.updatedBy ?? null },
      200,
    );
  })
  .openapi(replaceRules, async (c) => {
    const { deps, principal } = c.var;
    const { content } = c.req.valid("json");
    const bytes = new TextEncoder().encode(content).length;
    if (bytes > MAX_CONTENT_BYTES) {
      throw new ApiError(413, `content is ${bytes} bytes of UTF-8; at most ${MAX_CONTENT_BYTES} are allowed`);
    }
    const now = deps.clock.now().toISOString();
    const schoolId = schoolOf(principal);
    await deps.db
      .insert(transportationRules)
      .values({ schoolId, content, updatedBy: principal.userId, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: transportationRules.schoolId,
        set: { content, updatedBy: principal.userId, updatedAt: now },
      });
    return c.body(null, 204);
  });
