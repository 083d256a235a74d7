/**
 * The module registry: the app routes a request to a module by the paths it declares, so every
 * operation of a module must lie under one of them (else it would be unreachable, or served by
 * another module's app); names are unique; a module's cheap facts (its index) load nothing heavy.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MODULES } from "../src/modules";
import { makeTestApp } from "./helpers";

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

describe("routing to a module", () => {
  it("sends a module's path and everything below it to the module, and nothing that only starts like it", async () => {
    const { app } = makeTestApp();
    const at = (path: string) => app.request(`http://localhost${path}`, {}, env);
    expect((await at("/api/health")).status).toBe(200);
    // The documents module's own answer (no credentials), not the app's 404.
    for (const path of ["/api/v1/documents", "/api/v1/documents/1"]) {
      expect((await at(path)).status, path).toBe(401);
    }
    // Nested module paths reach their module too.
    expect((await at("/api/v1/school-configuration/1/school-holiday-cycle")).status).toBe(401);
    const stray = await at("/api/v1/documentsx");
    expect(stray.status).toBe(404);
    expect(((await stray.json()) as { detail: string }).detail).toBe("No route for GET /api/v1/documentsx");
  });
});
