/**
 * The API-wide contracts: problem+json for every failure, strict input, the list
 * envelope with its links, request ids, no leaks from a 500, and the body size limit.
 */

import { env } from "cloudflare:test";
import { count } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../src/config";
import type { Db } from "../src/db/client";
import { permissions } from "../src/db/schema/core";
import type { Page } from "../src/lib/pagination";
import { PRODUCTION_VARS } from "./config-vars";
import { DEMO, makeTestApp, problem } from "./helpers";

const t = makeTestApp();
let superAdmin: string;
let admin: string;
let total: number;

beforeAll(async () => {
  superAdmin = await t.token(DEMO.superAdmin.id, {}, true);
  admin = await t.token(DEMO.northAdmin.id, { 1: "all" });
  total = (await t.db.select({ n: count() }).from(permissions))[0]?.n ?? 0;
});

type Envelope = Page<{ id: number; name: string }>;

const list = async (query: string) => {
  const res = await t.request(`/api/v1/permission${query}`, { token: admin });
  expect(res.status, query).toBe(200);
  return (await res.json()) as Envelope;
};

describe("problem+json", () => {
  it("answers an unknown route with a 404 problem", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/no-such-thing"],
      ["POST", "/api/v1/no-such-thing"],
      ["GET", "/"],
      ["PATCH", "/api/v1/permission/1/nothing"],
    ] as const) {
      const res = await t.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      const body = await problem(res);
      expect(body).toMatchObject({ type: "/problems/not-found", title: "Not found", instance: path });
      expect(body.detail).toContain(path);
    }
  });

  it("refuses malformed JSON with 400", async () => {
    for (const raw of ["{bad", '{"phone": ', "[1,", "nul"]) {
      const res = await t.request("/api/v1/auth/send-verification-code", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: raw,
      });
      expect(res.status, raw).toBe(400);
      expect((await problem(res)).type).toBe("/problems/validation-error");
    }
  });

  it("refuses JSON that is not an object with 400", async () => {
    for (const raw of ["[]", '"+15550000002"', "42", "null"]) {
      const res = await t.request("/api/v1/auth/send-verification-code", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: raw,
      });
      expect(res.status, raw).toBe(400);
      await problem(res);
    }
  });

  it("refuses a body that is not JSON with 415", async () => {
    for (const [type, raw] of [
      ["text/plain", '{"phone":"+15550000002"}'],
      ["application/x-www-form-urlencoded", "phone=%2B15550000002"],
      ["application/xml", "<phone>+15550000002</phone>"],
    ]) {
      const res = await t.request("/api/v1/auth/send-verification-code", {
        method: "POST",
        headers: { "content-type": type as string },
        body: raw,
      });
      expect(res.status, type).toBe(415);
      expect((await problem(res)).type).toBe("/problems/unsupported-media-type");
    }
    // Nothing was sent.
    expect(((await (await t.request("/api/v1/dev/outbox?to=%2B15550000002")).json()) as Envelope).total).toBe(0);
  });

  it("accepts JSON with a charset", async () => {
    const res = await t.request("/api/v1/auth/verify-phone-number", {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ phone: DEMO.northAdmin.phone }),
    });
    expect(res.status).toBe(200);
  });

  it("refuses an empty body where fields are required, and an empty update", async () => {
    const noBody = await t.request("/api/v1/auth/send-verification-code", { method: "POST" });
    expect(noBody.status).toBe(400);
    expect((await problem(noBody)).errors?.map((e) => e.path)).toContain("phone");

    const empty = await t.request("/api/v1/permission", { method: "POST", token: superAdmin, body: {} });
    expect(empty.status).toBe(400);
    expect((await problem(empty)).errors?.map((e) => e.path)).toContain("name");

    const emptyJson = await t.request("/api/v1/permission", {
      method: "POST",
      token: superAdmin,
      headers: { "content-type": "application/json" },
      body: "",
    });
    expect(emptyJson.status).toBe(400);
    await problem(emptyJson);

    for (const body of [undefined, {}, { description: undefined }]) {
      const res = await t.request("/api/v1/permission/1", { method: "PUT", token: superAdmin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      await problem(res);
    }
  });

  it("refuses unknown body fields, naming them", async () => {
    const res = await t.request("/api/v1/permission", {
      method: "POST",
      token: superAdmin,
      body: { name: "report.export", id: 7, createdAt: "2026-01-01T00:00:00Z" },
    });
    expect(res.status).toBe(400);
    const body = await problem(res);
    expect(body.errors?.map((e) => e.path).join(", ")).toMatch(/\bid\b/);
    expect(body.errors?.map((e) => e.path).join(", ")).toMatch(/\bcreatedAt\b/);
    expect(body.errors?.[0]?.message).toBe("Unknown field");
    // Nothing was created.
    expect((await list("?name=report.export")).total).toBe(0);
  });

  it("refuses wrong types with 400 and a path per field", async () => {
    const res = await t.request("/api/v1/permission", {
      method: "POST",
      token: superAdmin,
      body: { name: 5, description: ["x"] },
    });
    expect(res.status).toBe(400);
    expect((await problem(res)).errors?.map((e) => e.path).sort()).toEqual(["description", "name"]);
  });

  it("refuses bad ids with 400 and unknown ids with 404", async () => {
    for (const id of ["abc", "0", "-1", "1.5", "9007199254740993", "1;DROP"]) {
      const res = await t.request(`/api/v1/permission/${id}`, { token: admin });
      expect(res.status, id).toBe(400);
      expect((await problem(res)).errors?.[0]?.path).toBe("id");
    }
    const missing = await t.request("/api/v1/permission/99999", { token: admin });
    expect(missing.status).toBe(404);
    expect((await problem(missing)).type).toBe("/problems/not-found");
  });
});

