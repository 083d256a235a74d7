/** Writes the OpenAPI document the app serves at /api/openapi.json (for `npm run lint:api`). */
import { writeFileSync } from "node:fs";
import { createApp } from "../src/app";
import type { Deps } from "../src/deps";

const app = createApp({ deps: () => ({}) as Deps, development: true });
const res = await app.request("http://localhost:8787/api/openapi.json", {}, {} as Env);
if (!res.ok) throw new Error(`openapi.json: ${res.status} ${await res.text()}`);
const out = process.argv[2] ?? "openapi.json";
writeFileSync(out, JSON.stringify(await res.json(), null, 2));
console.error(`wrote ${out}`);
