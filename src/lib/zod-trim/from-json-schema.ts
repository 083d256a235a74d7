/**
 * zod's `fromJSONSchema` (a JSON Schema read back into zod schemas, 12 KiB raw) left out:
 * wrangler.toml's [alias] puts this module in place of `./from-json-schema.js`, the path by which
 * zod's classic index exports it. Nothing here builds a schema from JSON Schema; `z` is handed
 * around as a value (@hono/zod-openapi), so the bundler cannot drop it by itself.
 */
export function fromJSONSchema(): never {
  throw new Error("zod's fromJSONSchema is not bundled (src/lib/zod-trim/from-json-schema.ts)");
}
