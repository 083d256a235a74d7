/**
 * The same app on libSQL, in Node: a local libSQL file built from the real migrations and the demo
 * seed, the real `createApp`, and the flows whose queries matter most (sign-in by code, the current
 * user's join, a paginated filtered list with its count in one batch, writes with a unique
 * conflict, refresh rotation, the cron sweep). It proves the queries and batches written for D1
 * run unchanged on libSQL.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import type { Deps } from "../../src/deps";
import { runScheduled } from "../../src/jobs/scheduled";
import type { Page } from "../../src/lib/pagination";
import { DEVELOPMENT_VARS } from "../config-vars";
import { Clock, libsqlDeps, migrate } from "./libsql-app";

let directory: string;
let client: Client;
let deps: Deps;
let clock: Clock;
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), "libsql-"));
  client = createClient({ url: `file:${join(directory, "school.db")}` });
  await client.execute("PRAGMA foreign_keys = ON");
  await migrate(client);

  const config = loadConfig({
    ENVIRONMENT: "development",
    // The production limits (development relaxes them): this file checks they hold on libSQL too.
    AUTH_RESEND_COOLDOWN_SECONDS: "60",
    AUTH_CODES_PER_HOUR: "5",
    AUTH_SECRET: "libsql-test-secret-0123456789abcdef0123456789",
    ...DEVELOPMENT_VARS,
  });
  clock = new Clock();
  deps = libsqlDeps(config, client, clock);
  app = createApp({ deps: () => deps, development: true });
});

afterAll(() => {
  client?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

async function request(path: string, init: { method?: string; token?: string; school?: number; body?: unknown } = {}) {
  const headers = new Headers();
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  if (init.school !== undefined) headers.set("x-school-id", String(init.school));
  if (init.body !== undefined) headers.set("content-type", "application/json");
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  return app.request(`http://localhost${path}`, { method: init.method ?? "GET", headers, body }, {} as Env);
}

type Session = { accessToken: string; refreshToken: string; user: { id: number; status: string } };

async function signIn(phone: string): Promise<Session> {
  const sent = await request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone } });
  expect(sent.status).toBe(202);
  const outbox = (await (await request(`/api/v1/dev/outbox?to=${encodeURIComponent(phone)}`)).json()) as {
    data: { body: string }[];
  };
  const code = /\b(\d{6})\b/.exec(outbox.data[0]?.body ?? "")?.[1] ?? "";
  const res = await request("/api/v1/auth/verify-code", { method: "POST", body: { phone, code } });
  expect(res.status).toBe(200);
  clock.advance(61);
  return (await res.json()) as Session;
}

describe("the app on libSQL", () => {
  it("signs in by code through the outbox, with the same limits", async () => {
    const session = await signIn("+15550000002");
    expect(session.user).toMatchObject({ id: 2, status: "active" });
    // The code is spent, and another right now is refused by the cooldown.
    await request("/api/v1/auth/send-verification-code", { method: "POST", body: { phone: "+15550000003" } });
    const again = await request("/api/v1/auth/send-verification-code", {
      method: "POST",
      body: { phone: "+15550000003" },
    });
    expect(again.status).toBe(429);
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(0);
    const wrong = await request("/api/v1/auth/verify-code", {
      method: "POST",
      body: { phone: "+15550000009", code: "123456" },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("answers the current user with their schools and roles (a joined batch)", async () => {
    const { accessToken } = await signIn("+15550000002");
    const res = await request("/api/v1/user/me", { token: accessToken });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: 2,
      phone: "+15550000002",
      isSuperAdmin: false,
      schools: [
        { id: 1, name: "Northside Demo School", roles: [{ id: 2, key: "school-admin", name: "School admin" }] },
      ],
    });
  });

  it("pages a filtered list with its count in one batch", async () => {
    const { accessToken } = await signIn("+15550000002");
    const res = await request("/api/v1/permission?name=read&pageSize=5", { token: accessToken });
    expect(res.status).toBe(200);
    const page = (await res.json()) as Page<{ name: string }>;
    expect(page.data).toHaveLength(5);
    expect(page.data.every((p) => p.name.includes("read"))).toBe(true);
    expect(page.total).toBeGreaterThan(5);
    expect(page.lastPage).toBe(Math.ceil(page.total / 5));
    expect(page.next).toBe("/api/v1/permission?name=read&pageSize=5&page=2");
    expect(page.previous).toBeNull();
    // LIKE wildcards are literal here too.
    const literal = (await (await request("/api/v1/permission?name=%25", { token: accessToken })).json()) as {
      total: number;
    };
    expect(literal.total).toBe(0);
    // Permissions are per school: a parent may not list them.
    const parent = await signIn("+15550000004");
    expect((await request("/api/v1/permission", { token: parent.accessToken })).status).toBe(403);
  });

  it("creates, conflicts, updates and deletes a custom permission as super-admin", async () => {
    const { accessToken: token } = await signIn("+15550000001");
    const created = await request("/api/v1/permission", {
      method: "POST",
      token,
      body: { name: "report.export", description: "Export reports" },
    });
    expect(created.status).toBe(201);
    const { id, builtIn } = (await created.json()) as { id: number; builtIn: boolean };
    expect(builtIn).toBe(false);

    const duplicate = await request("/api/v1/permission", { method: "POST", token, body: { name: "report.export" } });
    expect(duplicate.status).toBe(409);

    expect(
      (await request(`/api/v1/permission/${id}`, { method: "PUT", token, body: { name: "report.download" } })).status,
    ).toBe(204);
    expect(await (await request(`/api/v1/permission/${id}`, { token })).json()).toMatchObject({
      name: "report.download",
      description: "Export reports",
    });
    const clash = await request(`/api/v1/permission/${id}`, {
      method: "PUT",
      token,
      body: { name: "permission.read" },
    });
    expect(clash.status).toBe(409);
    expect((await request("/api/v1/permission/1", { method: "DELETE", token })).status).toBe(422);

    expect((await request(`/api/v1/permission/${id}`, { method: "DELETE", token })).status).toBe(204);
    expect((await request(`/api/v1/permission/${id}`, { token })).status).toBe(404);
    expect((await request(`/api/v1/permission/${id}`, { method: "DELETE", token })).status).toBe(404);
  });

  it("rotates refresh tokens and detects reuse", async () => {
    const first = await signIn("+15550000003");
    const res = await request("/api/v1/auth/refresh-token", {
      method: "POST",
      body: { refreshToken: first.refreshToken },
    });
    expect(res.status).toBe(200);
    const second = (await res.json()) as Session;
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await request("/api/v1/user/me", { token: second.accessToken })).status).toBe(200);

    const reuse = await request("/api/v1/auth/refresh-token", {
      method: "POST",
      body: { refreshToken: first.refreshToken },
    });
    expect(reuse.status).toBe(401);
    const revoked = await request("/api/v1/auth/refresh-token", {
      method: "POST",
      body: { refreshToken: second.refreshToken },
    });
    expect(revoked.status).toBe(401);
  });

  it("runs the cron sweep and records it", async () => {
    clock.advance(3 * 86400); // every code so far is now over a day past its expiry
    await runScheduled(deps, "*/5 * * * *");
    const codes = await client.execute("SELECT count(*) AS n FROM verification_code");
    expect(Number(codes.rows[0]?.n)).toBe(0);
    const runs = await client.execute("SELECT job, status FROM cron_history");
    expect(runs.rows.map((r) => ({ job: r.job, status: r.status }))).toEqual([
      { job: "purge-expired-auth", status: "completed" },
      { job: "sweep-bulk-processes", status: "completed" },
    ]);
  });

  it("answers health from the libSQL database", async () => {
    const res = await request("/api/health");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { details: Record<string, { status: string }> }).details.database).toEqual({
      status: "up",
    });
  });
});
