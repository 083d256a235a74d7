import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { bulkProcesses } from "../src/db/schema/bulk-process";
import { documents } from "../src/db/schema/document";
import { queueReceipts } from "../src/db/schema/jobs";
import { withSearch } from "../src/db/search";
import type { QueueProducer } from "../src/deps";
import worker from "../src/index";
import { handleQueue } from "../src/jobs/queue";
import { sweepBulkProcesses } from "../src/modules/bulk-process/service";
import { FIXTURES } from "./fixtures";
import { DEMO, makeTestApp, problem, recordingBulkQueue } from "./helpers";

const path = "/api/v1/bulk-process";

/** The bulk queue as the API sees it, recording what was sent (the consumer is run by hand). */
const { sent, queue: recordingQueue } = recordingBulkQueue();
const downQueue: QueueProducer = {
  send: () => Promise.reject(new Error("Queue send failed: internal error")),
  sendBatch: () => Promise.reject(new Error("Queue send failed: internal error")),
};

const t = makeTestApp({ queues: { bulk: recordingQueue } });
const down = makeTestApp({ queues: { bulk: downQueue } });

type Process = {
  id: number;
  createdAt: string;
  updatedAt: string;
  entity: string;
  documentId: number;
  status: string;
  totalRows: number;
  processedRows: number;
  errors: { row: number; message: string }[];
  createdBy: number | null;
  startedAt: string | null;
  finishedAt: string | null;
};

let north: string; // north admin, every permission in school 1
let south: string; // south admin, every permission in school 2

beforeAll(async () => {
  north = await t.token(DEMO.northAdmin.id, { 1: "all" });
  south = await t.token(DEMO.southAdmin.id, { 2: "all" });
});

let n = 0;
/** A document of `school` created through the documents API; returns its id and slug. */
async function uploadRecord(school: number, token = school === 1 ? north : south) {
  const slug = `${school}/documents/import-${Date.now().toString(36)}-${++n}.xlsx`;
  const res = await t.request("/api/v1/documents", { method: "POST", token, school, body: { name: "Import", slug } });
  expect(res.status).toBe(201);
  return { id: ((await res.json()) as { id: number }).id, slug };
}

async function start(school: number, entity = "students", app = t) {
  const doc = await uploadRecord(school);
  const res = await app.request(path, {
    method: "POST",
    token: school === 1 ? north : south,
    school,
    body: { entity, documentId: doc.id },
  });
  expect(res.status).toBe(201);
  return { process: (await res.json()) as Process, doc };
}

async function read(id: number, school = 1) {
  const res = await t.request(`${path}/${id}`, { token: school === 1 ? north : south, school });
  expect(res.status).toBe(200);
  return (await res.json()) as Process;
}

