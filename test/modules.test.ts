/**
 * The module registry: the app routes a request to a module by the paths it declares, so every
 * operation of a module must lie under one of them (else it would be unreachable, or served by
 * another module's app); names are unique; a module's cheap facts (its index) load nothing heavy.
 */
import { describe, expect, it } from "vitest";
import { MODULES } from "../src/modules";

/** A Hono path (`/x/:id`) as a pattern that also matches everything below it. */
const under = (path: string) => new RegExp(`^${path.replace(/:\w+/g, "[^/]+")}(/.*)?$`);

describe("the module registry", () => {
  it("names every module once", () => {
    const names = MODULES.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
  });

  for (const module of MODULES) {
    if (!module.load) continue;
    it(`${module.name}: every operation lies under the module's paths`, async () => {
      const { operations } = (await module.load?.()) ?? { operations: [] };
      expect(operations.length).toBeGreaterThan(0);
      const patterns = (module.paths ?? []).map(under);
      for (const { route } of operations) {
        const path = route.path.replace(/\{(\w+)\}/g, ":$1");
        expect(
          patterns.some((p) => p.test(path)),
          `${route.method.toUpperCase()} ${route.path} is outside ${module.paths?.join(", ")}`,
        ).toBe(true);
      }
    });
  }
});