describe("lists", () => {
  it("refuses page and pageSize out of range or not numbers", async () => {
    for (const [query, path] of [
      ["pageSize=0", "pageSize"],
      ["pageSize=101", "pageSize"],
      ["pageSize=x", "pageSize"],
      ["pageSize=2.5", "pageSize"],
      ["page=0", "page"],
      ["page=-1", "page"],
      ["page=x", "page"],
    ]) {
      const res = await t.request(`/api/v1/permission?${query}`, { token: admin });
      expect(res.status, query).toBe(400);
      expect((await problem(res)).errors?.[0]?.path, query).toBe(path);
    }
  });

  it("refuses unknown query parameters and unknown sort fields", async () => {
    const unknown = await t.request("/api/v1/permission?color=red", { token: admin });
    expect(unknown.status).toBe(400);
    expect((await problem(unknown)).errors?.[0]?.path).toBe("color");

    for (const sort of ["description", "-secret", "name,bogus", ""]) {
      const res = await t.request(`/api/v1/permission?sort=${sort}`, { token: admin });
      if (sort === "") {
        expect(res.status).toBe(200); // no sort given
        continue;
      }
      expect(res.status, sort).toBe(400);
      const body = await problem(res);
      expect(body.errors?.[0]?.path).toBe("sort");
      expect(body.errors?.[0]?.message).toMatch(/name/);
    }
  });

  it("sorts by the given fields", async () => {
    const asc = (await list("?sort=name&pageSize=100")).data.map((p) => p.name);
    expect(asc).toEqual([...asc].sort());
    const desc = (await list("?sort=-name&pageSize=100")).data.map((p) => p.name);
    expect(desc).toEqual([...asc].reverse());
    const byId = (await list("?sort=-id&pageSize=100")).data.map((p) => p.id);
    expect(byId).toEqual([...byId].sort((a, b) => b - a));
  });

  it("answers the envelope with links to the neighbouring pages", async () => {
    expect(total).toBeGreaterThanOrEqual(22);
    const lastPage = Math.ceil(total / 5);

    const first = await list("?pageSize=5");
    expect(Object.keys(first).sort()).toEqual(["data", "lastPage", "next", "page", "pageSize", "previous", "total"]);
    expect(first).toMatchObject({ page: 1, pageSize: 5, total, lastPage, previous: null });
    expect(first.data).toHaveLength(5);
    // The request's own parameters keep their order; page is added after them.
    expect(first.next).toBe("/api/v1/permission?pageSize=5&page=2");

    const second = await list("?page=2&pageSize=5");
    expect(second.next).toBe("/api/v1/permission?page=3&pageSize=5");
    expect(second.previous).toBe("/api/v1/permission?page=1&pageSize=5");
    expect(second.data.map((p) => p.id)).not.toContain(first.data[0]?.id);

    // Following `next` walks every record exactly once.
    const seen: number[] = [];
    let link: string | null = "/api/v1/permission?pageSize=5";
    while (link) {
      const page: Envelope = await list(link.slice("/api/v1/permission".length));
      seen.push(...page.data.map((p) => p.id));
      link = page.next;
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);

    const last = await list(`?page=${lastPage}&pageSize=5`);
    expect(last.next).toBeNull();
    expect(last.previous).toBe(`/api/v1/permission?page=${lastPage - 1}&pageSize=5`);
    expect(last.data).toHaveLength(total - (lastPage - 1) * 5);

    const beyond = await list("?page=99&pageSize=5");
    expect(beyond).toMatchObject({ data: [], page: 99, total, lastPage, next: null });
    expect(beyond.previous).toBe(`/api/v1/permission?page=${lastPage}&pageSize=5`);
  });

  it("keeps filters in the links, and defaults to page 1 of 20", async () => {
    const all = await list("");
    expect(all).toMatchObject({ page: 1, pageSize: 20 });
    expect(all.next).toBe(total > 20 ? "/api/v1/permission?page=2&pageSize=20" : null);

    const filtered = await list("?name=read&pageSize=2");
    expect(filtered.total).toBeGreaterThan(2);
    expect(filtered.data.every((p) => p.name.includes("read"))).toBe(true);
    expect(filtered.next).toBe("/api/v1/permission?name=read&pageSize=2&page=2");
  });

  it("an empty list is one page", async () => {
    expect(await list("?name=nothing-matches-this")).toEqual({
      data: [],
      page: 1,
      pageSize: 20,
      total: 0,
      lastPage: 1,
      next: null,
      previous: null,
    });
  });
});

