/**
 * Cheap refreshes: a GET's JSON answer carries a weak ETag, and If-None-Match with it answers 304
 * with no body (the request id and CORS headers kept) until the answer changes. Safe edits: a PUT
 * with If-Match changes the record only if it is still as read (else 412, nothing written), even
 * when edits race.
 */
import { describe, expect, it } from "vitest";
import { etagOf } from "../src/lib/etag";
import { uniq } from "./fixtures";
import { configWith, DEMO, makeTestApp, problem } from "./helpers";

const NORTH = 1;
const t = makeTestApp();
const admin = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });

describe("the tag itself", () => {
  it("is the same for the same bytes wherever they sit, and another for any changed byte, the last included", () => {
    const bytes = new TextEncoder().encode('{"name":"Zoë Müller","id":12345}');
    const tag = etagOf(bytes);
    expect(tag).toMatch(/^W\/"[0-9a-f]{16}"$/);
    // The same bytes at an offset that is not a multiple of four, and as an ArrayBuffer.
    const shifted = new Uint8Array(bytes.length + 1);
    shifted.set(bytes, 1);
    expect(etagOf(shifted.subarray(1))).toBe(tag);
    expect(etagOf(bytes.slice().buffer)).toBe(tag);
    const seen = new Set([tag]);
    for (const at of [0, 5, bytes.length - 2, bytes.length - 1]) {
      const changed = bytes.slice();
      changed[at] = (changed[at] ?? 0) ^ 1;
      seen.add(etagOf(changed));
    }
    seen.add(etagOf(bytes.subarray(0, bytes.length - 1)));
    seen.add(etagOf(new Uint8Array(0)));
    expect(seen.size).toBe(7);
  });
});

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

describe("If-Match on an update", () => {
  async function document(name: string) {
    const token = await admin();
    const res = await t.request("/api/v1/documents", {
      method: "POST",
      token,
      school: NORTH,
      body: { name, slug: `${NORTH}/documents/${uniq("ifmatch")}.pdf` },
    });
    const { id } = (await res.json()) as { id: number };
    const read = await t.request(`/api/v1/documents/${id}`, { token, school: NORTH });
    return { id, tag: read.headers.get("etag") ?? "", token };
  }
  const put = (id: number, token: string, name: string, ifMatch?: string) =>
    t.request(`/api/v1/documents/${id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { name },
      headers: ifMatch === undefined ? {} : { "if-match": ifMatch },
    });
  const nameOf = async (id: number, token: string) =>
    ((await (await t.request(`/api/v1/documents/${id}`, { token, school: NORTH })).json()) as { name: string }).name;

  it("two admins edit one record: the second, holding a stale ETag, gets a 412 and overwrites nothing", async () => {
    const { id, tag, token } = await document("Reglamento");
    t.clock.advance(1);
    expect((await put(id, token, "Reglamento 2026", tag)).status).toBe(204);
    const stale = await put(id, token, "Reglamento viejo", tag);
    expect(stale.status).toBe(412);
    expect((await problem(stale)).detail).toMatch(/changed since it was read/);
    expect(await nameOf(id, token)).toBe("Reglamento 2026");
    // `*` asks only that it exists; no If-Match keeps last-writer-wins.
    expect((await put(id, token, "Reglamento B", "*")).status).toBe(204);
    expect((await put(id, token, "Reglamento C")).status).toBe(204);
    expect((await put(999999, token, "Nada", "*")).status).toBe(404);
  });

  it("ten edits racing with one ETag: exactly one is written, the others are 412s", async () => {
    const { id, tag, token } = await document("Circular");
    t.clock.advance(1);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => put(id, token, `Circular ${i}`, tag)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(9);
    const winner = answers.findIndex((r) => r.status === 204);
    expect(await nameOf(id, token)).toBe(`Circular ${winner}`);
  });
});
