/**
 * The build project's global setup, made once for its files and shared:
 * - the built default Worker (`wrangler deploy --dry-run`, bench/bundle.ts), which the bundle test
 *   measures and `npm run bench:peak`'s test serves (`--dist`), instead of a build each;
 * - the migrated and seeded local D1 each Chromium test's `wrangler dev` starts from
 *   (test/node/dev-server.ts), made once and copied per server, not migrated again per test file
 *   (~4 s each on a quiet 2-core machine, 11 s loaded). Each server still has a copy of its own:
 *   what one file writes, another never sees.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildWorker } from "../../bench/bundle";
import { freshState, hasChromium } from "./dev-state";

declare module "vitest" {
  export interface ProvidedContext {
    /** A `--persist-to` directory with the migrations applied and the demo seeded (never written to). */
    devServerState: string;
    /** The default Worker built into this directory (never written to). */
    workerBuild: string;
  }
}

export default async function setup(project: TestProject) {
  const build = mkdtempSync(join(tmpdir(), "worker-build-"));
  const [state] = await Promise.all([hasChromium ? freshState() : undefined, buildWorker(build)]);
  project.provide("workerBuild", build);
  if (state) project.provide("devServerState", state);
  return () => {
    rmSync(build, { recursive: true, force: true });
    if (state) rmSync(state, { recursive: true, force: true });
  };
}