describe("request ids", () => {
  it("are on every response, and a sane incoming one is echoed", async () => {
    const responses = [
      await t.request("/api/health"),
      await t.request("/api/v1/permission", { token: admin }),
      await t.request("/api/v1/permission?pageSize=0", { token: admin }),
      await t.request("/api/v1/permission"),
      await t.request("/api/v1/nowhere"),
      await t.request("/api/openapi.json"),
    ];
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^[\w.:-]{8,64}$/);
    expect(new Set(ids).size).toBe(ids.length);

    const echoed = await t.request("/api/v1/nowhere", { headers: { "x-request-id": "client-abc.123:7" } });
    expect(echoed.headers.get("x-request-id")).toBe("client-abc.123:7");
    expect(((await echoed.json()) as { requestId: string }).requestId).toBe("client-abc.123:7");
  });

  it("replaces an incoming id that is not sane", async () => {
    for (const bad of ["has space", "x".repeat(65), "<script>", "a\tb"]) {
      const res = await t.request("/api/health", { headers: { "x-request-id": bad } });
      const id = res.headers.get("x-request-id");
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe("unexpected failures", () => {
  it("answer a 500 problem that reveals no SQL or stack, with the request id", async () => {
    const fail = () => {
      throw new Error("D1_ERROR: no such table: SELECT secret FROM x");
    };
    // A database whose every call fails: failure injection, not a stand-in for behaviour.
    const broken = new Proxy({}, { get: () => fail }) as unknown as Db;
    const b = makeTestApp({ db: broken });
    const token = await b.token(DEMO.northAdmin.id, { 1: "all" });
    for (const path of ["/api/v1/permission", "/api/v1/permission/1", "/api/v1/user/me"]) {
      const res = await b.request(path, { token, headers: { "x-request-id": "req-500" } });
      expect(res.status, path).toBe(500);
      expect(res.headers.get("x-request-id")).toBe("req-500");
      const text = await res.clone().text();
      expect(text).not.toMatch(/SELECT|secret|D1_ERROR|no such table/i);
      expect(text).not.toMatch(/\bat \S+ \(|\.ts:\d+|\n\s+at /);
      const body = (await problem(res)) as Awaited<ReturnType<typeof problem>> & { requestId?: string };
      expect(body).toMatchObject({
        type: "/problems/internal-error",
        title: "Internal server error",
        status: 500,
        requestId: "req-500",
        instance: path,
      });
      expect(Object.keys(body).sort()).toEqual(["detail", "instance", "requestId", "status", "title", "type"]);
    }
  });
});

describe("body size", () => {
  it("refuses a body over 1 MiB with 413", async () => {
    const big = JSON.stringify({ phone: DEMO.northAdmin.phone, pad: "x".repeat(1024 * 1024) });
    const res = await t.request("/api/v1/auth/send-verification-code", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect(res.status).toBe(413);
    expect((await problem(res)).type).toBe("/problems/payload-too-large");
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("refuses it even without a content-length (streamed)", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 1024 * 1024) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await t.app.request(
      "http://localhost/api/v1/auth/send-verification-code",
      { method: "POST", headers: { "content-type": "application/json" }, body: stream, duplex: "half" } as RequestInit,
      {} as Env,
    );
    expect(res.status).toBe(413);
    await problem(res);
  });
});

describe("the access log", () => {
  it("writes one JSON line per request: method, route, status, duration, D1 calls, who and where", async () => {
    const lines: Record<string, unknown>[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      const parsed = JSON.parse(String(line)) as Record<string, unknown>;
      if (parsed.message === "request") lines.push(parsed);
    });
    try {
      const t = makeTestApp();
      const token = await t.token(2, { 1: "all" });
      await t.request("/api/v1/documents?pageSize=5", { token, school: 1, headers: { "x-request-id": "log-1" } });
      await t.request("/api/v1/documents/987654", { token, school: 1, headers: { "x-request-id": "log-2" } });
    } finally {
      spy.mockRestore();
    }
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: "info",
      requestId: "log-1",
      method: "GET",
      route: "/api/v1/documents",
      status: 200,
      d1Calls: 1,
      userId: 2,
      schoolId: 1,
    });
    expect(lines[0]?.durationMs).toBeTypeOf("number");
    expect(lines[1]).toMatchObject({ requestId: "log-2", route: "/api/v1/documents/:id", status: 404, d1Calls: 1 });
  });

  it('with ACCESS_LOG="problems" (production\'s default) logs only 4xx/5xx answers, which Workers Logs cannot explain alone', async () => {
    expect(
      loadConfig({ AUTH_SECRET: "config-test-secret-0123456789abcdef0123456789", ...PRODUCTION_VARS }).accessLog,
    ).toBe("problems");
    const lines: Record<string, unknown>[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      const parsed = JSON.parse(String(line)) as Record<string, unknown>;
      if (parsed.message === "request") lines.push(parsed);
    });
    try {
      const t = makeTestApp({ config: { ...loadConfig(env), accessLog: "problems" } });
      const token = await t.token(2, { 1: "all" });
      await t.request("/api/v1/documents?pageSize=5", { token, school: 1, headers: { "x-request-id": "quiet-1" } });
      await t.request("/api/v1/documents/987654", { token, school: 1, headers: { "x-request-id": "loud-2" } });
    } finally {
      spy.mockRestore();
    }
    expect(lines.map((l) => [l.requestId, l.status])).toEqual([["loud-2", 404]]);
  });
});
