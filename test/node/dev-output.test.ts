/**
 * What `npm run dev` (scripts/dev.ts) shows of wrangler's start-up: everything but the second build
 * wrangler runs when its file watcher is ready ("The file src changed, restarting build..." though
 * nothing changed) and its cron hint `/cdn-cgi/handler/scheduled` (a 500 with Workers Static
 * Assets); after the server is ready, everything. The lines are wrangler 4.86's, as it printed them.
 *
 * And what it no longer has to hide, offline too: no stack trace for the `request.cf` sample miniflare
 * fetches from workers.cloudflare.com (`getaddrinfo ENOTFOUND`), and no "Your types might be out of
 * date" (worker-configuration.d.ts is what `npm run cf-typegen` writes for this wrangler.toml).
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../bench/bundle";
import { StartupFilter, serverEnv } from "../../scripts/dev";

const START = [
  " ⛅️ wrangler 4.86.0",
  "[custom build] Running: node scripts/docs-assets.mjs",
  "Using secrets defined in .dev.vars",
  "Your Worker has access to the following bindings:",
  'env.S3_ENDPOINT ("/dev/s3")                          Environment Variable      local',
  "The file src changed, restarting build...",
  "[custom build] Running: node scripts/docs-assets.mjs",
  "\x1b[33m▲ \x1b[43;33m[\x1b[43;30mWARNING\x1b[43;33m]\x1b[0m \x1b[1mScheduled Workers are not automatically triggered during local development.\x1b[0m",
  "",
  "  To manually trigger a scheduled event, run:",
  '    curl "http://localhost:8787/cdn-cgi/handler/scheduled"',
  "  For more details, see https://developers.cloudflare.com/workers/configuration/cron-triggers/#test-cron-triggers-locally",
  "⎔ Starting local server...",
  "[wrangler:info] Ready on http://localhost:8787",
  // A real change later: shown.
  "The file src/app.ts changed, restarting build...",
  "[custom build] Running: node scripts/docs-assets.mjs",
];

describe("npm run dev's view of wrangler's start-up", () => {
  it("leaves out the rebuild nothing caused and the cron hint that answers 500, and nothing else", () => {
    const filter = new StartupFilter();
    const shown = START.filter((line) => filter.keep(line));
    expect(shown).toEqual([
      " ⛅️ wrangler 4.86.0",
      "[custom build] Running: node scripts/docs-assets.mjs",
      "Using secrets defined in .dev.vars",
      "Your Worker has access to the following bindings:",
      'env.S3_ENDPOINT ("/dev/s3")                          Environment Variable      local',
      "⎔ Starting local server...",
      "[wrangler:info] Ready on http://localhost:8787",
      "The file src/app.ts changed, restarting build...",
      "[custom build] Running: node scripts/docs-assets.mjs",
    ]);
  });
});

describe("npm run dev offline", () => {
  it("asks miniflare for no `request.cf` sample (offline a stack trace), unless the developer does", () => {
    expect(serverEnv({}, false).CLOUDFLARE_CF_FETCH_ENABLED).toBe("false");
    expect(serverEnv({ CLOUDFLARE_CF_FETCH_ENABLED: "true" }, false).CLOUDFLARE_CF_FETCH_ENABLED).toBe("true");
    // The switch is the one wrangler's own miniflare reads (a wrangler upgrade that renames it fails here).
    const miniflare = createRequire(createRequire(join(ROOT, "package.json")).resolve("wrangler")).resolve("miniflare");
    const source = readFileSync(miniflare, "utf8");
    expect(source).toContain('CF_FETCH_ENABLED_ENV_VAR = "CLOUDFLARE_CF_FETCH_ENABLED"');
    expect(source).toContain("Unable to fetch the `Request.cf` object!");
  });

  it("has types up to date: worker-configuration.d.ts is what `wrangler types` writes for wrangler.toml", async () => {
    // The project as a fresh clone has it, with the .dev.vars `npm run dev` makes from the example
    // (its secrets are part of the types), in a directory of its own.
    const dir = mkdtempSync(join(tmpdir(), "types-"));
    try {
      for (const file of ["wrangler.toml", "worker-configuration.d.ts"])
        copyFileSync(join(ROOT, file), join(dir, file));
      copyFileSync(join(ROOT, ".dev.vars.example"), join(dir, ".dev.vars"));
      for (const link of ["src", "scripts", "node_modules", "migrations"])
        symlinkSync(join(ROOT, link), join(dir, link));
      const checked = await promisify(execFile)(
        process.execPath,
        [join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "types", "--strict-vars=false", "--check"],
        { cwd: dir, env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", WRANGLER_LOG: "log" } },
      ).catch((err: { stdout: string; stderr: string }) => ({ stdout: `${err.stdout}${err.stderr}` }));
      expect(checked.stdout, "run `npm run cf-typegen` and commit worker-configuration.d.ts").toContain(
        "Types at worker-configuration.d.ts are up to date",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
