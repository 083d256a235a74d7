import { z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { mountOperation } from "../src/app";
import { auditLog } from "../src/db/schema/audit-log";
import { BulkProcesses, bulkProcesses } from "../src/db/schema/bulk-process";
import { documents } from "../src/db/schema/document";
import { queueReceipts } from "../src/db/schema/jobs";
import { withSearch } from "../src/db/search";
import { m } from "../src/lib/message";
import { defineResource, RecordBase, timestamps } from "../src/lib/resource";
import { permissions } from "../src/modules/bulk-process/permissions";
import { countingTestApp, makeTestApp, problem, type TestApp } from "./helpers";

const probe = defineResource({
  name: "probeProcess",
  plural: "probeProcesses",
  label: m`Probe process`,
  path: "/test/probe-process",
  tag: "Operations",
  scope: "school",
  data: BulkProcesses.as("probe-process"),
  record: RecordBase.extend({ status: z.string(), totalRows: z.number() }),
  toRecord: (_ctx, row) => ({ ...timestamps(row), status: row.status, totalRows: row.totalRows }),
});

/** queued -> failed, refused (422) for a process of 10 rows or more; notes a receipt in the same batch. */
const cancel = probe.action({
  name: "cancel",
  access: permissions.write,
  from: { column: bulkProcesses.status, states: ["queued"] },
  rules: () => [
    { when: sql`${bulkProcesses.totalRows} < 10`, message: m`A process of 10 rows or more cannot be cancelled` },
  ],
  set: () => ({ status: "failed" as const }),
  also: (ctx, { id }) => [
    ctx.deps.db
      .insert(queueReceipts)
      .values({ key: `cancel-${id}`, queue: "probe", createdAt: ctx.deps.clock.now().toISOString() }),
  ],
});

let t: TestApp;
let admin: string;

beforeAll(async () => {
  t = makeTestApp();
  mountOperation(t.app, cancel);
  admin = await t.token(2, { 1: "all" });
});

/** A bulk process row in `school` (with its document), straight in the table. */
async function processIn(school: number, values: Partial<typeof bulkProcesses.$inferInsert> = {}) {
  const at = t.clock.now().toISOString();
  const [doc] = await t.db
    .insert(documents)
    .values(
      withSearch(documents, {
        schoolId: school,
        name: "f",
        slug: `${school}/documents/${crypto.randomUUID()}.xlsx`,
        createdAt: at,
        updatedAt: at,
      }),
    )
    .returning();
  const [row] = await t.db
    .insert(bulkProcesses)
    .values({ schoolId: school, entity: "students", documentId: doc?.id ?? 0, createdAt: at, updatedAt: at, ...values })
    .returning();
  if (!row) throw new Error("no row");
  return row.id;
}

const patch = (id: number | string, token = admin, school = 1) =>
  t.request(`/test/probe-process/${id}/cancel`, { method: "PATCH", token, school });

const auditRows = (id: number) =>
  t.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.entity, "probe-process"), eq(auditLog.recordId, id)));

describe("an action", () => {
  it("changes the state, answers 200 with the record, and writes its audit row and extra statements", async () => {
    const id = await processIn(1);
    const res = await patch(id);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id, status: "failed" });
    const [audit, ...more] = await auditRows(id);
    expect(more).toEqual([]);
    expect(audit).toMatchObject({ action: "cancel", actorType: "user", actorId: 2, schoolId: 1 });
    expect(JSON.parse(audit?.changes ?? "{}")).toMatchObject({ status: { old: "queued", new: "failed" } });
    const receipts = await t.db
      .select()
      .from(queueReceipts)
      .where(eq(queueReceipts.key, `cancel-${id}`));
    expect(receipts).toHaveLength(1);
  });

  it("tells 404 (not here) from 409 (wrong state) from 422 (a rule), and changes nothing", async () => {
    const theirs = await processIn(2);
    const done = await processIn(1, { status: "completed" });
    const big = await processIn(1, { totalRows: 50 });
    const cases: [number | string, number, string][] = [
      [987654, 404, "Probe process 987654 not found"],
      [theirs, 404, `Probe process ${theirs} not found`],
      [done, 409, `Probe process ${done} is completed; cancel needs it to be queued`],
      [big, 422, "A process of 10 rows or more cannot be cancelled"],
    ];
    for (const [id, status, detail] of cases) {
      const res = await patch(id);
      expect(res.status, String(id)).toBe(status);
      expect((await problem(res)).detail).toBe(detail);
    }
    for (const id of [theirs, done, big]) {
      expect(await auditRows(id)).toEqual([]);
      expect(
        await t.db
          .select()
          .from(queueReceipts)
          .where(eq(queueReceipts.key, `cancel-${id}`)),
      ).toEqual([]);
    }
    const [bigRow] = await t.db.select().from(bulkProcesses).where(eq(bulkProcesses.id, big));
    expect(bigRow?.status).toBe("queued");
  });

  it("lets exactly one of 20 concurrent callers win, with one audit row and one receipt", async () => {
    const id = await processIn(1);
    const results = await Promise.all(Array.from({ length: 20 }, () => patch(id)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    expect(await auditRows(id)).toHaveLength(1);
    expect(
      await t.db
        .select()
        .from(queueReceipts)
        .where(eq(queueReceipts.key, `cancel-${id}`)),
    ).toHaveLength(1);
  });

  it("rolls back the change and its audit row when an extra statement fails", async () => {
    const id = await processIn(1);
    // The receipt it would add exists already: the batch's unique violation undoes everything.
    await t.db
      .insert(queueReceipts)
      .values({ key: `cancel-${id}`, queue: "probe", createdAt: "2026-01-01T00:00:00.000Z" });
    const res = await patch(id);
    expect(res.status).toBe(409);
    const [row] = await t.db.select().from(bulkProcesses).where(eq(bulkProcesses.id, id));
    expect(row?.status).toBe("queued");
    expect(await auditRows(id)).toEqual([]);
  });
});

