/**
 * Every route that belongs to an application module (`x-module` in the OpenAPI document), checked
 * the day it is added, without editing this file: where the current school has the module
 * disabled, the route answers 403 with a problem that names the module, before any input is
 * parsed; where it is enabled, the same call passes authorization. Both kinds of caller are
 * checked: a super-admin (whose school lookup reads the modules at once) and a member signed in
 * for real (whose access token carries them, refreshed after each toggle).
 */
import { describe, expect, it } from "vitest";
import { configWith, DEMO, makeTestApp, problem, setModule, type TestApp } from "./helpers";

type Operation = { operationId: string; "x-module"?: string; requestBody?: unknown };

const NORTH = DEMO.northAdmin.school;

const t0 = makeTestApp();
const doc = (await (await t0.request("/api/openapi.json")).json()) as {
  paths: Record<string, Record<string, Operation>>;
};
const gated = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([, op]) => op["x-module"] !== undefined)
    .map(([method, op]) => ({ path, method: method.toUpperCase(), op, module: op["x-module"] as string })),
);

/** The route called with placeholder values: what matters is whether authorization lets it through. */
function call(t: TestApp, method: string, path: string, op: Operation, token: string) {
  const url = path.replace("{id}", "1").replace(/\{\w+\}/g, "documents");
  return t.request(url, { method, token, school: NORTH, body: op.requestBody ? {} : undefined });
}

async function refreshed(t: TestApp, refreshToken: string) {
  const res = await t.request("/api/v1/auth/refresh-token", { method: "POST", body: { refreshToken } });
  expect(res.status).toBe(200);
  return (await res.json()) as { accessToken: string; refreshToken: string };
}

describe("routes of application modules", () => {
  it("include the documents and transport routes", () => {
    const modules = new Set(gated.map((g) => g.module));
    expect(modules).toContain("documents");
    expect(modules).toContain("transport");
  });

  for (const { path, method, op, module } of gated) {
    it(`${method} ${path} (${op.operationId}): 403 naming ${module} where it is disabled, served where enabled`, async () => {
      // Every gated operation signs the demo admin in once, all at the same test instant: more
      // codes in that hour than development's limit of 100 per number.
      const t = makeTestApp({ config: configWith({ AUTH_CODES_PER_HOUR: "10000" }) });
      const superAdmin = await t.token(DEMO.superAdmin.id, {}, true);
      let member: { accessToken: string; refreshToken: string } = await t.signIn(DEMO.northAdmin.phone);

      const passes = async (token: string, who: string) => {
        const res = await call(t, method, path, op, token);
        expect([401, 403], `${who}: ${res.status} ${await res.clone().text()}`).not.toContain(res.status);
      };
      const refused = async (token: string, who: string) => {
        const res = await call(t, method, path, op, token);
        expect(res.status, who).toBe(403);
        const body = await problem(res);
        expect(body.title, who).toBe("Module disabled");
        expect(body.detail, who).toBe(`The ${module} module is disabled in school ${NORTH}`);
      };

      await passes(superAdmin, "super-admin, enabled");
      await passes(member.accessToken, "member, enabled");

      await setModule(t, NORTH, module, false);
      try {
        await refused(superAdmin, "super-admin, disabled");
        member = await refreshed(t, member.refreshToken);
        await refused(member.accessToken, "member, disabled");
      } finally {
        await setModule(t, NORTH, module, true);
      }

      await passes(superAdmin, "super-admin, enabled again");
      member = await refreshed(t, member.refreshToken);
      await passes(member.accessToken, "member, enabled again");
    });
  }
});
