/**
 * The audit trail: what each kind of write records (old and new values, actors, secrets kept
 * out), that no one can change it, and GET /api/v1/audit-log: filters, newest first, one school's
 * rows for its admins and every school's for the super-admin.
 */
import { createMessageBatch } from "cloudflare:test";
import { and, eq, gt, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { bulkProcesses } from "../src/db/schema/bulk-process";
import { handleQueue } from "../src/jobs/queue";
import { sweepBulkProcesses } from "../src/modules/bulk-process/service";
import { auditShapeProblems } from "./audit-shape";
import { makeTestApp, problem, type TestApp } from "./helpers";

type Entry = {
  id: number;
  createdAt: string;
  schoolId: number | null;
  actor: { type: string; id: number | null; name: string | null };
  entity: string;
  recordId: number;
  action: string;
  changes: Record<string, { old: unknown; new: unknown }>;
  requestId: string | null;
};
type Page = { data: Entry[]; total: number };

let t: TestApp;
// Minted at each use: tests move the clock past a token's 10 minutes.
const as = {
  northAdmin: () => t.token(2, { 1: "all" }),
  southAdmin: () => t.token(5, { 2: "all" }),
  superAdmin: () => t.token(1, {}, true),
};

beforeAll(() => {
  t = makeTestApp();
});

async function createDocument(who: () => Promise<string>, school: number, name = "Report") {
  const res = await t.request("/api/v1/documents", {
    method: "POST",
    token: await who(),
    school,
    body: { name, slug: `${school}/documents/${crypto.randomUUID()}.pdf` },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: number }).id;
}

async function trail(query: string, who = as.northAdmin, school?: number) {
  const res = await t.request(`/api/v1/audit-log?${query}`, { token: await who(), school });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Page;
}

describe("what a write records", () => {
  it("a create: the values; an update: only what changed, old and new; a delete: the last values", async () => {
    const id = await createDocument(as.northAdmin, 1, "Menu");
    t.clock.advance(60);
    await t.request(`/api/v1/documents/${id}`, {
      method: "PUT",
      token: await as.northAdmin(),
      school: 1,
      body: { name: "Lunch menu" },
      headers: { "x-request-id": "req-audit-1" },
    });
    t.clock.advance(60);
    await t.request(`/api/v1/documents/${id}`, { method: "DELETE", token: await as.northAdmin(), school: 1 });

    const { data } = await trail(`record=document:${id}`);
    expect(data.map((e) => e.action)).toEqual(["delete", "update", "create"]);
    const [deleted, updated, created] = data;
    expect(created?.changes.name).toEqual({ old: null, new: "Menu" });
    expect(created?.changes.slug?.new).toMatch(/^1\/documents\//);
    expect(updated?.changes).toEqual({ name: { old: "Menu", new: "Lunch menu" } });
    expect(updated?.requestId).toBe("req-audit-1");
    expect(deleted?.changes.name).toEqual({ old: "Lunch menu", new: null });
    for (const entry of data) {
      expect(entry).toMatchObject({ schoolId: 1, entity: "document", recordId: id });
      expect(entry.actor).toEqual({ type: "user", id: 2, name: "Alma Admin" });
    }
    expect(Date.parse(deleted?.createdAt ?? "") - Date.parse(created?.createdAt ?? "")).toBe(120_000);
  });

  it("an update from null records the null old value", async () => {
    const token = await as.northAdmin();
    const slug = `1/documents/${crypto.randomUUID()}.pdf`;
    const created = await t.request("/api/v1/documents", {
      method: "POST",
      token,
      school: 1,
      body: { name: "Scan", slug },
    });
    const { id, contentType } = (await created.json()) as { id: number; contentType: string | null };
    expect(contentType).toBeNull();
    // Asking for an upload URL of the existing slug sets its content type.
    const signed = await t.request("/api/v1/documents/documents/signed-url", {
      method: "POST",
      token,
      school: 1,
      body: { slug, name: "Scan", contentType: "application/pdf" },
    });
    expect(signed.status).toBe(200);
    const [latest] = (await trail(`record=document:${id}`)).data;
    expect(latest?.changes).toEqual({ contentType: { old: null, new: "application/pdf" } });
  });

  it("an update that changes nothing records no field", async () => {
    const id = await createDocument(as.northAdmin, 1, "Same");
    await t.request(`/api/v1/documents/${id}`, {
      method: "PUT",
      token: await as.northAdmin(),
      school: 1,
      body: { name: "Same" },
    });
    const { data } = await trail(`record=document:${id}`);
    expect(data[0]).toMatchObject({ action: "update", changes: {} });
  });

  it("never records a device token's value, only that it changed", async () => {
    const value = `fcm-secret-${crypto.randomUUID()}`;
    const res = await t.request("/api/v1/device-token", {
      method: "POST",
      token: await as.northAdmin(),
      school: 1,
      body: { token: value, platform: "ios" },
    });
    const { id } = (await res.json()) as { id: number };
    await t.request(`/api/v1/device-token/${id}`, {
      method: "PUT",
      token: await as.northAdmin(),
      school: 1,
      body: { token: `${value}-2` },
    });
    const rows = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "device-token"), eq(auditLog.recordId, id)));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.changes).not.toContain("fcm-secret");
    expect(JSON.parse(rows[1]?.changes ?? "{}").token).toEqual({ old: "[redacted]", new: "[redacted]" });
  });

  it("attributes an import's changes to the import and a sweep's to its job", async () => {
    const documentId = await createDocument(as.northAdmin, 1, "Import");
    const res = await t.request("/api/v1/bulk-process", {
      method: "POST",
      token: await as.northAdmin(),
      school: 1,
      body: { entity: "students", documentId },
    });
    const { id } = (await res.json()) as { id: number };
    const message = {
      id: crypto.randomUUID(),
      timestamp: new Date(),
      attempts: 1,
      body: { bulkProcessId: id, schoolId: 1 },
    };
    await handleQueue(t.deps, createMessageBatch("school-bulk", [message]));
    const imported = await trail(`actor=import:${id}`);
    expect(imported.data.map((e) => e.action)).toEqual(["fail", "start"]);
    expect(imported.data[1]?.changes.status).toEqual({ old: "queued", new: "processing" });

    // A process left "processing" for an hour is failed by the sweep, as the job.
    const at = t.clock.now().toISOString();
    const [stuck] = await t.db
      .insert(bulkProcesses)
      .values({
        schoolId: 1,
        entity: "students",
        documentId,
        status: "processing",
        startedAt: at,
        createdAt: at,
        updatedAt: at,
      })
      .returning();
    t.clock.advance(3600);
    await sweepBulkProcesses(t.deps);
    const swept = await trail(`record=bulk-process:${stuck?.id}`);
    expect(swept.data[0]).toMatchObject({
      action: "fail",
      actor: { type: "job", id: null, name: "sweep-bulk-processes" },
    });
    expect((await trail("actor=job:sweep-bulk-processes")).total).toBeGreaterThanOrEqual(1);
  });
});

