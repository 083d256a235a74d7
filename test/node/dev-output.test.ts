/**
 * What `npm run dev` (scripts/dev.ts) shows of wrangler's start-up: everything but the second build
 * wrangler runs when its file watcher is ready ("The file src changed, restarting build..." though
 * nothing changed) and its cron hint `/cdn-cgi/handler/scheduled` (a 500 with Workers Static
 * Assets); after the server is ready, everything. The lines are wrangler 4.86's, as it printed them.
 */
import { describe, expect, it } from "vitest";
import { StartupFilter } from "../../scripts/dev";

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
