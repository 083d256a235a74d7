/**
 * `npm run client`: writes client/api.d.ts, the TypeScript types of the OpenAPI document, with
 * openapi-typescript (tools/typegen, on its own TypeScript 5). `npm run client:check` (part of
 * `npm test`) fails when the committed file differs from what the document gives today.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { generate } from "school-api-typegen";
import { openapiDocument } from "./openapi";

const OUT = new URL("../client/api.d.ts", import.meta.url);
const check = process.argv.includes("--check");

const types = await generate(await openapiDocument());
let committed = "";
try {
  committed = readFileSync(OUT, "utf8");
} catch {}
if (check) {
  if (committed !== types) {
    console.error("client/api.d.ts is out of date with the OpenAPI document: run `npm run client` and commit it");
    process.exit(1);
  }
  console.error("client/api.d.ts matches the OpenAPI document");
} else if (committed === types) {
  console.error("client/api.d.ts is up to date");
} else {
  writeFileSync(OUT, types);
  console.error("wrote client/api.d.ts");
}
