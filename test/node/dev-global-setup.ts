/**
 * The build project's global setup: the migrated and seeded local D1 each Chromium test's `wrangler
 * dev` starts from (test/node/dev-server.ts), made once and copied per server, not migrated again
 * per test file (~4 s each on a quiet 2-core machine, 11 s loaded). Each server still has a copy of
 * its own: what one file writes, another never sees.
 */
import { rmSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { freshState, hasChromium } from "./dev-state";

declare module "vitest" {
  export interface ProvidedContext {
    /** A `--persist-to` directory with the migrations applied and the demo seeded (never written to). */
    devServerState: string;
  }
}

export default async function setup(project: TestProject) {
  if (!hasChromium) return; // the tests that would use it are skipped
  const state = await freshState();
  project.provide("devServerState", state);
  return () => rmSync(state, { recursive: true, force: true });
}
