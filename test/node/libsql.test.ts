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
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { libsql } from "../../src/db/libsql";
import type { Deps } from "../../src/deps";
import { jobsFor, runScheduled } from "../../src/jobs/scheduled";
import { jobCtx } from "../../src/lib/context";
import type { Page } from "../../src/lib/pagination";
import { signAccessToken } from "../../src/lib/tokens";
import { exportRows as parentRows } from "../../src/modules/parent/resource";
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

  it("has no D1 sessions: answers carry no x-d1-bookmark, and one sent changes nothing", async () => {
    const { accessToken: token } = await signIn("+15550000001");
    const bookmark = "00000000-00000041-00000000-00000000000000000000000000000000";
    const headers = { authorization: `Bearer ${token}`, "x-d1-bookmark": bookmark, "content-type": "application/json" };
    const created = await app.request(
      "http://localhost/api/v1/permission",
      { method: "POST", headers, body: JSON.stringify({ name: "bookmark.none" }) },
      {} as Env,
    );
    expect(created.status).toBe(201);
    expect(created.headers.get("x-d1-bookmark")).toBeNull();
    const { id } = (await created.json()) as { id: number };
    const read = await app.request(`http://localhost/api/v1/permission/${id}`, { headers }, {} as Env);
    expect(read.status).toBe(200);
    expect(read.headers.get("x-d1-bookmark")).toBeNull();
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
    // Every job of the trigger, in the registry's order.
    expect(runs.rows.map((r) => ({ job: r.job, status: r.status }))).toEqual(
      jobsFor("*/5 * * * *").map((j) => ({ job: j.name, status: "completed" })),
    );
  });

  it("fans a notification out and pushes it (the log provider) on libSQL", async () => {
    const { Batch } = await import("../../src/db/batch");
    const { notify } = await import("../../src/modules/notification/api");
    const { fanOut } = await import("../../src/modules/notification/fan-out");
    const { deliverPushes } = await import("../../src/modules/notification/deliver");
    await client.execute(
      "INSERT INTO device_token (user_id, token, platform, created_at, updated_at) VALUES (4, 'libsql-device', 'ios', '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')",
    );
    // The demo parent guards both children: one copy, one push.
    const ctx = jobCtx(deps, "test", 1);
    const sending = notify(ctx, {
      category: "afternoon",
      title: { en: "Pickup", es: "Salida" },
      body: "Bus 1",
      audience: { guardiansOf: [1, 2001], levels: ["preschool"] },
    });
    await new Batch(ctx).add(...sending.statements).commit();
    await fanOut(deps, { kind: "fan-out", key: sending.key, schoolId: 1, after: 0 }, "libsql-fan-out");
    const row = await client.execute({
      sql: "SELECT id, recipient_count FROM notification WHERE key = ?",
      args: [sending.key],
    });
    const id = Number(row.rows[0]?.id);
    const copies = await client.execute({
      sql: "SELECT user_id FROM notification_recipient WHERE notification_id = ?",
      args: [id],
    });
    expect(copies.rows.length).toBe(Number(row.rows[0]?.recipient_count));
    expect(copies.rows.filter((c) => Number(c.user_id) === 4)).toHaveLength(1);
    await deliverPushes(deps, { kind: "push", notificationId: id, schoolId: 1 }, "libsql-push");
    const outbox = await client.execute("SELECT payload FROM dev_push_outbox WHERE token = 'libsql-device'");
    expect(outbox.rows).toHaveLength(1);
    expect(JSON.parse(String(outbox.rows[0]?.payload)).message.notification).toEqual({
      title: "Pickup",
      body: "Bus 1",
    });
  });

  it("answers health from the libSQL database, naming its store", async () => {
    const res = await request("/api/health");
    expect(res.status).toBe(200);
    const report = (await res.json()) as {
      details: Record<string, { status: string }>;
      databases: { binding: string; store: string; status: string }[];
    };
    expect(report.details.database).toEqual({ status: "up" });
    expect(report.databases.map(({ binding, store, status }) => ({ binding, store, status }))).toEqual([
      { binding: "DB", store: "libsql", status: "up" },
    ]);
  });
});

