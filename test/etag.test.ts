/**
 * Cheap refreshes: a GET's JSON answer carries a weak ETag, and If-None-Match with it answers 304
 * with no body (the request id and CORS headers kept) until the answer changes.
 */
import { describe, expect, it } from "vitest";
import { uniq } from "./fixtures";
import { configWith, DEMO, makeTestApp } from "./helpers";

const NORTH = 1;
const t = makeTestApp();
const admin = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });

describe("ETag and If-None-Match", () => {
  it("a record: 304 while unchanged, a new ETag once it changes", async () => {
    const token = await admin();
    const created = await t.request("/api/v1/documents", {
      method: "POST",
      token,
      school: NORTH,
      body: { name: "Horario", slug: `${NORTH}/documents/${uniq("etag")}.pdf` },
    });
    const { id } = (await created.json()) as { id: number };
    const get = (headers: Record<string, string> = {}) =>
      t.request(`/api/v1/documents/${id}`, { token, school: NORTH, headers });

    const first = await get();
    expect(first.status).toBe(200);
    const tag = first.headers.get("etag");
    expect(tag).toMatch(/^W\/"[\w-]+"$/);
    expect((await get()).headers.get("etag")).toBe(tag);

    const fresh = await get({ "if-none-match": tag ?? "" });
    expect(fresh.status).toBe(304);
    expect(await fresh.text()).toBe("");
    expect(fresh.headers.get("etag")).toBe(tag);
    expect(fresh.headers.get("x-request-id")).toBeTruthy();
    expect(fresh.headers.get("content-type")).toBeNull();
    // A list of tags, the strong form of the same tag, and `*` match too; another tag does not.
    expect((await get({ "if-none-match": `W/"other", ${tag}` })).status).toBe(304);
    expect((await get({ "if-none-match": (tag ?? "").replace(/^W\//, "") })).status).toBe(304);
    expect((await get({ "if-none-match": "*" })).status).toBe(304);
    expect((await get({ "if-none-match": 'W/"other"' })).status).toBe(200);

    const put = await t.request(`/api/v1/documents/${id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { name: "Horario 2" },
    });
    expect(put.status).toBe(204);
    const changed = await get({ "if-none-match": tag ?? "" });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(tag);
    expect(((await changed.json()) as { name: string }).name).toBe("Horario 2");
  });

  it("a list has one too; errors and files have none", async () => {
    const token = await admin();
    const list = await t.request("/api/v1/documents?pageSize=5", { token, school: NORTH });
    const tag = list.headers.get("etag");
    expect(tag).toBeTruthy();
    const again = await t.request("/api/v1/documents?pageSize=5", {
      token,
      school: NORTH,
      headers: { "if-none-match": tag ?? "" },
    });
    expect(again.status).toBe(304);
    const missing = await t.request("/api/v1/documents/999999", { token, school: NORTH });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("etag")).toBeNull();
    const file = await t.request("/api/v1/student/export", { token, school: NORTH });
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toContain("spreadsheetml");
    expect(file.headers.get("etag")).toBeNull();
    await file.arrayBuffer();
  });

  it("a browser on an allowed origin can read a 304's headers", async () => {
    const origin = "https://admin.example.org";
    const app = makeTestApp({ config: configWith({ CORS_ORIGINS: origin }) });
    const token = await app.token(DEMO.northAdmin.id, { [NORTH]: "all" });
    const first = await app.request("/api/v1/documents?pageSize=1", { token, school: NORTH, headers: { origin } });
    const res = await app.request("/api/v1/documents?pageSize=1", {
      token,
      school: NORTH,
      headers: { origin, "if-none-match": first.headers.get("etag") ?? "" },
    });
    expect(res.status).toBe(304);
    expect(res.headers.get("access-control-allow-origin")).toBe(origin);
  });
});
