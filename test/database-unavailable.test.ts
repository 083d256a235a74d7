/**
 * A database hiccup (a lock another writer holds, a dropped connection, a D1 reset, an overload) is
 * not a bug: a read is run once more, a write only when it cannot have run, and what still fails
 * is a 503 with `retry-after`, logged with the request id, that left nothing behind. The same in
 * the bulk queue's consumer (the message is retried, then imported once) and in cron runs (the run
 * is recorded as failed with the reason).
 *
 * The failures are D1's own error texts, thrown by a wrapper around the real D1 binding
 * (`failingD1`), so everything above the binding (drizzle, the data layer, the services) is the
 * app's. A real lock needs a second connection to the database, which workerd does not give a
 * Worker; test/node/libsql.test.ts holds a real SQLite lock from a second libSQL connection.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { and, count, eq, gt, inArray, sql } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { d1 } from "../src/db/client";
import { addresses } from "../src/db/schema/address";
import { auditLog } from "../src/db/schema/audit-log";
import { bulkProcesses } from "../src/db/schema/bulk-process";
import { roleUsers, users } from "../src/db/schema/core";
import { cronHistory } from "../src/db/schema/jobs";
import { taskReminders } from "../src/db/schema/task";
import { teachers } from "../src/db/schema/teacher";
import worker from "../src/index";
import { jobsFor, runScheduled } from "../src/jobs/scheduled";
import { FIXTURES, type Fixture } from "./fixtures";
import { fixtureReminder } from "./fixtures/modules/task";
import { DEMO, failingD1, makeTestApp, problem, recordingBulkQueue } from "./helpers";
import { xlsx } from "./sheets";

/** D1's error texts (developers.cloudflare.com/d1/observability/debug-d1, and local D1's SQLite errors). */
const LOCKED = "D1_ERROR: database is locked: SQLITE_BUSY";
const CONNECTION_LOST = "D1_ERROR: Network connection lost.";
const RESET = "D1_ERROR: D1 DB reset because its code was updated.";
const OVERLOADED = "D1_ERROR: D1 DB is overloaded. Too many requests queued.";

const isInsert = (into: string) => (q: string) => q.includes(`insert into "${into}"`);

const { sent, queue: recordingQueue } = recordingBulkQueue();
const t = makeTestApp({ queues: { bulk: recordingQueue } });

/** The app on the same local D1, through a binding that fails as `fault` says. */
function appFailing(fault: Parameters<typeof failingD1>[1]) {
  const failing = failingD1(env.DB, fault);
  return { f: makeTestApp({ db: d1(failing.db) }), attempts: failing.attempts };
}

let north: string;
beforeAll(async () => {
  north = await t.token(DEMO.northAdmin.id, { 1: "all" });
  // Every request checks its status against the document: built once, before the timed tests.
  await t.request("/api/openapi.json");
}, 60_000);
afterEach(() => {
  vi.restoreAllMocks();
});

/** The log lines written while `run` runs (console.*), parsed. */
async function logged<T>(run: () => Promise<T>) {
  const lines: Record<string, unknown>[] = [];
  const keep = (...args: unknown[]) => {
    try {
      lines.push(JSON.parse(String(args[0])));
    } catch {
      // not one of ours
    }
  };
  for (const level of ["log", "warn", "error"] as const) vi.spyOn(console, level).mockImplementation(keep);
  const result = await run();
  vi.restoreAllMocks();
  return { result, lines };
}

async function expectUnavailable(res: Response, requestId?: string) {
  expect(res.status, await res.clone().text()).toBe(503);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1, `retry-after ${res.headers.get("retry-after")}`).toBe(true);
  const text = await res.clone().text();
  expect(text).not.toMatch(/D1_ERROR|SQLITE|select|insert/i);
  const body = (await problem(res)) as Awaited<ReturnType<typeof problem>> & { requestId?: string };
  expect(body).toMatchObject({ type: "/problems/unavailable", title: "Service unavailable", status: 503 });
  if (requestId) expect(body.requestId).toBe(requestId);
  return body;
}

const addressBody = (street: string) => ({ street, number: "7", city: "Monterrey", country: "MX" });
const addressesNamed = (street: string) => t.db.select().from(addresses).where(eq(addresses.street, street));
const auditsOf = (entity: string, recordIds: number[], since: number) =>
  t.db
    .select()
    .from(auditLog)
    .where(and(gt(auditLog.id, since), eq(auditLog.entity, entity), inArray(auditLog.recordId, recordIds)));
