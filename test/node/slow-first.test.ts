/** The fresh clone's order of files (test/node/slow-first.ts) names files that exist, once each. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "../../bench/bundle";
import { SLOWEST } from "./slow-first";

it("lists files that exist, each once", () => {
  for (const file of SLOWEST) expect(existsSync(join(ROOT, file)), file).toBe(true);
  expect(new Set(SLOWEST).size).toBe(SLOWEST.length);
});