describe("audit values keep their types", () => {
  type Pair = { old: unknown; new: unknown };
  const admin = () => as.northAdmin();
  async function call(method: string, path: string, body?: unknown, token?: string) {
    const res = await t.request(path, { method, token: token ?? (await admin()), school: 1, body });
    expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
    return res.status === 204 ? undefined : ((await res.json()) as Record<string, unknown>);
  }
  const changesOf = async (entity: string, id: number) =>
    (await trail(`record=${entity}:${id}`)).data.map((e) => ({ action: e.action, changes: e.changes }));

  it("a JSON column's values are arrays: a teacher's subjects, a school's levels", async () => {
    const teacher = await call("POST", "/api/v1/teacher", {
      phone: "+15557300001",
      firstName: "Tea",
      subjects: ["Math", "Biology"],
    });
    const id = teacher?.id as number;
    t.clock.advance(1);
    await call("PUT", `/api/v1/teacher/${id}`, { subjects: ["Math"] });
    const [updated, created] = await changesOf("teacher", id);
    expect(created?.changes.subjects).toEqual({ old: null, new: ["Math", "Biology"] });
    expect(updated?.changes.subjects).toEqual({ old: ["Math", "Biology"], new: ["Math"] });

    const superAdmin = await as.superAdmin();
    await call("PUT", "/api/v1/school/1", { levels: ["elementary", "middle", "high"] }, superAdmin);
    t.clock.advance(1);
    await call("PUT", "/api/v1/school/1", { levels: ["elementary"] }, superAdmin);
    const [last] = await changesOf("school", 1);
    expect(last?.changes.levels).toEqual({ old: ["elementary", "middle", "high"], new: ["elementary"] });
  });

  it("a boolean column's values are booleans, ids are numbers: a guardian's capabilities, a module's state", async () => {
    const student = (await call("POST", "/api/v1/student", { firstName: "Bo", lastName: "Ol" })) as { id: number };
    const parent = (await call("POST", "/api/v1/parent", {
      phone: "+15557300002",
      firstName: "Pa",
      relationship: "mother",
    })) as { id: number };
    const link = (await call("POST", `/api/v1/student/${student.id}/guardian`, {
      parentId: parent.id,
      canPickUp: true,
      receivesNotifications: false,
    })) as { id: number };
    t.clock.advance(1);
    await call("PUT", `/api/v1/student-guardian/${link.id}`, { canPickUp: false });
    t.clock.advance(1);
    await call("DELETE", `/api/v1/student-guardian/${link.id}`);
    const [removed, updated, created] = await changesOf("guardian", link.id);
    expect(created?.changes).toMatchObject({
      studentId: { old: null, new: student.id },
      parentId: { old: null, new: parent.id },
      canPickUp: { old: null, new: true },
      receivesNotifications: { old: null, new: false },
    });
    expect(updated?.changes).toEqual({ canPickUp: { old: true, new: false } });
    expect(removed?.changes.canPickUp).toEqual({ old: false, new: null });
    expect(removed?.changes.studentId).toEqual({ old: student.id, new: null });

    await call("PUT", "/api/v1/application-module/school/invitations/enabled", { enabled: false });
    const rows = await t.db.select().from(auditLog).where(eq(auditLog.entity, "school-module"));
    const toggled = JSON.parse(rows.at(-1)?.changes ?? "{}") as Record<string, Pair>;
    expect(toggled.enabled).toEqual({ old: true, new: false });
    await call("PUT", "/api/v1/application-module/school/invitations/enabled", { enabled: true });
  });

  it("every row is { old, new } pairs: invites, joins, role memberships, role changes, trusted decisions", async () => {
    const [last] = await t.db.select({ since: sql<number>`coalesce(max(${auditLog.id}), 0)` }).from(auditLog);
    const since = last?.since ?? 0;
    // An invitation of a new number, then of the member again (a new invite row each time).
    await call("POST", "/api/v1/user/invite/school", { phones: ["+15557300003"] });
    const member = (await call("POST", "/api/v1/user", { phone: "+15550000012", firstName: "Known" })) as {
      id: number;
    };
    await call("POST", "/api/v1/user/invite/users", { userIds: [member.id] });
    await call("POST", "/api/v1/role-user", { userId: member.id, roleId: 5 });
    await call("POST", `/api/v1/user/${member.id}/roles`, { roleIds: [4] });
    const student = (await call("POST", "/api/v1/student", { firstName: "Tr", lastName: "Us" })) as { id: number };
    const trusted = (await call("POST", "/api/v1/trusted-person", {
      studentId: student.id,
      name: "Laura Gomez",
      relationship: "aunt",
      phone: "+52 55 1234 5678",
    })) as { id: number };
    await call("PATCH", `/api/v1/trusted-person/${trusted.id}/status`, { status: "approved", reason: "ID checked" });
    await call("POST", "/api/v1/user/delete-multiple", { ids: [member.id] });

    const rows = await t.db.select().from(auditLog).where(gt(auditLog.id, since));
    const entities = new Set(rows.map((r) => `${r.entity} ${r.action}`));
    for (const expected of ["user-invite invite", "user create", "user join", "role-user create", "user roles"]) {
      expect([...entities]).toContain(expected);
    }
    expect(auditShapeProblems(rows)).toEqual([]);
    const invite = rows.find((r) => r.entity === "user-invite");
    expect(JSON.parse(invite?.changes ?? "{}")).toEqual({ invitedAt: { old: null, new: t.clock.now().toISOString() } });
  });

  it("every row this file's tests wrote is { old, new } pairs of typed values", async () => {
    const rows = await t.db.select().from(auditLog);
    expect(rows.length).toBeGreaterThan(20);
    expect(auditShapeProblems(rows)).toEqual([]);
  });
});

