// Copies Swagger UI's files from the installed, pinned swagger-ui-dist into public/, the Workers
// Static Assets directory, so /api/docs works offline and from our own deployment; none of it
// enters the Worker bundle. wrangler.toml's [build] command runs it before `wrangler dev`,
// `wrangler deploy` and `wrangler deploy --dry-run`. It copies only what changed (so `wrangler dev`
// does not reload for nothing) and removes the files of other versions.
//
//   public/api/docs/assets/<version>/swagger-ui-dist/{swagger-ui-bundle.js,swagger-ui.css,...}
//
// src/app.ts points the page there (`baseUrl` of @hono/swagger-ui, with the same version).
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const { version } = JSON.parse(readFileSync(join(dist, "package.json"), "utf8"));

const directory = join(root, "public");
const assets = join(directory, "api/docs/assets");
const target = join(assets, version, "swagger-ui-dist");
const FILES = ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png", "LICENSE", "NOTICE"];

mkdirSync(target, { recursive: true });
for (const other of readdirSync(assets)) {
  if (other !== version) rmSync(join(assets, other), { recursive: true, force: true });
}
let copied = 0;
for (const file of FILES) {
  const from = join(dist, file);
  const to = join(target, file);
  if (existsSync(to) && readFileSync(to).equals(readFileSync(from))) continue;
  copyFileSync(from, to);
  copied++;
}
// The path names the version, so browsers may keep the files for good.
const headers = "/api/docs/assets/*\n  Cache-Control: public, max-age=31536000, immutable\n";
const headersFile = join(directory, "_headers");
if (!existsSync(headersFile) || readFileSync(headersFile, "utf8") !== headers) writeFileSync(headersFile, headers);
if (copied) console.error(`docs assets: swagger-ui-dist ${version}, ${copied} file(s) copied to public/`);
