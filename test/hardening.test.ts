/**
 * Inputs the API must refuse, and answers it must give exactly, where leniency is easy to slip
 * into: one `it` per rule. Lists and statuses are walked from the OpenAPI document, so a new list or
 * route is covered the day it is added.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { z } from "@hono/zod-openapi";
import { count, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { mountOperation } from "../src/app";
import type { Db } from "../src/db/client";
import { documents } from "../src/db/schema/document";
import { cronHistory } from "../src/db/schema/jobs";
import { handleQueue } from "../src/jobs/queue";
import { runScheduled } from "../src/jobs/scheduled";
import { conflict } from "../src/lib/errors";
import { m } from "../src/lib/message";
import { defineRoute, json, operation } from "../src/lib/route";
import { DEMO, makeTestApp, problem } from "./helpers";

type Parameter = { name: string; in: string; required?: boolean };
type Doc = { paths: Record<string, Record<string, { operationId: string; parameters?: Parameter[] }>> };

const NORTH = 1;
const SOUTH = 2;
const NO_SCHOOL = 999;

const t = makeTestApp();
let superAdmin: string;
let northAdmin: string;

beforeAll(async () => {
  superAdmin = await t.token(DEMO.superAdmin.id, {}, true);
  northAdmin = await t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
});

const post = (path: string, body: unknown, token = superAdmin, headers?: Record<string, string>) =>
  t.request(path, { method: "POST", token, school: NORTH, body, headers });

describe("lookups keyed by user input use own keys only", () => {
  it("sort=valueOf (or constructor, toString, __proto__, hasOwnProperty) is a 400 on every list with a sort", async () => {
    const doc = (await (await t.request("/api/openapi.json")).json()) as Doc;
    const lists = Object.entries(doc.paths).filter(([, item]) =>
      item.get?.parameters?.some((p) => p.in === "query" && p.name === "sort"),
    );
    expect(lists.length, "lists with a sort parameter").toBeGreaterThanOrEqual(4);
    for (const [path] of lists) {
      for (const sort of ["valueOf", "constructor", "toString", "__proto__", "hasOwnProperty", "-valueOf"]) {
        const res = await t.request(`${path}?sort=${sort}`, { token: superAdmin, school: NORTH });
        expect(res.status, `${path}?sort=${sort}`).toBe(400);
        const body = await problem(res);
        expect(body.errors?.[0]?.path).toBe("sort");
        expect(body.errors?.[0]?.message).toMatch(/Unknown sort field/);
      }
    }
  });

  it("a queue or cron expression named after an Object built-in finds no consumer or job", async () => {
    for (const queue of ["constructor", "toString", "valueOf", "__proto__"]) {
      const message = { id: `builtin-${queue}`, timestamp: new Date(0), attempts: 1, body: {} };
      const batch = createMessageBatch(queue, [message]);
      const ctx = createExecutionContext();
      await handleQueue(t.deps, batch);
      const result = await getQueueResult(batch, ctx);
      expect(result.explicitAcks, `queue ${queue}: not acked as if processed`).toEqual([]);
      expect(
        result.retryMessages.map((m) => m.msgId),
        `queue ${queue}`,
      ).toEqual([message.id]);
    }
    const runs = async () => (await t.db.select({ n: count() }).from(cronHistory))[0]?.n ?? 0;
    const before = await runs();
    for (const cron of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      await runScheduled(t.deps, cron);
    }
    expect(await runs()).toBe(before);
  });
});

describe("X-School-Id", () => {
  it("naming a school that does not exist is a 404 for everyone, super-admins included", async () => {
    const asSuperAdmin = { token: superAdmin, school: NO_SCHOOL };
    const reads = ["/api/v1/school-configuration", "/api/v1/documents", "/api/v1/rules-transportation/content"];
    for (const path of reads) {
      const res = await t.request(path, asSuperAdmin);
      expect(res.status, path).toBe(404);
      expect((await problem(res)).detail).toBe(`School ${NO_SCHOOL} not found`);
    }
    const writes: [string, string, unknown][] = [
      ["POST", "/api/v1/documents", { name: "Ghost", slug: `${NO_SCHOOL}/documents/ghost.pdf` }],
      ["PUT", "/api/v1/rules-transportation/content", { content: "Ghost rules" }],
      [
        "POST",
        "/api/v1/documents/documents/signed-url",
        { contentType: "application/pdf", slug: `${NO_SCHOOL}/documents/ghost.pdf`, name: "Ghost" },
      ],
    ];
    for (const [method, path, body] of writes) {
      const res = await t.request(path, { method, body, ...asSuperAdmin });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect((await problem(res)).detail).toBe(`School ${NO_SCHOOL} not found`);
    }
    expect(await t.db.select().from(documents).where(eq(documents.schoolId, NO_SCHOOL))).toEqual([]);
    // Platform data too: the header still names a school.
    expect((await t.request("/api/v1/permission", asSuperAdmin)).status).toBe(404);

    // A non-member: a school that does not exist is a 404, an existing one a 403.
    const missing = await t.request("/api/v1/school-configuration", { token: northAdmin, school: NO_SCHOOL });
    expect(missing.status).toBe(404);
    expect((await problem(missing)).detail).toBe(`School ${NO_SCHOOL} not found`);
    const theirs = await t.request("/api/v1/school-configuration", { token: northAdmin, school: SOUTH });
    expect(theirs.status).toBe(403);
    await problem(theirs);
    // A member of the school, and a super-admin in an existing school, go through.
    expect((await t.request("/api/v1/school-configuration", { token: northAdmin, school: NORTH })).status).toBe(200);
    expect((await t.request("/api/v1/school-configuration", { token: superAdmin, school: SOUTH })).status).toBe(200);
    // `constructor` and friends never reach a lookup: the header is digits.
    const named = await t.request("/api/v1/school-configuration", {
      token: northAdmin,
      headers: { "x-school-id": "constructor" },
    });
    expect(named.status).toBe(400);
  });

  it("a super-admin without X-School-Id on a school route is a 400 that says to send it", async () => {
    // Even one with a role in a single school: a super-admin always names the school they act in.
    for (const token of [superAdmin, await t.token(DEMO.superAdmin.id, { [NORTH]: [] }, true)]) {
      const res = await t.request("/api/v1/school-configuration", { token });
      expect(res.status).toBe(400);
      const body = await problem(res);
      expect(body.detail).toMatch(/X-School-Id header is required: a super-admin names the school/);
      expect(body.errors).toEqual([{ path: "X-School-Id", message: "Required" }]);
    }
    // Platform routes need no school.
    expect((await t.request("/api/v1/permission", { token: superAdmin })).status).toBe(200);
  });

  it("checks the school without a database round trip for members whose token lists it", async () => {
    // A database whose every call fails: any query turns the answer into a 500.
    const fail = () => {
      throw new Error("the database was called");
    };
    // Every database: the school a super-admin names is looked up in its own (docs/scaling.md "Shards").
    const failing = new Proxy({}, { get: () => fail }) as unknown as Db;
    const b = makeTestApp({ db: failing, shards: { DB: failing, DB_SHARD_1: failing } });
    const Where = z.object({ schoolId: z.number().nullable() });
    mountOperation(
      b.app,
      operation(
        defineRoute({
          method: "get",
          path: "/test/where",
          tag: "Operations",
          operationId: "probeWhere",
          summary: "School probe (test only)",
          access: "member",
          responses: { 200: json(Where, "The current school") },
        }),
        (ctx) => ({ schoolId: ctx.schoolId }),
      ),
    );
    const member = await b.token(DEMO.northAdmin.id, { [NORTH]: "all" });
    const res = await b.request("/test/where", { token: member, school: NORTH });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ schoolId: NORTH });
    // A super-admin's school is looked up (here: the failing database answers).
    const lookedUp = await b.request("/test/where", { token: await b.token(DEMO.superAdmin.id, {}, true), school: 2 });
    expect(lookedUp.status).toBe(500);
  });
});

describe("the test harness", () => {
  it("fails a test whose response status its OpenAPI operation does not declare", async () => {
    const p = makeTestApp();
    p.app.openapi(
      defineRoute({
        method: "get",
        path: "/test/undeclared",
        tag: "Operations",
        operationId: "probeUndeclared",
        summary: "Answers a status it does not declare (test only)",
        access: "public",
        responses: { 200: json(z.object({}), "Never") },
      }),
      () => {
        throw conflict(m`Not declared`);
      },
    );
    await expect(p.request("/test/undeclared")).rejects.toThrow(
      /answered 409, which probeUndeclared .*does not declare/,
    );
  });
});

describe("lenient input", () => {
  it("every integer query parameter of every list (ids, pages) takes plain digits only", async () => {
    const doc = (await (await t.request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { parameters?: (Parameter & { schema?: { type?: string; example?: unknown } })[] }>
      >;
    };
    const filters = Object.entries(doc.paths).flatMap(([path, item]) =>
      !path.includes("{")
        ? (item.get?.parameters ?? [])
            .filter((p) => p.in === "query" && p.schema?.type === "integer")
            .map((p) => {
              // The other required query parameters (a lookup's key) get their examples.
              const required = (item.get?.parameters ?? [])
                .filter((q) => q.in === "query" && q.required && q.name !== p.name)
                .map((q) => `${q.name}=${encodeURIComponent(String(q.schema?.example ?? ""))}&`)
                .join("");
              return [path, p.name, required] as const;
            })
        : [],
    );
    expect(filters.map(([path, name]) => `${path}?${name}`)).toEqual(
      expect.arrayContaining([
        "/api/v1/student?group",
        "/api/v1/group-student?groupId",
        "/api/v1/trusted-person?studentId",
        "/api/v1/delegate?parentId",
        "/api/v1/parent?familyId",
        "/api/v1/role-user?userId",
      ]),
    );
    for (const [path, name, required] of filters) {
      for (const value of ["1e0", "0x1", "1.0", "+1"]) {
        const res = await t.request(`${path}?${required}${name}=${encodeURIComponent(value)}`, {
          token: superAdmin,
          school: NORTH,
        });
        expect(res.status, `${path}?${name}=${value}`).toBe(400);
        expect((await problem(res)).errors?.[0]?.path).toBe(name);
      }
    }
  });

  it("invalid UTF-8 in a JSON body is a 400, not stored with replacement characters", async () => {
    const prefix = new TextEncoder().encode('{"name":"utf.bad","description":"caf');
    const suffix = new TextEncoder().encode('"}');
    for (const invalid of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      const body = new Uint8Array([...prefix, ...invalid, ...suffix]);
      const res = await post("/api/v1/permission", body, superAdmin, { "content-type": "application/json" });
      expect(res.status, invalid.join(",")).toBe(400);
      expect((await problem(res)).detail).toMatch(/UTF-8/);
    }
    const listed = await t.request("/api/v1/permission?name=utf.bad", { token: superAdmin });
    expect(((await listed.json()) as { total: number }).total).toBe(0);
    // Valid UTF-8 (after a byte order mark, too) is fine.
    const valid = new TextEncoder().encode('\ufeff{"name":"utf.good","description":"café ✓"}');
    const ok = await post("/api/v1/permission", valid, superAdmin, { "content-type": "application/json" });
    expect(ok.status).toBe(201);
    expect(((await ok.json()) as { description: string }).description).toBe("café ✓");
  });

  it("a JSON body with another charset or a +json media type is a 415", async () => {
    const body = JSON.stringify({ phone: DEMO.northAdmin.phone });
    for (const type of [
      "application/json; charset=iso-8859-1",
      "application/json; charset=utf-16",
      "application/vnd.x+json",
      "application/problem+json",
      "application/json; profile=x",
      "application/jsonx",
    ]) {
      const res = await t.request("/api/v1/auth/verify-phone-number", {
        method: "POST",
        headers: { "content-type": type },
        body,
      });
      expect(res.status, type).toBe(415);
      expect((await problem(res)).type).toBe("/problems/unsupported-media-type");
    }
    for (const type of ["application/json", "application/json; charset=utf-8", 'Application/JSON;Charset="UTF-8"']) {
      const res = await t.request("/api/v1/auth/verify-phone-number", {
        method: "POST",
        headers: { "content-type": type },
        body,
      });
      expect(res.status, type).toBe(200);
    }
  });

  it("a control character (NUL, DEL, C1) in a search term is a 400", async () => {
    for (const path of ["/api/v1/permission", "/api/v1/documents"]) {
      for (const term of ["%00", "read%00", "%01x", "x%7F", "%C2%85", "%E2%80%AE"]) {
        const res = await t.request(`${path}?name=${term}`, { token: superAdmin, school: NORTH });
        expect(res.status, `${path}?name=${term}`).toBe(400);
        expect((await problem(res)).errors?.[0]?.path).toBe("name");
      }
    }
  });

  it("bidi formatting and control characters in names, descriptions and slugs are a 400", async () => {
    const bad = ["\u202e", "\u202a", "\u2066", "\u2069", "\u200e", "\u200f", "\u061c", "\u0000", "\n", "\u0085"];
    for (const ch of bad) {
      const code = ch.charCodeAt(0).toString(16);
      const cases: [string, unknown, string][] = [
        ["/api/v1/documents", { name: `Report${ch}fdp.exe`, slug: `${NORTH}/documents/r-${code}.pdf` }, "name"],
        ["/api/v1/documents", { name: "Report", slug: `${NORTH}/documents/x${ch}fdp.exe` }, "slug"],
        [
          "/api/v1/school-configuration",
          { name: `2026${ch}2027`, startDate: "2026-08-24", endDate: "2027-06-30" },
          "name",
        ],
        ["/api/v1/permission", { name: `bidi.p${code}`, description: `Reads${ch}all` }, "description"],
        [
          "/api/v1/documents/documents/signed-url",
          { contentType: "application/pdf", slug: `${NORTH}/documents/s-${code}.pdf`, name: `S${ch}x` },
          "name",
        ],
      ];
      for (const [path, body, field] of cases) {
        const res = await post(path, body);
        expect(res.status, `${path} ${field} U+${code}`).toBe(400);
        expect((await problem(res)).errors?.map((e) => e.path)).toContain(field);
      }
    }
    // Updates too.
    const id = (
      (await (await post("/api/v1/documents", { name: "Plain", slug: "1/documents/plain.pdf" })).json()) as {
        id: number;
      }
    ).id;
    const put = await t.request(`/api/v1/documents/${id}`, {
      method: "PUT",
      token: superAdmin,
      school: NORTH,
      body: { name: "gpj.\u202eexe" },
    });
    expect(put.status).toBe(400);
    // Text is still trimmed, and other scripts are welcome.
    const ok = await post("/api/v1/documents", { name: "  تقرير 2026 ✓ ", slug: "1/documents/تقرير.pdf" });
    expect(ok.status).toBe(201);
    expect(((await ok.json()) as { name: string }).name).toBe("تقرير 2026 ✓");
  });

  it("a document slug whose file name is . is a 400 (URL normalisation would sign another key)", async () => {
    for (const slug of [`${NORTH}/documents/.`, `${NORTH}/documents/..`]) {
      const created = await post("/api/v1/documents", { name: "Dot", slug });
      expect(created.status, slug).toBe(400);
      expect((await problem(created)).errors?.map((e) => e.path)).toContain("slug");
      const signed = await post("/api/v1/documents/documents/signed-url", {
        contentType: "application/pdf",
        slug,
        name: "Dot",
      });
      expect(signed.status, slug).toBe(400);
      expect((await problem(signed)).errors?.map((e) => e.path)).toContain("slug");
    }
    expect(
      await t.db
        .select()
        .from(documents)
        .where(eq(documents.slug, `${NORTH}/documents/.`)),
    ).toEqual([]);
    // A dot inside a file name is fine.
    expect((await post("/api/v1/documents", { name: "Dots", slug: `${NORTH}/documents/.hidden.v2.pdf` })).status).toBe(
      201,
    );
  });

  it("a known path with an unsupported method is a 405 with allow, not a 404", async () => {
    for (const [method, path, allow] of [
      ["PATCH", "/api/v1/documents/1", "DELETE, GET, HEAD, PUT"],
      ["POST", "/api/v1/documents/1", "DELETE, GET, HEAD, PUT"],
      ["PATCH", "/api/v1/permission", "GET, HEAD, POST"],
      ["DELETE", "/api/v1/rules-transportation/content", "GET, HEAD, PUT"],
      ["GET", "/api/v1/auth/verify-code", "POST"],
      ["GET", "/api/v1/documents/documents/signed-url", "POST"],
    ] as const) {
      const res = await t.request(path, { method, token: superAdmin, school: NORTH });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow);
      const body = await problem(res);
      expect(body).toMatchObject({ type: "/problems/method-not-allowed", title: "Method not allowed" });
      expect(body.detail).toContain(allow);
    }
    // An unknown path stays a 404.
    const unknown = await t.request("/api/v1/documents/1/nothing", { method: "PATCH" });
    expect(unknown.status).toBe(404);
    await problem(unknown);
  });
});