/** Delivers messages to the Worker's real queue handler, as the Queues runtime would. */
async function deliver(messages: { id: string; body: unknown }[], queue = "school-bulk") {
  const batch = createMessageBatch(
    queue,
    messages.map((m) => ({ ...m, timestamp: new Date(), attempts: 1 })),
  );
  const ctx = createExecutionContext();
  await (worker as ExportedHandler<Env>).queue?.(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

describe("create (POST)", () => {
  it("inserts a queued process and sends { bulkProcessId, schoolId } to the bulk queue", async () => {
    const before = sent.length;
    const { process, doc } = await start(1, "teachers");
    expect(process).toEqual({
      id: process.id,
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
      entity: "teachers",
      documentId: doc.id,
      status: "queued",
      totalRows: 0,
      processedRows: 0,
      errors: [],
      createdBy: DEMO.northAdmin.id,
      startedAt: null,
      finishedAt: null,
    });
    expect(sent.slice(before)).toEqual([{ bulkProcessId: process.id, schoolId: 1 }]);
    expect(await read(process.id)).toEqual(process);
  });

  it("a document of another school, or none, is a 404 and nothing is queued", async () => {
    const southDoc = await uploadRecord(2);
    const before = sent.length;
    const res = await t.request(path, {
      method: "POST",
      token: north,
      school: 1,
      body: { entity: "students", documentId: southDoc.id },
    });
    expect(res.status).toBe(404);
    expect((await problem(res)).detail).toBe(`Document ${southDoc.id} not found`);
    const none = await t.request(path, {
      method: "POST",
      token: north,
      school: 1,
      body: { entity: "students", documentId: 999999 },
    });
    expect(none.status).toBe(404);
    expect((await problem(none)).detail).toBe("Document 999999 not found");
    expect(sent.length).toBe(before);
  });

  it("when the queue is down: 503, and the process is recorded as failed, not left queued", async () => {
    const doc = await uploadRecord(1);
    const res = await down.request(path, {
      method: "POST",
      token: north,
      school: 1,
      body: { entity: "families", documentId: doc.id },
    });
    expect(res.status).toBe(503);
    const p = await problem(res);
    expect(p.detail).toMatch(/^Bulk process \d+ could not be queued/);
    const id = Number(/Bulk process (\d+)/.exec(p.detail)?.[1]);
    const row = await read(id);
    expect(row).toMatchObject({
      status: "failed",
      documentId: doc.id,
      errors: [{ row: 0, message: "Could not be queued: the bulk queue is unavailable" }],
    });
    expect(row.finishedAt).not.toBeNull();
    const queued = await t.db.select().from(bulkProcesses).where(eq(bulkProcesses.id, id));
    expect(queued[0]?.status).toBe("failed");
  });

  it.each([
    ["a missing entity", { documentId: 1 }, "entity"],
    ["an unknown entity", { entity: "buses", documentId: 1 }, "entity"],
    ["a missing documentId", { entity: "students" }, "documentId"],
    ["documentId 0", { entity: "students", documentId: 0 }, "documentId"],
    ["documentId as a string", { entity: "students", documentId: "1" }, "documentId"],
    ["a fractional documentId", { entity: "students", documentId: 1.5 }, "documentId"],
    ["a status", { entity: "students", documentId: 1, status: "completed" }, "status"],
    ["a schoolId", { entity: "students", documentId: 1, schoolId: 2 }, "schoolId"],
    ["a createdBy", { entity: "students", documentId: 1, createdBy: 1 }, "createdBy"],
    ["an empty object", {}, "entity"],
  ])("400 for %s", async (_, body, field) => {
    const res = await t.request(path, { method: "POST", token: north, school: 1, body });
    expect(res.status).toBe(400);
    expect((await problem(res)).errors?.some((e) => e.path === field)).toBe(true);
  });

  it("400 for malformed JSON and for no body", async () => {
    const bad = await t.request(path, {
      method: "POST",
      token: north,
      school: 1,
      body: '{"entity":',
      headers: { "content-type": "application/json" },
    });
    expect(bad.status).toBe(400);
    await problem(bad);
    const none = await t.request(path, { method: "POST", token: north, school: 1 });
    expect(none.status).toBe(400);
    await problem(none);
  });

  it("needs bulk-process.write to start and bulk-process.read to look", async () => {
    const doc = await uploadRecord(1);
    const reader = await t.token(DEMO.northAdmin.id, { 1: ["bulk-process.read"] });
    const post = await t.request(path, {
      method: "POST",
      token: reader,
      school: 1,
      body: { entity: "students", documentId: doc.id },
    });
    expect(post.status).toBe(403);
    await problem(post);
    const parent = await t.token(DEMO.northParent.id, { 1: ["school.read", "transport-rules.read"] });
    const list = await t.request(path, { token: parent, school: 1 });
    expect(list.status).toBe(403);
    await problem(list);
    const anonymous = await t.request(path);
    expect(anonymous.status).toBe(401);
    await problem(anonymous);
  });
});

describe("list and read", () => {
  let northIds: number[];
  let southIds: number[];

  beforeAll(async () => {
    northIds = [(await start(1)).process.id, (await start(1, "groups")).process.id];
    southIds = [(await start(2)).process.id];
  });

  it("lists the school's processes only, newest first", async () => {
    t.clock.advance(1);
    const latest = (await start(1, "route-students")).process.id;
    const res = await t.request(`${path}?pageSize=100`, { token: north, school: 1 });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: Process[]; total: number };
    const ids = page.data.map((p) => p.id);
    for (const id of northIds) expect(ids).toContain(id);
    for (const id of southIds) expect(ids).not.toContain(id);
    expect(ids[0]).toBe(latest);
    expect(page.total).toBe(page.data.length);
    const southPage = (await (await t.request(path, { token: south, school: 2 })).json()) as { data: Process[] };
    const southListed = southPage.data.map((p) => p.id);
    for (const id of southIds) expect(southListed).toContain(id);
    for (const id of [...northIds, latest]) expect(southListed).not.toContain(id);
  });

  it("filters by status and sorts by createdAt", async () => {
    const queued = (await (
      await t.request(`${path}?status=queued&pageSize=100`, { token: north, school: 1 })
    ).json()) as {
      data: Process[];
    };
    expect(queued.data.length).toBeGreaterThan(0);
    expect(queued.data.every((p) => p.status === "queued")).toBe(true);
    const failed = (await (
      await t.request(`${path}?status=failed&pageSize=100`, { token: north, school: 1 })
    ).json()) as {
      data: Process[];
    };
    expect(failed.data.every((p) => p.status === "failed")).toBe(true);
    const asc = (await (
      await t.request(`${path}?sort=createdAt&pageSize=100`, { token: north, school: 1 })
    ).json()) as {
      data: Process[];
    };
    const times = asc.data.map((p) => p.createdAt);
    expect([...times].sort()).toEqual(times);
  });

  it.each([["?status=cancelled"], ["?sort=entity"], ["?pageSize=0"], ["?page=-1"], ["?entity=students"]])(
    "400 for the query %s",
    async (query) => {
      const res = await t.request(`${path}${query}`, { token: north, school: 1 });
      expect(res.status).toBe(400);
      await problem(res);
    },
  );

  it("another school's process is a 404 for every operation", async () => {
    const id = southIds[0];
    for (const init of [
      { method: "GET" },
      { method: "PUT", body: { status: "queued" } },
      { method: "DELETE" },
    ] as const) {
      const res = await t.request(`${path}/${id}`, { ...init, token: north, school: 1 });
      expect(res.status).toBe(404);
      expect((await problem(res)).detail).toBe(`Bulk process ${id} not found`);
    }
    expect((await read(id as number, 2)).status).toBe("queued");
  });

  it.each([["abc"], ["0"], ["1e3x"]])("400 for the id %s", async (id) => {
    const res = await t.request(`${path}/${id}`, { token: north, school: 1 });
    expect(res.status).toBe(400);
    expect((await problem(res)).errors?.[0]?.path).toBe("id");
  });
});

describe("the bulk consumer (the Worker's queue handler)", () => {
  it("a file that was never uploaded: the process fails with a clear error", async () => {
    const { process, doc } = await start(1);
    const result = await deliver([{ id: `missing-${process.id}`, body: { bulkProcessId: process.id, schoolId: 1 } }]);
    expect(result.explicitAcks).toEqual([`missing-${process.id}`]);
    expect(result.retryMessages).toEqual([]);
    const after = await read(process.id);
    expect(after).toMatchObject({
      status: "failed",
      errors: [{ row: 0, message: `Uploaded file ${doc.slug} not found in storage` }],
      totalRows: 0,
      processedRows: 0,
    });
    expect(after.startedAt).not.toBeNull();
    expect(after.finishedAt).not.toBeNull();
  });

  it("an uploaded file: no importer exists yet, so it fails saying so (no pretend import)", async () => {
    const { process, doc } = await start(1, "students");
    await env.DOCUMENTS.put(doc.slug, "PK fake spreadsheet bytes", {
      httpMetadata: { contentType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" },
    });
    const result = await deliver([{ id: `present-${process.id}`, body: { bulkProcessId: process.id, schoolId: 1 } }]);
    expect(result.explicitAcks).toEqual([`present-${process.id}`]);
    expect(await read(process.id)).toMatchObject({
      status: "failed",
      errors: [{ row: 0, message: "No importer for students yet" }],
    });
  });

  it("an import that throws is failed with the reason, never left processing; its message is acked and not run again", {
    timeout: 30_000,
  }, async () => {
    const { process, doc } = await start(1, "teachers");
    await env.DOCUMENTS.put(doc.slug, "bytes");
    // The dispatcher the Worker runs, with a store whose reads fail after the existence check.
    const deps = {
      ...t.deps,
      storage: {
        ...t.deps.storage,
        head: (key: string) => env.DOCUMENTS.head(key),
        get: () => Promise.reject(new Error("R2 read failed")),
      },
    };
    const body = { bulkProcessId: process.id, schoolId: 1 };
    const run = async (id: string) => {
      const batch = createMessageBatch("school-bulk", [{ id, body, timestamp: new Date(), attempts: 1 }]);
      await handleQueue(deps, batch);
      return getQueueResult(batch, createExecutionContext());
    };
    const result = await run(`throws-${process.id}`);
    expect(result.explicitAcks).toEqual([`throws-${process.id}`]);
    expect(result.retryMessages).toEqual([]);
    const failed = await read(process.id);
    expect(failed).toMatchObject({
      status: "failed",
      errors: [{ row: 0, message: "The import stopped unexpectedly; queue it again" }],
    });
    expect(failed.finishedAt).not.toBeNull();
    await run(`throws-${process.id}`);
    expect(await read(process.id)).toEqual(failed);
  });

  it("redelivery changes nothing: the same message id, or a new message for the same process", async () => {
    const { process } = await start(1);
    const body = { bulkProcessId: process.id, schoolId: 1 };
    await deliver([{ id: `first-${process.id}`, body }]);
    const done = await read(process.id);
    expect(done.status).toBe("failed");

    const again = await deliver([{ id: `first-${process.id}`, body }]);
    expect(again.explicitAcks).toEqual([`first-${process.id}`]);
    expect(await read(process.id)).toEqual(done);

    const other = await deliver([{ id: `second-${process.id}`, body }]);
    expect(other.explicitAcks).toEqual([`second-${process.id}`]);
    expect(await read(process.id)).toEqual(done);

    // The message that ran the process is on record, once; the one that found it taken is not.
    const receipts = await t.db
      .select()
      .from(queueReceipts)
      .where(inArray(queueReceipts.key, [`first-${process.id}`, `second-${process.id}`]));
    expect(receipts.map((r) => [r.key, r.queue])).toEqual([[`first-${process.id}`, "school-bulk"]]);
  });

  it("two copies of a message in one batch run the process once", async () => {
    const { process, doc } = await start(1);
    await env.DOCUMENTS.put(doc.slug, "bytes");
    const body = { bulkProcessId: process.id, schoolId: 1 };
    const result = await deliver([
      { id: `dup-a-${process.id}`, body },
      { id: `dup-b-${process.id}`, body },
    ]);
    expect(result.explicitAcks.sort()).toEqual([`dup-a-${process.id}`, `dup-b-${process.id}`]);
    expect((await read(process.id)).errors).toHaveLength(1);
  });

  it("a message naming another school's process does nothing", async () => {
    const { process } = await start(1);
    const result = await deliver([
      { id: `wrong-school-${process.id}`, body: { bulkProcessId: process.id, schoolId: 2 } },
    ]);
    expect(result.explicitAcks).toEqual([`wrong-school-${process.id}`]);
    expect(await read(process.id)).toEqual(process);
  });

  it("malformed messages and deleted processes are acked and do nothing", async () => {
    const { process } = await start(1);
    const del = await t.request(`${path}/${process.id}`, { method: "DELETE", token: north, school: 1 });
    expect(del.status).toBe(204);
    const result = await deliver([
      { id: "bad-1", body: "not an object" },
      { id: "bad-2", body: { bulkProcessId: "1", schoolId: 1 } },
      { id: "bad-3", body: { bulkProcessId: 1, schoolId: 1, extra: true } },
      { id: `deleted-${process.id}`, body: { bulkProcessId: process.id, schoolId: 1 } },
    ]);
    expect(result.explicitAcks.sort()).toEqual(["bad-1", "bad-2", "bad-3", `deleted-${process.id}`].sort());
    expect(result.retryMessages).toEqual([]);
    const rows = await t.db.select().from(bulkProcesses).where(eq(bulkProcesses.id, process.id));
    expect(rows).toHaveLength(0);
  });

  it("end to end: POST through the real queue, consumed by the Worker", { timeout: 30_000 }, async () => {
    // The real queue, which no other test sends to (test/helpers.ts holds the test apps' imports).
    const real = makeTestApp({ queues: { bulk: env.BULK_QUEUE } });
    const doc = await uploadRecord(1);
    const res = await real.request(path, {
      method: "POST",
      token: north,
      school: 1,
      body: { entity: "administrative-staff", documentId: doc.id },
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as Process;
    await vi.waitFor(
      async () => {
        const row = await read(id);
        // Should the message never come: is it still in the queue (docs/architecture.md "The suite's time")?
        const { backlogCount } = await env.BULK_QUEUE.metrics();
        expect(row.status, `messages waiting in the queue: ${backlogCount}`).toBe("failed");
        expect(row.errors).toEqual([{ row: 0, message: `Uploaded file ${doc.slug} not found in storage` }]);
      },
      { timeout: 25_000, interval: 500 },
    );
  });
});

describe("update (PUT): queue a failed process again", () => {
  async function failed() {
    const { process } = await start(1);
    await deliver([{ id: `fail-${process.id}`, body: { bulkProcessId: process.id, schoolId: 1 } }]);
    expect((await read(process.id)).status).toBe("failed");
    return process.id;
  }

  it("failed -> queued: errors and times reset, a new message sent, and it runs again", async () => {
    const id = await failed();
    t.clock.advance(30);
    const before = sent.length;
    const res = await t.request(`${path}/${id}`, {
      method: "PUT",
      token: north,
      school: 1,
      body: { status: "queued" },
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect(sent.slice(before)).toEqual([{ bulkProcessId: id, schoolId: 1 }]);
    expect(await read(id)).toMatchObject({
      status: "queued",
      errors: [],
      startedAt: null,
      finishedAt: null,
      updatedAt: t.clock.now().toISOString(),
    });
    await deliver([{ id: `rerun-${id}`, body: { bulkProcessId: id, schoolId: 1 } }]);
    expect((await read(id)).status).toBe("failed");
  });

  it("409 unless the process failed; 404 for an unknown one", async () => {
    const { process } = await start(1);
    const queued = await t.request(`${path}/${process.id}`, {
      method: "PUT",
      token: north,
      school: 1,
      body: { status: "queued" },
    });
    expect(queued.status).toBe(409);
    expect((await problem(queued)).detail).toBe(
      `Bulk process ${process.id} is queued; only a failed process can be queued again`,
    );
    // As the consumer leaves it mid-run.
    await t.db.update(bulkProcesses).set({ status: "processing" }).where(eq(bulkProcesses.id, process.id));
    const processing = await t.request(`${path}/${process.id}`, {
      method: "PUT",
      token: north,
      school: 1,
      body: { status: "queued" },
    });
    expect(processing.status).toBe(409);
    await problem(processing);
    const unknown = await t.request(`${path}/999999`, {
      method: "PUT",
      token: north,
      school: 1,
      body: { status: "queued" },
    });
    expect(unknown.status).toBe(404);
    await problem(unknown);
  });

  it("when the queue is down: 503 and the process stays failed with the reason", async () => {
    const id = await failed();
    const res = await down.request(`${path}/${id}`, {
      method: "PUT",
      token: north,
      school: 1,
      body: { status: "queued" },
    });
    expect(res.status).toBe(503);
    await problem(res);
    expect(await read(id)).toMatchObject({
      status: "failed",
      errors: [{ row: 0, message: "Could not be queued: the bulk queue is unavailable" }],
    });
  });

  it.each([
    ["an empty object", {}],
    ["another status", { status: "completed" }],
    ["cancelled", { status: "cancelled" }],
    ["an unknown field", { status: "queued", totalRows: 10 }],
    ["a documentId", { documentId: 2 }],
  ])("400 for %s", async (_, body) => {
    const id = await failed();
    const res = await t.request(`${path}/${id}`, { method: "PUT", token: north, school: 1, body });
    expect(res.status).toBe(400);
    await problem(res);
    expect((await read(id)).status).toBe("failed");
  });

  it("400 without a body", async () => {
    const id = await failed();
    const res = await t.request(`${path}/${id}`, { method: "PUT", token: north, school: 1 });
    expect(res.status).toBe(400);
    await problem(res);
  });
});

describe("delete", () => {
  it("deletes a queued or finished process (204), then it is gone", async () => {
    const { process } = await start(1);
    const res = await t.request(`${path}/${process.id}`, { method: "DELETE", token: north, school: 1 });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await t.request(`${path}/${process.id}`, { token: north, school: 1 })).status).toBe(404);

    const { process: other } = await start(1);
    await deliver([{ id: `del-${other.id}`, body: { bulkProcessId: other.id, schoolId: 1 } }]);
    expect((await t.request(`${path}/${other.id}`, { method: "DELETE", token: north, school: 1 })).status).toBe(204);
  });

  it("refuses a process that is running (409) and keeps it", async () => {
    const { process } = await start(1);
    await t.db.update(bulkProcesses).set({ status: "processing" }).where(eq(bulkProcesses.id, process.id));
    const res = await t.request(`${path}/${process.id}`, { method: "DELETE", token: north, school: 1 });
    expect(res.status).toBe(409);
    expect((await problem(res)).detail).toBe(
      `Bulk process ${process.id} is processing; delete it once it has finished`,
    );
    expect((await read(process.id)).status).toBe("processing");
  });

  it("404 for an unknown id, 403 without bulk-process.write", async () => {
    const unknown = await t.request(`${path}/999999`, { method: "DELETE", token: north, school: 1 });
    expect(unknown.status).toBe(404);
    await problem(unknown);
    const { process } = await start(1);
    const reader = await t.token(DEMO.northAdmin.id, { 1: ["bulk-process.read"] });
    const res = await t.request(`${path}/${process.id}`, { method: "DELETE", token: reader, school: 1 });
    expect(res.status).toBe(403);
    await problem(res);
  });
});

describe("conformance fixture", () => {
  it("makes a failed process in each school that PUT queues again", async () => {
    const fixture = FIXTURES["/api/v1/bulk-process"];
    for (const [school, token] of [
      [1, north],
      [2, south],
    ] as const) {
      const id = (await fixture?.create(t, school)) as number;
      expect((await read(id, school)).status).toBe("failed");
      const body = fixture?.bodies?.updateBulkProcess;
      expect((await t.request(`${path}/${id}`, { method: "PUT", token, school, body })).status).toBe(204);
      expect((await t.request(`${path}/${id}`, { method: "DELETE", token, school })).status).toBe(204);
    }
  });
});

describe("cron sweep of bulk processes", () => {
  it("fails processes stuck in processing, keeps recent ones, prunes old receipts, and is safe to rerun", async () => {
    const s = makeTestApp();
    const [doc] = await s.db
      .insert(documents)
      .values(withSearch(documents, { schoolId: 1, name: "sweep.xlsx", slug: "1/documents/sweep.xlsx" }))
      .returning();
    if (!doc) throw new Error("no document");
    const at = (minutesAgo: number) => new Date(s.clock.now().getTime() - minutesAgo * 60_000).toISOString();
    const rows = await s.db
      .insert(bulkProcesses)
      .values([
        { schoolId: 1, entity: "students", documentId: doc.id, status: "processing", startedAt: at(31) },
        { schoolId: 1, entity: "students", documentId: doc.id, status: "processing", startedAt: at(5) },
        { schoolId: 1, entity: "students", documentId: doc.id, status: "queued" },
      ])
      .returning({ id: bulkProcesses.id });
    await s.db.insert(queueReceipts).values([
      { key: "old-receipt", queue: "school-bulk", createdAt: at(8 * 24 * 60) },
      { key: "new-receipt", queue: "school-bulk", createdAt: at(60) },
    ]);

    expect(await sweepBulkProcesses(s.deps)).toBe("1 stuck bulk processes failed, 1 queue receipts pruned");
    const after = await s.db
      .select()
      .from(bulkProcesses)
      .where(
        inArray(
          bulkProcesses.id,
          rows.map((r) => r.id),
        ),
      );
    expect(after.map((r) => r.status)).toEqual(["failed", "processing", "queued"]);
    const [failed] = after;
    expect(failed?.errors[0]?.message).toMatch(/Stopped without finishing within 30 minutes/);
    const receipts = await s.db.select({ key: queueReceipts.key }).from(queueReceipts);
    expect(receipts.map((r) => r.key)).toContain("new-receipt");
    expect(receipts.map((r) => r.key)).not.toContain("old-receipt");

    s.clock.advance(60);
    expect(await sweepBulkProcesses(s.deps)).toBe("0 stuck bulk processes failed, 0 queue receipts pruned");
    const again = await s.db
      .select()
      .from(bulkProcesses)
      .where(eq(bulkProcesses.id, failed?.id ?? 0));
    expect(again[0]?.updatedAt).toBe(failed?.updatedAt);
  });
});