describe("nested paths", () => {
  const path = (year: number) => `/api/v1/school-configuration/${year}/school-holiday-cycle`;

  it("list only the parent's children, and 404 for a parent of another school or none", async () => {
    const token = await t.token(1, {}, true);
    const year = async (school: number) => {
      const res = await t.request("/api/v1/school-configuration", {
        method: "POST",
        token,
        school,
        body: { name: "Year", startDate: "2026-08-24", endDate: "2027-06-30" },
      });
      return ((await res.json()) as { id: number }).id;
    };
    const cycle = async (school: number, schoolConfigurationId: number, start: string) => {
      const res = await t.request("/api/v1/school-holiday-cycle", {
        method: "POST",
        token,
        school,
        body: { startHolidays: start, endHolidays: "2027-01-07T00:00:00Z", schoolConfigurationId },
      });
      return ((await res.json()) as { id: number }).id;
    };
    const [a, b, south] = [await year(1), await year(1), await year(2)];
    const inA = [await cycle(1, a, "2026-12-19T00:00:00Z"), await cycle(1, a, "2026-12-20T00:00:00Z")];
    await cycle(1, b, "2026-12-21T00:00:00Z");
    await cycle(2, south, "2026-12-22T00:00:00Z");

    const res = await t.request(path(a), { token: admin, school: 1 });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: { id: number }[]; total: number };
    expect(page.data.map((c) => c.id)).toEqual(inA);
    expect(page.total).toBe(2);

    for (const parent of [south, 987654]) {
      const other = await t.request(path(parent), { token: admin, school: 1 });
      expect(other.status).toBe(404);
      expect((await problem(other)).detail).toBe(`School configuration ${parent} not found`);
    }
  });
});

describe("round trips", () => {
  it("a create, an update and an action each make one D1 call, audit row included (a document delete two: it first looks for a bulk process using the file)", async () => {
    const counting = countingTestApp();
    const app = counting.t;
    mountOperation(app.app, cancel);
    const token = await app.token(2, { 1: "all" });
    const measure = async (run: () => Promise<Response>, status: number) => {
      const { res, calls } = await counting.measure(run);
      expect(res.status, await res.clone().text()).toBe(status);
      return calls;
    };
    const created = await app.request("/api/v1/documents", {
      method: "POST",
      token,
      school: 1,
      body: { name: "One trip", slug: `1/documents/${crypto.randomUUID()}.pdf` },
    });
    const { id } = (await created.json()) as { id: number };
    expect(
      await measure(
        () =>
          app.request("/api/v1/documents", {
            method: "POST",
            token,
            school: 1,
            body: { name: "x", slug: `1/documents/${crypto.randomUUID()}.pdf` },
          }),
        201,
      ),
    ).toBe(1);
    expect(
      await measure(
        () => app.request(`/api/v1/documents/${id}`, { method: "PUT", token, school: 1, body: { name: "y" } }),
        204,
      ),
    ).toBe(1);
    const processId = await processIn(1);
    expect(
      await measure(
        () => app.request(`/test/probe-process/${processId}/cancel`, { method: "PATCH", token, school: 1 }),
        200,
      ),
    ).toBe(1);
    expect(
      await measure(() => app.request(`/api/v1/documents/${id}`, { method: "DELETE", token, school: 1 }), 204),
    ).toBe(2);
  });
});