async function lastAuditId() {
  const [row] = await t.db.select({ id: sql<number>`coalesce(max(${auditLog.id}), 0)` }).from(auditLog);
  return row?.id ?? 0;
}
async function createAddress(street: string) {
  const res = await t.request("/api/v1/address", {
    method: "POST",
    token: north,
    school: 1,
    body: addressBody(street),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: number }).id;
}

describe("reads", () => {
  for (const text of [LOCKED, CONNECTION_LOST, RESET]) {
    it(`one failure (${text}) is run once more: 200`, async () => {
      const { f, attempts } = appFailing({ text, times: 1, when: (q) => q.includes('from "address"') });
      const list = await f.request("/api/v1/address", { token: north, school: 1 });
      expect(list.status, await list.clone().text()).toBe(200);
      expect(((await list.json()) as { total: number }).total).toBeGreaterThan(0);
      // The page and its count are one batch: it failed once and ran once more.
      expect(attempts).toHaveLength(2);
    });
  }

  it("a read that keeps failing is a 503 with retry-after, logged with the request id, after one more try", async () => {
    const { f, attempts } = appFailing({ text: CONNECTION_LOST, when: (q) => q.includes('from "address"') });
    const { result: res, lines } = await logged(() =>
      f.request("/api/v1/address/1", { token: north, school: 1, headers: { "x-request-id": "hiccup-read" } }),
    );
    await expectUnavailable(res, "hiccup-read");
    expect(attempts).toHaveLength(2);
    const line = lines.find((l) => l.message === "database unavailable");
    expect(line).toMatchObject({ level: "error", requestId: "hiccup-read", method: "GET", path: "/api/v1/address/1" });
  });

  it("an overloaded database is not asked again: 503 at once", async () => {
    const { f, attempts } = appFailing({ text: OVERLOADED, when: (q) => q.includes('from "address"') });
    await expectUnavailable(await f.request("/api/v1/address", { token: north, school: 1 }));
    expect(attempts).toHaveLength(1);
  });

  it("health still answers 503 naming the database", async () => {
    const { f } = appFailing({ text: LOCKED });
    const { result: res, lines } = await logged(() => f.request("/api/health"));
    expect(lines).toContainEqual(expect.objectContaining({ message: "health check failed", dependency: "database" }));
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: Record<string, unknown> }).error).toHaveProperty("database");
  });
});

