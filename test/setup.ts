// Runs before each test file. Files share a workerd process (vitest's `isolate: false`: a process
// per file cost ~5 s of CPU each), so each file first gets fresh storage of its own here: every
// table dropped, the real migrations applied, then the demo seed; the documents bucket emptied.
// The seed is written for its anchor week (the tests' clock, test/helpers.ts); `DEMO_TODAY=<instant>
// npx vitest run ...` seeds every file for that day instead (src/db/demo-today.ts), to see which
// tests lean on the anchor's dates.
// After the file, every search copy must be the fold of its column (test/search-copies.ts).
import { env } from "cloudflare:test";
import { afterAll, expect, vi } from "vitest";
import { demoSeedFor } from "../src/db/demo-today";
import { loadIsolateData } from "../src/lib/isolate-data";
import { loadPdfData } from "../src/lib/pdf-lib/binary-trie";
import { freshStorage } from "./fresh-storage";

// The Spanish catalogue and the phone metadata, from the static assets as the Worker reads them
// (tests that call a verb or a consumer directly come before any request's middleware would), and
// the PDF writer's Unicode data (test files import the writer itself, not through its loader).
await Promise.all([loadIsolateData(env.ASSETS), loadPdfData(env.ASSETS)]);
await freshStorage(env.DEMO_TODAY ? demoSeedFor(env.TEST_SEED, new Date(env.DEMO_TODAY)) : env.TEST_SEED);

// Imported when the file ends, not here: a test file that mocks a module of the data layer
// (test/render-walk.test.ts) must be the first to load it.
afterAll(async () => {
  vi.restoreAllMocks();
  const { staleSearchCopies } = await import("./search-copies");
  expect(await staleSearchCopies(), "search copies that are not the fold of their column").toEqual([]);
});
