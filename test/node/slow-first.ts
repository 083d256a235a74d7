/**
 * The order of a run's files when vitest knows no durations yet (a fresh clone, CI): the longest
 * files first within their project, by the list below, so the two lanes end together rather than
 * one running a long file alone at the end. Once a run has recorded durations (vitest's cache in
 * node_modules/.vite), its own order (the slowest first) is kept. Each project's files still run in
 * the order vitest gives projects (by name) and groups (`sequence.groupOrder`).
 */
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The slowest files of `npm run -s test:times` (2026-12-07), slowest first; any other file after them. */
export const SLOWEST = [
  "test/node/docs-page.test.ts",
  "test/node/bundle.test.ts",
  "test/node/peak.test.ts",
  "test/node/admin-script.test.ts",
  "test/node/wrangler-config.test.ts",
  "test/module-gate.test.ts",
  "test/escalation.test.ts",
  "test/conformance-1.test.ts",
  "test/conformance-2.test.ts",
  "test/conformance-3.test.ts",
  "test/conformance-4.test.ts",
  "test/render-walk.test.ts",
  "test/query-plans.test.ts",
];

export default class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const path = (f: TestSpecification) => relative(root, f.moduleId);
    const known = files.every((f) => this.ctx.cache.getFileTestResults(`${f.project.name}:${path(f)}`));
    if (known) return sorted;
    const rank = (f: TestSpecification) => {
      const i = SLOWEST.indexOf(path(f));
      return i === -1 ? SLOWEST.length : i;
    };
    // Stable: only files of one group and project change places.
    return sorted
      .map((f, i) => ({ f, i }))
      .sort(
        (a, b) =>
          a.f.project.config.sequence.groupOrder - b.f.project.config.sequence.groupOrder ||
          (a.f.project.name === b.f.project.name ? 0 : a.f.project.name < b.f.project.name ? -1 : 1) ||
          rank(a.f) - rank(b.f) ||
          a.i - b.i,
      )
      .map(({ f }) => f);
  }
}