describe("writes", () => {
  it("a write that fails is a 503 that left nothing: no row, no audit row, and it is not sent again", async () => {
    const since = await lastAuditId();
    const { f, attempts } = appFailing({ text: CONNECTION_LOST, when: isInsert("address") });
    const { result: res, lines } = await logged(() =>
      f.request("/api/v1/address", {
        method: "POST",
        token: north,
        school: 1,
        headers: { "x-request-id": "hiccup-write" },
        body: addressBody("Calle Perdida"),
      }),
    );
    await expectUnavailable(res, "hiccup-write");
    expect(lines.some((l) => l.message === "database unavailable" && l.requestId === "hiccup-write")).toBe(true);
    // The connection dropped with the batch sent: it may have committed, so it is never sent twice.
    expect(attempts).toHaveLength(1);
    expect(await addressesNamed("Calle Perdida")).toEqual([]);
    const audits = await t.db.select().from(auditLog).where(gt(auditLog.id, since));
    expect(audits.filter((a) => a.entity === "address")).toEqual([]);
  });

  it("a write whose answer was lost after it committed is not run again: one row, one audit row", async () => {
    const since = await lastAuditId();
    const { f, attempts } = appFailing({ text: CONNECTION_LOST, times: 1, after: true, when: isInsert("address") });
    const res = await f.request("/api/v1/address", {
      method: "POST",
      token: north,
      school: 1,
      body: addressBody("Calle Cometida"),
    });
    // The caller cannot know it happened: 503, not a 201 it would trust, and never a second row.
    await expectUnavailable(res);
    expect(attempts).toHaveLength(1);
    const rows = await addressesNamed("Calle Cometida");
    expect(rows).toHaveLength(1);
    expect(await auditsOf("address", [rows[0]?.id ?? 0], since)).toHaveLength(1);
  });

  // Creates, updates and deletes: each one batch that SQLite refused before running it (the lock
  // was not free), so running it once more is safe and does it once.
  it("a create refused by a lock runs once more: 201, one row, one audit row", async () => {
    const since = await lastAuditId();
    const { f, attempts } = appFailing({ text: LOCKED, times: 1, when: isInsert("address") });
    const res = await f.request("/api/v1/address", {
      method: "POST",
      token: north,
      school: 1,
      body: addressBody("Calle Ocupada"),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(attempts).toHaveLength(2);
    const rows = await addressesNamed("Calle Ocupada");
    expect(rows).toHaveLength(1);
    expect(await auditsOf("address", [rows[0]?.id ?? 0], since)).toHaveLength(1);
  });

  it("an update refused by a lock runs once more: 204, changed once, one audit row", async () => {
    const id = await createAddress("Calle Antes");
    const since = await lastAuditId();
    const { f, attempts } = appFailing({ text: LOCKED, times: 1, when: (q) => q.includes('update "address"') });
    const res = await f.request(`/api/v1/address/${id}`, {
      method: "PUT",
      token: north,
      school: 1,
      body: { neighborhood: "Centro" },
    });
    expect(res.status, await res.clone().text()).toBe(204);
    expect(attempts).toHaveLength(2);
    const [row] = await t.db.select().from(addresses).where(eq(addresses.id, id));
    expect(row?.neighborhood).toBe("Centro");
    expect(await auditsOf("address", [id], since)).toHaveLength(1);
  });

  it("a delete that keeps failing is a 503 and the record stays; refused once by a lock, it is deleted once", async () => {
    const id = await createAddress("Calle Borrada");
    const since = await lastAuditId();
    const stuck = appFailing({ text: RESET, when: (q) => q.includes('delete from "address"') });
    await expectUnavailable(
      await stuck.f.request(`/api/v1/address/${id}`, { method: "DELETE", token: north, school: 1 }),
    );
    expect(stuck.attempts).toHaveLength(1);
    expect(await addressesNamed("Calle Borrada")).toHaveLength(1);
    expect(await auditsOf("address", [id], since)).toEqual([]);

    const locked = appFailing({ text: LOCKED, times: 1, when: (q) => q.includes('delete from "address"') });
    const res = await locked.f.request(`/api/v1/address/${id}`, { method: "DELETE", token: north, school: 1 });
    expect(res.status, await res.clone().text()).toBe(204);
    expect(await addressesNamed("Calle Borrada")).toEqual([]);
    expect((await auditsOf("address", [id], since)).map((a) => a.action)).toEqual(["delete"]);
  });
});

describe("every operation that reaches the database", () => {
  type Operation = { operationId: string; requestBody?: unknown; responses: Record<string, unknown> };

  function fixtureFor(path: string): Fixture | undefined {
    const key = Object.keys(FIXTURES)
      .filter((p) => path === p || path.startsWith(`${p}/`))
      .sort((a, b) => b.length - a.length)[0];
    return key ? FIXTURES[key] : undefined;
  }

  it("answers 503 with retry-after while the database is unavailable (its creates too)", {
    timeout: 120_000,
  }, async () => {
    const doc = (await (await t.request("/api/openapi.json")).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const { f, attempts } = appFailing({ text: OVERLOADED });
    let reached = 0;
    // Each 503 logs a line: kept out of the test output.
    for (const level of ["warn", "error"] as const) vi.spyOn(console, level).mockImplementation(() => undefined);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        // Health answers its own report (above).
        if (op.operationId === "getHealth") continue;
        const fixture = fixtureFor(path);
        let url = path.replace("{id}", "1").replace(/\{(\w+Id)\}/g, "1");
        for (const [, name] of url.matchAll(/\{(\w+)\}/g)) {
          const make = name ? fixture?.params?.[name] : undefined;
          url = url.replace(`{${name}}`, make ? await make(t, 1) : "documents");
        }
        const given = op.requestBody ? (fixture?.bodies?.[op.operationId] ?? {}) : undefined;
        const body = typeof given === "function" ? await given(t, 1) : given;
        attempts.length = 0;
        // `request` also checks the status is one the operation declares.
        const res = await f.request(url, { method: method.toUpperCase(), token: north, school: 1, body });
        const where = `${method.toUpperCase()} ${path} (${op.operationId}): ${res.status}`;
        if (attempts.length === 0) {
          // Answered before any query (validation, access): nothing to say about the database.
          expect(res.status, where).not.toBe(503);
          continue;
        }
        reached++;
        expect(res.status, where).toBe(503);
        expect(res.headers.get("retry-after"), where).toMatch(/^\d+$/);
        expect((await problem(res)).type, where).toBe("/problems/unavailable");
      }
    }
    expect(reached).toBeGreaterThan(100);
    // Every resource's create, as its fixture makes one (through the API, mostly): what reached the
    // database was refused with a 503. Cron runs are the dispatcher's, which records a failure
    // rather than throwing it ("cron runs" below).
    let created = 0;
    for (const [path, fixture] of Object.entries(FIXTURES)) {
      if (path === "/api/v1/cron-history") continue;
      attempts.length = 0;
      const outcome = await fixture.create(f, 1).then(
        (id) => `made ${id}`,
        (err: Error) => err.message,
      );
      if (attempts.length === 0) continue;
      created++;
      expect(outcome, path).toMatch(/: 503 |database is unavailable/);
    }
    expect(created).toBeGreaterThan(20);
  });
});

describe("the bulk queue consumer", () => {
  const COLUMNS = ["Phone", "First name", "Last name", "Email", "Language", "Subjects", "Employee number"];
  const phone = (i: number) => `+1555${String(8_100_000 + i).padStart(7, "0")}`;
  let n = 0;

  /** A teachers import, queued through the API: its message, and the phones of its rows. */
  async function queuedImport() {
    const base = ++n * 10;
    const phones = [phone(base), phone(base + 1)];
    const bytes = await xlsx(
      COLUMNS,
      phones.map((p, i) => [p, `Teacher${i}`, "Hiccup", null, null, "Art", null]),
    );
    const slug = `1/documents/hiccup-${base}.xlsx`;
    const doc = await t.request("/api/v1/documents", {
      method: "POST",
      token: north,
      school: 1,
      body: { name: "T", slug },
    });
    expect(doc.status).toBe(201);
    await env.DOCUMENTS.put(slug, bytes);
    const documentId = ((await doc.json()) as { id: number }).id;
    const res = await t.request("/api/v1/teacher/upload-file", {
      method: "POST",
      token: north,
      school: 1,
      body: { documentId },
    });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: number }).id;
    expect(sent.at(-1)).toEqual({ bulkProcessId: id, schoolId: 1 });
    return { id, phones, body: sent.at(-1) };
  }

  /** Delivers one message to the Worker's queue handler, on `db` (default: the healthy binding). */
  async function deliver(id: string, body: unknown, db: D1Database = env.DB, attempts = 1) {
    const batch = createMessageBatch("school-bulk", [{ id, body, timestamp: new Date(), attempts }]);
    const ctx = createExecutionContext();
    await (worker as ExportedHandler<Env>).queue?.(batch, { ...env, DB: db }, ctx);
    return getQueueResult(batch, ctx);
  }

  async function processOf(id: number) {
    const [row] = await t.db.select().from(bulkProcesses).where(eq(bulkProcesses.id, id));
    return row;
  }

  /** The import's teachers, roles and audit rows: each exactly once. */
  async function importedOnce(processId: number, phones: string[]) {
    const people = await t.db.select({ id: users.id }).from(users).where(inArray(users.phone, phones));
    expect(people).toHaveLength(phones.length);
    const ids = people.map((p) => p.id);
    expect(await t.db.select().from(roleUsers).where(inArray(roleUsers.userId, ids))).toHaveLength(phones.length);
    expect(await t.db.select().from(teachers).where(inArray(teachers.userId, ids))).toHaveLength(phones.length);
    const [created] = await t.db
      .select({ n: count() })
      .from(auditLog)
      .where(
        and(
          eq(auditLog.actorType, "import"),
          eq(auditLog.actorId, processId),
          eq(auditLog.entity, "user"),
          inArray(auditLog.recordId, ids),
        ),
      );
    expect(created?.n).toBe(phones.length);
    expect(await processOf(processId)).toMatchObject({
      status: "completed",
      totalRows: phones.length,
      processedRows: phones.length,
    });
  }

  it("an import that hits the error is retried (not failed, not acked), then imports once", async () => {
    const { id, phones, body } = await queuedImport();
    const failing = failingD1(env.DB, { text: CONNECTION_LOST, when: isInsert("user") });
    const first = await deliver(`hiccup-${id}`, body, failing.db);
    expect(first.explicitAcks).toEqual([]);
    expect(first.retryMessages.map((m) => m.msgId)).toEqual([`hiccup-${id}`]);
    // Still the message's to finish: not failed, and nothing of it written.
    expect((await processOf(id))?.status).toBe("processing");
    expect(await t.db.select().from(users).where(inArray(users.phone, phones))).toEqual([]);

    const again = await deliver(`hiccup-${id}`, body, env.DB, 2);
    expect(again.explicitAcks).toEqual([`hiccup-${id}`]);
    expect(again.retryMessages).toEqual([]);
    await importedOnce(id, phones);
  });

  it("a claim whose answer was lost after it committed is resumed by the redelivery, and imports once", async () => {
    const { id, phones, body } = await queuedImport();
    const failing = failingD1(env.DB, {
      text: CONNECTION_LOST,
      times: 1,
      after: true,
      when: isInsert("queue_receipt"),
    });
    const first = await deliver(`lost-${id}`, body, failing.db);
    expect(first.retryMessages.map((m) => m.msgId)).toEqual([`lost-${id}`]);
    expect((await processOf(id))?.status).toBe("processing");

    // Another message for the same process does not take it over.
    const other = await deliver(`other-${id}`, body);
    expect(other.explicitAcks).toEqual([`other-${id}`]);
    expect((await processOf(id))?.status).toBe("processing");

    const again = await deliver(`lost-${id}`, body, env.DB, 2);
    expect(again.explicitAcks).toEqual([`lost-${id}`]);
    await importedOnce(id, phones);
  });

  it("a lock on the import's batch is waited out inside the delivery: imported once, acked", async () => {
    const { id, phones, body } = await queuedImport();
    const failing = failingD1(env.DB, { text: LOCKED, times: 1, when: isInsert("user") });
    const result = await deliver(`locked-${id}`, body, failing.db);
    expect(result.explicitAcks).toEqual([`locked-${id}`]);
    expect(failing.attempts).toHaveLength(2);
    await importedOnce(id, phones);
  });
});

