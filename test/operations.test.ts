/**
 * Operations: health, app versions, the development outbox, the OpenAPI document
 * and docs page, the cron sweep through the Worker's own `scheduled` handler, and SMS delivery
 * through a server that speaks Twilio's Messages API.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { count, eq } from "drizzle-orm";
import { beforeEach, describe, expect, inject, it, vi } from "vitest";
import { createApp } from "../src/app";
import type { Db } from "../src/db/client";
import { refreshTokens, verificationCodes } from "../src/db/schema/auth";
import { users } from "../src/db/schema/core";
import { devOutbox } from "../src/db/schema/dev";
import { cronHistory } from "../src/db/schema/jobs";
import worker from "../src/index";
import { jobsFor } from "../src/jobs/scheduled";
import { TAGS } from "../src/lib/route";
import { twilioSms } from "../src/lib/sms";
import { configWith, DEMO, makeTestApp, problem, STRICT_AUTH_LIMITS } from "./helpers";

const t = makeTestApp();

beforeEach(() => {
  t.clock.advance(2 * 3600); // past every per-number code limit
});

type Report = {
  status: string;
  info: Record<string, { status: string }> | null;
  error: Record<string, { status: string; message?: string }> | null;
  details: Record<string, { status: string; message?: string }>;
};

describe("GET /api/health", () => {
  it("answers 200 when every dependency is up", async () => {
    const res = await t.request("/api/health");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const latest = env.TEST_MIGRATIONS.at(-1)?.name;
    const level = { applied: env.TEST_MIGRATIONS.length, latest, expected: latest, missing: false };
    const up = { database: { status: "up" }, "database:DB_SHARD_1": { status: "up" }, storage: { status: "up" } };
    expect(await res.json()).toEqual({
      status: "ok",
      info: up,
      error: {},
      details: up,
      // What vitest.config.ts defines, as scripts/wrangler.ts defines it for a build.
      build: { commit: "0123456789ab", committedAt: "2026-11-20T10:00:00+00:00", builtAt: "2026-11-21T08:00:00.000Z" },
      migrations: level,
      // Every database, the platform's and the shard's (docs/scaling.md "Shards").
      databases: [
        { binding: "DB", store: "d1", status: "up", migrations: level },
        { binding: "DB_SHARD_1", store: "d1", status: "up", migrations: level },
      ],
      warnings: [],
    });
  });

  it("names a shard that lacks a migration, with its level, in its own entry and a warning", async () => {
    const latest = env.TEST_MIGRATIONS.at(-1)?.name ?? "";
    const logged = vi.spyOn(console, "warn").mockImplementation(() => {});
    await env.DB_SHARD_1.prepare("DELETE FROM d1_migrations WHERE name = ?").bind(latest).run();
    try {
      const res = await t.request("/api/health");
      expect(res.status).toBe(200);
      const report = (await res.json()) as Report & {
        migrations: { missing: boolean };
        databases: { binding: string; migrations: { applied: number; missing: boolean } }[];
        warnings: string[];
      };
      expect(report.migrations.missing).toBe(false);
      expect(report.databases.map((d) => [d.binding, d.migrations.applied, d.migrations.missing])).toEqual([
        ["DB", env.TEST_MIGRATIONS.length, false],
        ["DB_SHARD_1", env.TEST_MIGRATIONS.length - 1, true],
      ]);
      expect(report.warnings).toEqual([expect.stringContaining(`which the database DB_SHARD_1 lacks`)]);
    } finally {
      logged.mockRestore();
      await env.DB_SHARD_1.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(latest).run();
    }
  });

  it("warns, still 200, when the database lacks the migration the code expects, and logs it", async () => {
    const latest = env.TEST_MIGRATIONS.at(-1)?.name ?? "";
    const logged = vi.spyOn(console, "warn").mockImplementation(() => {});
    await env.DB.prepare("DELETE FROM d1_migrations WHERE name = ?").bind(latest).run();
    try {
      const res = await t.request("/api/health");
      expect(res.status).toBe(200);
      const report = (await res.json()) as Report & { migrations: unknown; warnings: string[] };
      expect(report.status).toBe("ok");
      expect(report.migrations).toEqual({
        applied: env.TEST_MIGRATIONS.length - 1,
        latest: env.TEST_MIGRATIONS.at(-2)?.name,
        expected: latest,
        missing: true,
      });
      expect(report.warnings).toHaveLength(1);
      expect(report.warnings[0]).toContain(`The code expects migration ${latest}, which the database lacks`);
      expect(logged.mock.calls.map((c) => String(c[0])).join("\n")).toContain('"message":"database lacks a migration"');
    } finally {
      logged.mockRestore();
      await env.DB.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(latest).run();
    }
  });

  it("answers 503 naming the storage when it fails", async () => {
    const down = makeTestApp({
      storage: {
        head: async () => {
          throw new Error("down");
        },
        get: async () => null,
        put: async () => null,
      },
    });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await down.request("/api/health");
    const lines = logged.mock.calls.map((c) => String(c[0]));
    logged.mockRestore();
    expect(res.status).toBe(503);
    // The answer names the failure's class; the log line says what an operator needs.
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({
      message: "health check failed",
      dependency: "storage",
      detail: "down",
    });
    const report = (await res.json()) as Report;
    expect(report.status).toBe("error");
    expect(report.info).toEqual({ database: { status: "up" }, "database:DB_SHARD_1": { status: "up" } });
    expect(Object.keys(report.error ?? {})).toEqual(["storage"]);
    expect(report.details.storage?.status).toBe("down");
    expect(report.details.database?.status).toBe("up");
  });

  it("answers 503 within its deadline naming a dependency that never answers; the other is up", async () => {
    const hung = makeTestApp({
      storage: {
        head: () => new Promise(() => {}),
        get: async () => null,
        put: async () => null,
      },
    });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await hung.request("/api/health");
    logged.mockRestore();
    expect(res.status).toBe(503);
    const report = (await res.json()) as Report;
    expect(report.details).toEqual({
      database: { status: "up" },
      "database:DB_SHARD_1": { status: "up" },
      storage: { status: "down", message: "no answer within 3000 ms" },
    });
  });

  it("answers 503 naming the database when it fails, without its error text", async () => {
    const fail = async () => {
      throw new Error("D1_ERROR: SELECT secret FROM x");
    };
    const broken = new Proxy({}, { get: () => fail }) as unknown as Db;
    const down = makeTestApp({ db: broken });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await down.request("/api/health");
    const lines = logged.mock.calls.map((c) => String(c[0]));
    logged.mockRestore();
    expect(lines.join("\n")).toContain('"dependency":"database"');
    expect(res.status).toBe(503);
    const text = await res.clone().text();
    expect(text).not.toMatch(/SELECT|D1_ERROR/);
    const report = (await res.json()) as Report;
    expect(report).toMatchObject({
      status: "error",
      info: { "database:DB_SHARD_1": { status: "up" }, storage: { status: "up" } },
    });
    expect(Object.keys(report.error ?? {})).toEqual(["database"]);
    expect(report.error?.database?.status).toBe("down");
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });
});

describe("GET /api/v1/version", () => {
  const get = (query = "") => t.request(`/api/v1/version${query}`);
  // wrangler.toml: latest 1.4.0, minimum 1.2.0 on both platforms.
  const range = { latest: "1.4.0", minimum: "1.2.0" };

  it("gives both platforms' versions", async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ios: range, android: range });
  });

  it.each([
    ["ios", "1.0.0", true, true],
    ["ios", "1.1.9", true, true],
    ["android", "1.2.0", false, true],
    ["ios", "1.3.0", false, true],
    ["ios", "1.4", false, false],
    ["android", "1.4.0", false, false],
    ["ios", "2", false, false],
    ["android", "1.10.0", false, false],
  ])("%s %s: mustUpdate %s, updateAvailable %s", async (platform, version, mustUpdate, updateAvailable) => {
    const res = await get(`?platform=${platform}&version=${version}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { check: unknown }).check).toEqual({
      platform,
      version,
      mustUpdate,
      updateAvailable,
    });
  });

  it("refuses half a check, an unknown platform, a bad version or an unknown parameter", async () => {
    for (const [query, path] of [
      ["?platform=ios", "version"],
      ["?version=1.0.0", "platform"],
      ["?platform=windows&version=1.0.0", "platform"],
      ["?platform=ios&version=1.x", "version"],
      ["?platform=ios&version=1.2.3.4", "version"],
      ["?platform=ios&version=", "version"],
      ["?platform=ios&version=1.0.0&beta=1", "beta"],
    ]) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      expect((await problem(res)).errors?.[0]?.path, query).toBe(path);
    }
  });
});

describe("development outbox", () => {
  it("exists only in development", async () => {
    const prod = createApp({ deps: () => t.deps, development: false });
    const res = await prod.request("http://localhost/api/v1/dev/outbox?to=%2B15550000002", {}, env);
    expect(res.status).toBe(404);
    await problem(res);
    const doc = (await (await prod.request("http://localhost/api/openapi.json", {}, env)).json()) as OpenApi;
    expect(Object.keys(doc.paths).filter((p) => p.includes("/dev/"))).toEqual([]);
    expect(doc.tags.map((tag) => tag.name)).not.toContain("Development");

    const dev = await t.request("/api/v1/dev/outbox?to=%2B15550000002");
    expect(dev.status).toBe(200);
  });

  it("gives each message's sign-in code as its own field, or null when it holds none", async () => {
    const phone = "+15550300010";
    await t.db.insert(users).values({ phone, status: "active" });
    await t.db
      .insert(devOutbox)
      .values({ to: phone, body: "Your child's bus 12 leaves at 15:40", createdAt: "2026-11-23T14:00:00.000Z" });
    const sent = await t.request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone } });
    expect(sent.status).toBe(202);
    const res = await t.request(`/api/v1/dev/outbox?to=${encodeURIComponent(phone)}`);
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { body: string; code: string | null }[] };
    expect(data).toHaveLength(2);
    const [latest, other] = data;
    expect(latest?.code).toMatch(/^\d{6}$/);
    expect(latest?.body).toContain(latest?.code);
    expect(other).toMatchObject({ body: "Your child's bus 12 leaves at 15:40", code: null });
    // The code shown is the one that signs in.
    const session = await t.request("/api/v1/auth/verify-code", {
      method: "POST",
      body: { phone, code: latest?.code },
    });
    expect(session.status).toBe(200);
  });

  it("needs a valid number", async () => {
    for (const query of ["", "?to=abc", "?to=%2B15550000002&pageSize=0", "?to=%2B15550000002&x=1"]) {
      const res = await t.request(`/api/v1/dev/outbox${query}`);
      expect(res.status, query).toBe(400);
      await problem(res);
    }
  });
});

type Operation = {
  operationId?: string;
  tags?: string[];
  summary?: string;
  security?: Record<string, string[]>[];
  responses: Record<string, ResponseObject>;
  "x-access"?: string;
};
type ResponseObject = { $ref?: string; content?: Record<string, { schema?: { $ref?: string } }> };
type OpenApi = {
  openapi: string;
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; responses?: Record<string, ResponseObject> };
};

describe("OpenAPI", () => {
  it("is OpenAPI 3.1 with an id, one known tag, a summary, security and error responses per operation", async () => {
    const res = await t.request("/api/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as OpenApi;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    const known = TAGS.map((tag) => tag.name) as string[];
    const ids = new Set<string>();
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
    );
    expect(operations.length).toBeGreaterThan(10);
    for (const { where, op } of operations) {
      expect(op.operationId, where).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(ids.has(op.operationId ?? ""), `${where}: duplicate operationId`).toBe(false);
      ids.add(op.operationId ?? "");
      expect(op.tags?.length, where).toBe(1);
      expect(known, where).toContain(op.tags?.[0]);
      expect(op.summary?.length, where).toBeGreaterThan(5);
      expect(Array.isArray(op.security), where).toBe(true);
      const isPublic = op["x-access"] === "public";
      expect(op.security, where).toEqual(isPublic ? [] : [{ bearerAuth: [] }]);

      const errors = Object.keys(op.responses).filter((s) => /^[45]\d\d$/.test(s));
      expect(errors.length, where).toBeGreaterThan(0);
      if (!isPublic) expect(errors, where).toContain("401");
      for (const status of errors) {
        // Health's 503 is its own report; every other failure is a problem.
        if (op.operationId === "getHealth" && status === "503") continue;
        // A shared response (the 503 of every operation that reads the database) by its reference.
        const declared = op.responses[status];
        const shared = declared?.$ref?.replace("#/components/responses/", "");
        const response = shared ? doc.components.responses?.[shared] : declared;
        expect(response?.content?.["application/problem+json"]?.schema?.$ref, `${where} ${status}`).toBe(
          "#/components/schemas/Problem",
        );
      }
    }
    // The tags of the document are the known ones.
    for (const tag of doc.tags) expect(known).toContain(tag.name);
  });

  it("serves the docs page", async () => {
    const res = await t.request("/api/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toMatch(/<html/i);
    expect(html).toContain("/api/openapi.json");
  });
});

describe("cron", () => {
  const cronRows = async () => (await t.db.select({ n: count() }).from(cronHistory))[0]?.n ?? 0;

  async function runCron(cron: string) {
    const controller = createScheduledController({ cron, scheduledTime: Date.now() });
    const ctx = createExecutionContext();
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);
  }

  it("purges codes expired for over a day and expired refresh tokens, and records the run", async () => {
    // The Worker runs on the real clock: rows are placed around the real now.
    const now = Date.now();
    const at = (seconds: number) => new Date(now + seconds * 1000).toISOString();
    const phone = "+15550300001";
    const codes = await t.db
      .insert(verificationCodes)
      .values([
        { phone, codeHash: "old", expiresAt: at(-2 * 86400), createdAt: at(-2 * 86400 - 600) },
        { phone, codeHash: "recent", expiresAt: at(-3600), createdAt: at(-4200) },
        { phone, codeHash: "fresh", expiresAt: at(600), createdAt: at(0) },
      ])
      .returning({ id: verificationCodes.id, codeHash: verificationCodes.codeHash });
    await t.db.insert(refreshTokens).values([
      {
        userId: DEMO.northAdmin.id,
        tokenHash: "cron-expired",
        family: "cron",
        expiresAt: at(-1),
        createdAt: at(-30 * 86400),
      },
      { userId: DEMO.northAdmin.id, tokenHash: "cron-valid", family: "cron", expiresAt: at(86400), createdAt: at(0) },
    ]);
    const before = await cronRows();

    await runCron("*/5 * * * *");

    const left = await t.db
      .select({ codeHash: verificationCodes.codeHash })
      .from(verificationCodes)
      .where(eq(verificationCodes.phone, phone));
    expect(left.map((r) => r.codeHash).sort()).toEqual(["fresh", "recent"]);
    expect(codes).toHaveLength(3);
    const tokens = await t.db
      .select({ tokenHash: refreshTokens.tokenHash })
      .from(refreshTokens)
      .where(eq(refreshTokens.family, "cron"));
    expect(tokens.map((r) => r.tokenHash)).toEqual(["cron-valid"]);

    const runs = await t.db.select().from(cronHistory).where(eq(cronHistory.job, "purge-expired-auth"));
    // One history row per job of the expression (*/5 runs the auth purge and the bulk sweep).
    expect(await cronRows()).toBe(before + jobsFor("*/5 * * * *").length);
    const run = runs.at(-1);
    expect(run).toMatchObject({ cron: "*/5 * * * *", job: "purge-expired-auth", status: "completed" });
    expect(run?.finishedAt).toBeTruthy();
    expect(Date.parse(run?.finishedAt ?? "")).toBeGreaterThanOrEqual(Date.parse(run?.startedAt ?? ""));
  });

  it("writes nothing for a cron expression it does not know", async () => {
    const before = await cronRows();
    await runCron("17 3 * * 1");
    expect(await cronRows()).toBe(before);
  });
});