describe("immutability", () => {
  it("refuses to update or delete an audit row, even with SQL", async () => {
    await createDocument(as.northAdmin, 1);
    // The trigger's message is on the driver error, the cause of drizzle's "Failed query".
    const reason = (run: () => Promise<unknown>) =>
      run().then(
        () => "no error",
        (err: Error) => String((err.cause as Error | undefined)?.message ?? err.message),
      );
    expect(await reason(() => t.db.update(auditLog).set({ action: "forged" }))).toMatch(/immutable/);
    expect(await reason(() => t.db.delete(auditLog))).toMatch(/immutable/);
    expect((await t.db.select().from(auditLog)).some((r) => r.action === "forged")).toBe(false);
  });

  it("offers no route that writes to the trail", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const res = await t.request("/api/v1/audit-log/1", { method, token: await as.superAdmin() });
      expect(res.status, method).toBe(405);
    }
  });
});

describe("GET /api/v1/audit-log", () => {
  it("shows a school admin their school's trail only, newest first", async () => {
    const north = await createDocument(as.northAdmin, 1, "North doc");
    const south = await createDocument(as.southAdmin, 2, "South doc");
    const page = await trail("entity=document&pageSize=100");
    const ids = page.data.map((e) => e.recordId);
    expect(ids).toContain(north);
    expect(ids).not.toContain(south);
    expect(page.data.every((e) => e.schoolId === 1)).toBe(true);
    const times = page.data.map((e) => e.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    // Another school's entry is a 404, like any other record.
    const [theirs] = (await trail(`record=document:${south}`, as.southAdmin)).data;
    const res = await t.request(`/api/v1/audit-log/${theirs?.id}`, { token: await as.northAdmin() });
    expect(res.status).toBe(404);
  });

  it("shows the super-admin every school's trail, or one school's with X-School-Id", async () => {
    const north = await createDocument(as.northAdmin, 1);
    const south = await createDocument(as.southAdmin, 2);
    const all = (await trail("entity=document&pageSize=100", as.superAdmin)).data.map((e) => e.recordId);
    expect(all).toEqual(expect.arrayContaining([north, south]));
    const one = (await trail("entity=document&pageSize=100", as.superAdmin, 2)).data;
    expect(one.map((e) => e.recordId)).toContain(south);
    expect(one.every((e) => e.schoolId === 2)).toBe(true);
  });

  it("filters by actor and by a date range", async () => {
    t.clock.advance(86_400);
    const from = t.clock.now().toISOString();
    const mine = await createDocument(as.northAdmin, 1);
    const other = await createDocument(() => t.token(3, { 1: "all" }), 1);
    const to = t.clock.now().toISOString();
    t.clock.advance(86_400);
    await createDocument(as.northAdmin, 1);
    const window = await trail(`from=${from}&to=${to}&entity=document`);
    expect(window.data.map((e) => e.recordId).sort()).toEqual([mine, other].sort());
    const byActor = await trail(`actor=user:3&from=${from}`);
    expect(byActor.data.map((e) => e.recordId)).toEqual([other]);
  });

  it("refuses malformed filters with a 400 naming the field", async () => {
    for (const [query, field] of [
      ["record=document", "record"],
      ["actor=admin:2", "actor"],
      ["from=yesterday", "from"],
      ["entity=Document!", "entity"],
    ]) {
      const res = await t.request(`/api/v1/audit-log?${query}`, { token: await as.northAdmin() });
      expect(res.status, query).toBe(400);
      expect((await problem(res)).errors?.map((e) => e.path)).toContain(field);
    }
  });

  it("is for school admins: staff and teachers get a 403", async () => {
    for (const token of [await t.token(3, { 1: ["document.read", "user.read"] })]) {
      expect((await t.request("/api/v1/audit-log", { token })).status).toBe(403);
    }
  });
});
