// TypeScript types for an OpenAPI document, by openapi-typescript running on this package's own
// TypeScript 5 (openapi-typescript builds its output with the TypeScript 5 compiler API; the project
// itself compiles with TypeScript 7, which has no such API). See scripts/client.ts.
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";

/** The `.d.ts` text for `document` (an OpenAPI 3.x object): `paths`, `components`, `operations`. */
export async function generate(document) {
  const ast = await openapiTS(document, { silent: true });
  return COMMENT_HEADER + astToString(ast);
}
