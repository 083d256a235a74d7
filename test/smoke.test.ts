import { describe, expect, it } from "vitest";
import { DEMO, makeTestApp, problem } from "./helpers";

describe("smoke", () => {
  it("signs in and lists permissions", async () => {
    const t = makeTestApp();
    const { accessToken } = await t.signIn(DEMO.northAdmin.phone);
    const res = await t.request("/api/v1/permission", { token: accessToken });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { total: number };
    expect(page.total).toBeGreaterThan(10);
    const bad = await t.request("/api/v1/permission/abc", { token: accessToken });
    expect(bad.status).toBe(400);
    expect((await problem(bad)).errors?.[0]?.path).toBe("id");
  });
});
