/**
 * A named schema or null. `.nullable()` of a schema registered by name (`.openapi("Name")`) is
 * rendered wrong by the document's generator (@asteasolutions/zod-to-openapi 9, OpenAPI 3.1): the
 * wrapper inherits the name, so where the schema is first met nullable its component itself becomes
 * nullable (`type: ["object", "null"]`: every other use of it then allows null), and elsewhere the
 * field is `allOf: [{ $ref }, { type: ["object", "null"] }]`, which refuses null (an allOf needs
 * every branch, and the referenced one is an object). A union is generated branch by branch:
 * `anyOf: [{ $ref }, { type: "null" }]`, what the field means. test/document-enforced.test.ts
 * refuses both wrong shapes anywhere in the document.
 *
 * @example
 * stop: orNull(RouteStop).openapi({ description: "Where the child boards; null when none" }),
 */
import { z } from "@hono/zod-openapi";

export const orNull = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);
