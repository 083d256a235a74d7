/**
 * The app's own OpenAPI document as the generated suites walk it: every operation with its path and
 * method, and `resolve` (a schema with its `$ref`s followed). Each suite types the parts it reads.
 */
import { makeTestApp } from "./helpers";

export async function openApiDocument<Operation, Schema extends { $ref?: string }>() {
  const res = await makeTestApp().request("/api/openapi.json");
  const doc = (await res.json()) as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, Schema> };
  };
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );
  const resolve = (schema: Schema | undefined): Schema => {
    let s = schema ?? ({} as Schema);
    while (s.$ref) s = doc.components.schemas[s.$ref.split("/").at(-1) ?? ""] ?? ({} as Schema);
    return s;
  };
  return { doc, operations, resolve };
}
