/**
 * Cron history writes: the super-admin records a run by hand, corrects and deletes one; never a
 * running row (the dispatcher's until it ends: 409), and a school admin may only read.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { cronHistory } from "../src/db/schema/jobs";
import { grantsOf } from "../src/modules";
import { makeTestApp, problem } from "./helpers";

const path = "/api/v1/cron-history";

describe("cron history writes (super-admin)", () => {
  it("records, corrects and deletes a run that ended", async () => {
    const t = makeTestApp();
    const superAdmin = { token: await t.token(1, {}, true) };
    const created = await t.request(path, {
      method: "POST",
      ...superAdmin,
      body: {
        cron: "0 2 * * *",
        job: "generate-fixed-permissions",
        status: "failed",
        startedAt: "2026-11-23T02:00:00.000Z",
        detail: "Run by hand",
      },
    });
    expect(created.status).toBe(201);
    const run = (await created.json()) as { id: number; finishedAt: string };
    expect(run).toMatchObject({ status: "failed", finishedAt: "2026-11-23T02:00:00.000Z", detail: "Run by hand" });
    expect(
      (
        await t.request(`${path}/${run.id}`, {
          method: "PUT",
          ...superAdmin,
          body: { status: "completed", detail: null },
        })
      ).status,
    ).toBe(204);
    expect(await (await t.request(`${path}/${run.id}`, superAdmin)).json()).toMatchObject({
      status: "completed",
      detail: null,
    });
    expect((await t.request(`${path}/${run.id}`, { method: "DELETE", ...superAdmin })).status).toBe(204);
    expect((await t.request(`${path}/${run.id}`, superAdmin)).status).toBe(404);
  });

  it("a running row is a 409 on update and delete, and stays; a run cannot be recorded as running", async () => {
    const t = makeTestApp();
    const superAdmin = { token: await t.token(1, {}, true) };
    const at = t.clock.now().toISOString();
    const [row] = await t.db
      .insert(cronHistory)
      .values({
        cron: "*/5 * * * *",
        job: "sweep-notifications",
        status: "running",
        startedAt: at,
        createdAt: at,
        updatedAt: at,
      })
      .returning();
    const id = row?.id ?? 0;
    for (const init of [{ method: "PUT", body: { detail: "x" } }, { method: "DELETE" }]) {
      const res = await t.request(`${path}/${id}`, { ...init, ...superAdmin });
      expect(res.status, init.method).toBe(409);
      expect((await problem(res)).detail).toBe(`Cron run ${id} is running; only the dispatcher ends it`);
    }
    const [still] = await t.db.select().from(cronHistory).where(eq(cronHistory.id, id));
    expect(still).toEqual(row);
    const running = await t.request(path, {
      method: "POST",
      ...superAdmin,
      body: { cron: "*/5 * * * *", job: "sweep-notifications", status: "running", startedAt: at },
    });
    expect(running.status).toBe(400);
  });

  it("the school admin may read, not write", async () => {
    const t = makeTestApp();
    const admin = { token: await t.token(2, { 1: grantsOf("school-admin").map((p) => p.name) }), school: 1 };
    expect((await t.request(path, admin)).status).toBe(200);
    const res = await t.request(path, {
      method: "POST",
      ...admin,
      body: { cron: "0 2 * * *", job: "x", status: "completed", startedAt: "2026-11-23T02:00:00.000Z" },
    });
    expect(res.status).toBe(403);
  });
});
