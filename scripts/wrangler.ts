/**
 * `wrangler <args>` with the build's identity defined (scripts/build-info.ts): what `/api/health`
 * reports as the build and the migration the code expects. package.json's dev, build and deploy
 * scripts run wrangler through this; its exit code is wrangler's. A `deploy` (`npm run build`, a
 * dry run, too: the bundle a deploy would publish) first refuses, naming each, the placeholders
 * wrangler.toml still has for its environment (scripts/placeholders.ts).
 *
 *   tsx scripts/wrangler.ts deploy --env=
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { buildDefines } from "./build-info";
import { refuseWithPlaceholders } from "./placeholders";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
if (args[0] === "deploy") refuseWithPlaceholders(`${root}wrangler.toml`, args);
const wrangler = createRequire(import.meta.url).resolve("wrangler/bin/wrangler.js");
const child = spawn(process.execPath, [wrangler, ...args, ...buildDefines(root)], {
  cwd: process.cwd(),
  stdio: "inherit",
});
// Ctrl-C reaches wrangler too (same process group); leave when it does.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
