/** Writes the OpenAPI document the app serves at /api/openapi.json (for `npm run lint:api`). */
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { createApp } from "../src/app";
import type { Deps } from "../src/deps";

/** The document as the development server serves it (with the Development routes). */
export async function openapiDocument(): Promise<object> {
  // No bindings: only the access log reads the dependencies (its config) on this route.
  const app = createApp({ deps: () => ({ config: { accessLog: "problems" } }) as Deps, development: true });
  const res = await app.request("http://localhost:8787/api/openapi.json", {}, {} as Env);
  if (!res.ok) throw new Error(`openapi.json: ${res.status} ${await res.text()}`);
  return (await res.json()) as object;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = process.argv[2] ?? "openapi.json";
  writeFileSync(out, JSON.stringify(await openapiDocument(), null, 2));
  console.error(`wrote ${out}`);
}