describe("cron runs", () => {
  const CRON = "*/5 * * * *";
  /** The jobs of the 5-minute trigger, in the order they run (the modules' registry order). */
  const JOBS = jobsFor(CRON).map((j) => j.name);
  const runs = async (since: number) =>
    t.db
      .select({ job: cronHistory.job, status: cronHistory.status, detail: cronHistory.detail })
      .from(cronHistory)
      .where(gt(cronHistory.id, since))
      .orderBy(cronHistory.id);
  async function lastRun() {
    const [row] = await t.db.select({ id: sql<number>`coalesce(max(${cronHistory.id}), 0)` }).from(cronHistory);
    return row?.id ?? 0;
  }

  it("a job whose database stays unavailable is recorded as failed with the reason; the others run", async () => {
    const since = await lastRun();
    const failing = failingD1(env.DB, { text: CONNECTION_LOST, when: (q) => q.includes('update "bulk_process"') });
    await runScheduled({ ...t.deps, db: d1(failing.db) }, CRON);
    expect((await runs(since)).map((r) => [r.job, r.status])).toEqual(
      JOBS.map((job) => [job, job === "sweep-bulk-processes" ? "failed" : "completed"]),
    );
    expect((await runs(since)).find((r) => r.job === "sweep-bulk-processes")?.detail).toBe(
      "The database is unavailable (the connection to the database was lost)",
    );
  });

  it("a school's reminder that meets the database unavailable: the run is recorded failed naming the school and the hiccup; the reminder goes at the next run", async () => {
    const reminder = await fixtureReminder(t, 1, 60);
    t.clock.advance(120);
    const since = await lastRun();
    const failing = failingD1(env.DB, { text: CONNECTION_LOST, when: (q) => q.includes('update "task_reminder"') });
    await runScheduled({ ...t.deps, db: d1(failing.db) }, CRON);
    const run = (await runs(since)).find((r) => r.job === "send-task-reminders" && r.status === "failed");
    expect(run?.detail).toBe(
      "not done for school 1 (The database is unavailable (the connection to the database was lost)): the next run does it",
    );
    // The reminder waits for the next run.
    await runScheduled(t.deps, CRON);
    const [row] = await t.db
      .select({ status: taskReminders.status })
      .from(taskReminders)
      .where(eq(taskReminders.id, reminder));
    expect(row?.status).toBe("sent");
  });

  it("a lock on the run's own record is waited out: every job runs and is recorded", async () => {
    const since = await lastRun();
    const failing = failingD1(env.DB, { text: LOCKED, times: 1, when: isInsert("cron_history") });
    await runScheduled({ ...t.deps, db: d1(failing.db) }, CRON);
    expect((await runs(since)).map((r) => [r.job, r.status])).toEqual(JOBS.map((job) => [job, "completed"]));
  });

  it("a run whose record could not be started is still made, and recorded at its end", async () => {
    const since = await lastRun();
    const failing = failingD1(env.DB, { text: RESET, times: 1, when: isInsert("cron_history") });
    await runScheduled({ ...t.deps, db: d1(failing.db) }, CRON);
    expect((await runs(since)).map((r) => [r.job, r.status])).toEqual(JOBS.map((job) => [job, "completed"]));
  });
});