/**
 * People and families on libSQL: the role_user triggers of migrations 0016/0017 (the membership and
 * the profile follow the role), the audit rows in the same batch, the NOCASE unique role name of
 * 0031, the accent-folding name search (the search copies of migration 0033), the json_each
 * batch of group participants and the keyset pages of an export.
 */
describe("people and families on libSQL", () => {
  let admin: string;
  let phones = 0;
  const newPhone = () => `+1555${7_100_000 + ++phones}`;
  const count = async (query: string, ...args: (string | number)[]) =>
    Number((await client.execute({ sql: query, args })).rows[0]?.n);

  beforeAll(async () => {
    admin = (await signIn("+15550000002")).accessToken;
  });

  it("a new teacher: the user, their role, the membership and the profile by trigger, audited; removal undoes both", async () => {
    const res = await request("/api/v1/teacher", {
      method: "POST",
      token: admin,
      school: 1,
      body: { phone: newPhone(), firstName: "Íñigo", lastName: "Núñez", subjects: ["Música"] },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const teacher = (await res.json()) as { id: number; userId: number; subjects: string[] };
    expect(teacher.subjects).toEqual(["Música"]);
    expect(
      await count("SELECT count(*) AS n FROM school_user WHERE school_id = 1 AND user_id = ?", teacher.userId),
    ).toBe(1);
    const trail = await client.execute({
      sql: "SELECT entity, action FROM audit_log WHERE request_id = (SELECT request_id FROM audit_log WHERE entity = 'teacher' AND record_id = ?) ORDER BY id",
      args: [teacher.id],
    });
    expect(trail.rows.map((r) => `${r.entity}:${r.action}`)).toEqual([
      "user:create",
      "role-user:create",
      "teacher:create",
    ]);

    // The accent-folding name search finds them from plain ASCII, in any case.
    for (const name of ["inigo nunez", "NUÑEZ", "íñigo"]) {
      const res = await request(`/api/v1/teacher?name=${encodeURIComponent(name)}`, { token: admin, school: 1 });
      expect(res.status, await res.clone().text()).toBe(200);
      const page = (await res.json()) as Page<{ id: number }>;
      expect(
        page.data.map((t) => t.id),
        name,
      ).toEqual([teacher.id]);
    }

    // The other name searches, with more filters and their exports, on the search copies.
    for (const path of [
      "/api/v1/user?name=inigo%20nunez&role=4&status=invited",
      "/api/v1/parent?name=garcia%20lopez",
      "/api/v1/administrative-user?name=garcia",
      "/api/v1/delegate?name=garcia",
      "/api/v1/school-administrator?name=garcia",
      "/api/v1/student?name=garcia%20lopez&level=elementary&status=active&sort=-lastName",
      "/api/v1/student/export?name=garcia%20lopez&level=elementary&sort=-lastName",
      "/api/v1/teacher/export?name=inigo%20nunez&subject=M%C3%BAsica",
      "/api/v1/parent/export?name=garcia",
      "/api/v1/family?name=garcia",
      "/api/v1/group?name=primaria&sort=name",
    ]) {
      const res = await request(path, { token: admin, school: 1 });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    }

    // Changing the membership's role in place moves the profile (migration 0032), and back.
    const membership = await client.execute({
      sql: "SELECT id FROM role_user WHERE school_id = 1 AND user_id = ? AND role_id = 4",
      args: [teacher.userId],
    });
    const change = (roleId: number) =>
      request(`/api/v1/role-user/${membership.rows[0]?.id}`, {
        method: "PUT",
        token: admin,
        school: 1,
        body: { roleId },
      });
    expect((await change(3)).status).toBe(204);
    expect(await count("SELECT count(*) AS n FROM teacher WHERE user_id = ?", teacher.userId)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM administrative_user WHERE user_id = ?", teacher.userId)).toBe(1);
    expect((await change(4)).status).toBe(204);
    const again = (await client.execute({ sql: "SELECT id FROM teacher WHERE user_id = ?", args: [teacher.userId] }))
      .rows[0]?.id;
    expect((await request(`/api/v1/teacher/${again}`, { method: "DELETE", token: admin, school: 1 })).status).toBe(204);
    expect(await count("SELECT count(*) AS n FROM teacher WHERE user_id = ?", teacher.userId)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM role_user WHERE school_id = 1 AND user_id = ?", teacher.userId)).toBe(
      0,
    );
    expect((await request(`/api/v1/teacher/${again}`, { token: admin, school: 1 })).status).toBe(404);
  });

  it("stores the search copies and finds names by them, every Latin letter folded", async () => {
    const res = await request("/api/v1/student", {
      method: "POST",
      token: admin,
      school: 1,
      body: { firstName: "JOÃO Loïc", lastName: "CONCEIÇÃO Müller" },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { id } = (await res.json()) as { id: number };
    const stored = await client.execute({
      sql: "SELECT first_name_search, last_name_search FROM student WHERE id = ?",
      args: [id],
    });
    expect(stored.rows[0]).toMatchObject({ first_name_search: "joao loic", last_name_search: "conceicao muller" });
    for (const name of ["joao loic conceicao", "loic conceicao müller", "CONCEIÇÃO MULLER"]) {
      const found = await request(`/api/v1/student?name=${encodeURIComponent(name)}`, { token: admin, school: 1 });
      expect(
        ((await found.json()) as Page<{ id: number }>).data.map((s) => s.id),
        name,
      ).toEqual([id]);
    }
  });

  it("role names are unique in a school whatever their case (409), and a failed write leaves no audit row", async () => {
    const created = await request("/api/v1/role", {
      method: "POST",
      token: admin,
      school: 1,
      body: { name: "Bibliotecaria", permissions: ["student.read"] },
    });
    expect(created.status).toBe(201);
    const before = await count("SELECT count(*) AS n FROM audit_log");
    const clash = await request("/api/v1/role", {
      method: "POST",
      token: admin,
      school: 1,
      body: { name: "BIBLIOTECARIA" },
    });
    expect(clash.status).toBe(409);
    expect(clash.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(await count("SELECT count(*) AS n FROM audit_log")).toBe(before);
    // Accented capitals too (the index lowers them before NOCASE, migration 0032).
    const accented = (name: string) =>
      request("/api/v1/role", { method: "POST", token: admin, school: 1, body: { name } }).then((r) => r.status);
    expect(await accented("Coordinación")).toBe(201);
    expect(await accented("COORDINACIÓN")).toBe(409);
  });

  it("adds and removes group participants in one json_each batch, each row audited", async () => {
    const group = await request("/api/v1/group", {
      method: "POST",
      token: admin,
      school: 1,
      body: { name: "Libsql 1°A", level: "elementary", schoolYear: "2026-2027" },
    });
    expect(group.status, await group.clone().text()).toBe(201);
    const { id } = (await group.json()) as { id: number };
    const students = (await (await request("/api/v1/student?pageSize=3", { token: admin, school: 1 })).json()) as Page<{
      id: number;
    }>;
    const studentIds = students.data.map((s) => s.id);
    expect(studentIds).toHaveLength(3);
    const put = await request(`/api/v1/group/${id}/participants`, {
      method: "PUT",
      token: admin,
      school: 1,
      body: { studentIds },
    });
    expect(put.status, await put.clone().text()).toBe(204);
    const members = (await (
      await request(`/api/v1/group-student?groupId=${id}`, { token: admin, school: 1 })
    ).json()) as Page<{ studentId: number }>;
    expect(members.data.map((m) => m.studentId).sort()).toEqual([...studentIds].sort());
    expect(
      await count(
        "SELECT count(*) AS n FROM audit_log WHERE entity = 'group-student' AND action = 'create' AND changes ->> '$.groupId.new' = ?",
        id,
      ),
    ).toBe(3);
    const removed = await request(`/api/v1/group/${id}/participants`, {
      method: "DELETE",
      token: admin,
      school: 1,
      body: { studentIds: studentIds.slice(0, 2) },
    });
    expect(removed.status).toBe(204);
    expect(await count("SELECT count(*) AS n FROM group_student WHERE group_id = ?", id)).toBe(1);
  });

  it("a new parent gets their profile by trigger; the export reads every page by keyset, in the list's order", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await request("/api/v1/parent", {
        method: "POST",
        token: admin,
        school: 1,
        body: { phone: newPhone(), firstName: `Libsql${i}`, relationship: "other" },
      });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const listed: number[] = [];
    for (let page = 1; ; page++) {
      const res = (await (
        await request(`/api/v1/parent?pageSize=100&page=${page}`, { token: admin, school: 1 })
      ).json()) as Page<{ id: number }>;
      listed.push(...res.data.map((p) => p.id));
      if (!res.next) break;
    }
    expect(listed.length).toBeGreaterThan(3);
    const rows: unknown[][] = [];
    for await (const row of parentRows(jobCtx(deps, "test", 1), {}, 7)) rows.push(row);
    expect(rows.map((r) => r[0])).toEqual(listed);
    const file = await request("/api/v1/parent/export", { token: admin, school: 1 });
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toMatch(/spreadsheetml/);
  });
});

/**
 * A database hiccup on libSQL, for real: a second connection holding SQLite's write lock (what
 * workerd cannot show D1, which gives a Worker one connection), and a server that cannot be reached.
 */
describe("a libSQL database that is locked or unreachable", () => {
  it("a write while another writer holds the lock is a 503 with retry-after that left nothing; reads go on", {
    timeout: 30_000,
  }, async () => {
    // A database of its own: the `file:` client leaves a statement that failed busy in progress on
    // its connection until it is garbage-collected, and every COMMIT there fails meanwhile, even
    // once the lock is free (tursodatabase/libsql-client-ts#352; the libSQL Worker's HTTP client is
    // not affected). This test's client is thrown away after it.
    const own = mkdtempSync(join(tmpdir(), "libsql-locked-"));
    const url = `file:${join(own, "school.db")}`;
    const mine = createClient({ url });
    const other = createClient({ url });
    try {
      await mine.execute("PRAGMA foreign_keys = ON");
      await migrate(mine);
      const lockedDeps = libsqlDeps(deps.config, mine, clock);
      const locked = createApp({ deps: () => lockedDeps, development: true });
      const token = await signAccessToken(deps.config.authSecret, clock.now(), {
        userId: 1,
        isSuperAdmin: true,
        schools: {},
      });
      const call = (path: string, method = "GET", body?: unknown) =>
        locked.request(
          `http://localhost${path}`,
          {
            method,
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body),
          },
          {} as Env,
        );
      const count = async (query: string) => Number((await mine.execute(query)).rows[0]?.n);
      const audits = await count("SELECT count(*) AS n FROM audit_log WHERE entity = 'permission'");

      const writer = await other.transaction("write"); // BEGIN IMMEDIATE: SQLite's write lock
      try {
        await writer.execute("UPDATE school SET name = name WHERE id = 1");
        // Readers do not wait for a writer.
        expect((await call("/api/v1/permission?name=read")).status).toBe(200);
        const refused = await call("/api/v1/permission", "POST", { name: "locked.write" });
        expect(refused.status, await refused.clone().text()).toBe(503);
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(await refused.json()).toMatchObject({ type: "/problems/unavailable", status: 503 });
      } finally {
        await writer.rollback();
      }
      expect(await count("SELECT count(*) AS n FROM permission WHERE name = 'locked.write'")).toBe(0);
      expect(await count("SELECT count(*) AS n FROM audit_log WHERE entity = 'permission'")).toBe(audits);
    } finally {
      other.close();
      mine.close();
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("a server that cannot be reached is a 503 with retry-after and a log line, not a 500", async () => {
    const unreachable: Deps = { ...deps, db: libsql("http://127.0.0.1:9") };
    const down = createApp({ deps: () => unreachable, development: true });
    const lines: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void lines.push(String(line)));
    try {
      const res = await down.request(
        "http://localhost/api/v1/auth/send-verification-code",
        {
          method: "POST",
          headers: { "content-type": "application/json", "x-request-id": "no-libsql" },
          body: JSON.stringify({ phone: "+15550000002" }),
        },
        {} as Env,
      );
      expect(res.status, await res.clone().text()).toBe(503);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await res.json()).toMatchObject({ type: "/problems/unavailable", requestId: "no-libsql" });
      expect(lines.map((l) => JSON.parse(l))).toContainEqual(
        expect.objectContaining({ message: "database unavailable", requestId: "no-libsql" }),
      );
      expect((await down.request("http://localhost/api/health", {}, {} as Env)).status).toBe(503);
    } finally {
      spy.mockRestore();
    }
  });
});
