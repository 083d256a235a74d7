/**
 * The one way code outside the data layer reads JSON text: parsed and checked by a zod schema, so
 * no value of unknown shape passes as a typed one. A query's JSON (a `json_group_array`
 * sub-select, a JSON text column read by hand) is read as a field, `jsonOf(expression, schema)`
 * (src/db/query.ts), which decodes it with this; text of other origins (a token's payload, a stored
 * request) comes here directly. scripts/architecture.ts refuses `JSON.parse(` in src/modules.
 */
import type { z } from "@hono/zod-openapi";

/**
 * `text` parsed as JSON and checked by `schema` (a value already parsed, as a driver may give a
 * JSON column, is only checked). Text that is not JSON, or JSON the schema refuses, throws, unless
 * a `fallback` is given: then that is the answer.
 * @example
 * const roles = parseJson(z.array(RoleRef), row.roles ?? "[]");
 * const levels = parseJson(z.array(z.string()), stored, []); // malformed: none
 */
export function parseJson<S extends z.ZodType>(schema: S, text: unknown): z.output<S>;
export function parseJson<S extends z.ZodType>(schema: S, text: unknown, fallback: z.output<S>): z.output<S>;
export function parseJson(schema: z.ZodType, text: unknown, ...fallback: unknown[]): unknown {
  if (fallback.length === 0) return schema.parse(typeof text === "string" ? JSON.parse(text) : text);
  try {
    const checked = schema.safeParse(typeof text === "string" ? JSON.parse(text) : text);
    return checked.success ? checked.data : fallback[0];
  } catch {
    return fallback[0];
  }
}