describe("Twilio SMS provider", () => {
  const endpoint = inject("smsEndpoint");
  const twilio = (authToken: string) =>
    twilioSms({ accountSid: "ACtest", authToken, from: "+15550009999", baseUrl: endpoint });

  async function received(phone: string) {
    const res = await fetch(`${endpoint}/messages?to=${encodeURIComponent(phone)}`);
    return (await res.json()) as { to: string; from: string; body: string; accountSid: string }[];
  }

  async function newUser(phone: string) {
    await t.db.insert(users).values({ phone, status: "active" });
  }

  it("delivers the code through Twilio's Messages API, and the code signs in", async () => {
    const phone = "+15550300002";
    await newUser(phone);
    const app = makeTestApp({ sms: twilio("test-auth-token") });
    const sent = await app.request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone } });
    expect(sent.status).toBe(202);
    const messages = await received(phone);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ to: phone, from: "+15550009999", accountSid: "ACtest" });
    const code = /\b(\d{6})\b/.exec(messages[0]?.body ?? "")?.[1] ?? "";
    expect(code).toMatch(/^\d{6}$/);
    // Nothing went to the development outbox.
    expect(
      ((await (await app.request(`/api/v1/dev/outbox?to=${encodeURIComponent(phone)}`)).json()) as { total: number })
        .total,
    ).toBe(0);

    const session = await app.request("/api/v1/auth/verify-code", { method: "POST", body: { phone, code } });
    expect(session.status).toBe(200);
    expect(((await session.json()) as { tokenType: string }).tokenType).toBe("Bearer");
  });

  it("answers 503 when the provider refuses, leaking nothing, and a retry is not rate limited", async () => {
    const phone = "+15550300003";
    await newUser(phone);
    // The production limits: a failed send that left its row would make the retry a 429.
    const config = configWith(STRICT_AUTH_LIMITS);
    const app = makeTestApp({ sms: twilio("wrong-token"), config });
    const res = await app.request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone } });
    expect(res.status).toBe(503);
    const text = await res.clone().text();
    const body = await problem(res);
    expect(body.type).toBe("/problems/unavailable");
    expect(text).not.toMatch(/\b\d{6}\b|Authenticate|20003|wrong-token|ACtest/);
    expect(await received(phone)).toEqual([]);

    // The failed attempt neither counts as sent nor leaves a usable code behind.
    const retry = makeTestApp({ sms: twilio("test-auth-token"), config });
    retry.clock.current = app.clock.now();
    const again = await retry.request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone } });
    expect(again.status).toBe(202);
    expect(await received(phone)).toHaveLength(1);
  });
});
