/**
 * Moving a school between databases (docs/scaling.md "Moving a school"): demo school 2, with
 * students, families and their parents, a route, audit rows and a dismissal day, moved from `DB`
 * to `DB_SHARD_1` and back through `POST /api/v1/school/{id}/move`: every row and id the same,
 * nothing left where it was, the same answers before and after; its writes paused while it moves
 * (503 with Retry-After; reads and other schools go on); a failure midway leaves it where it was.
 */
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { taskReminders } from "../src/db/schema/task";
import { forgetSchool, MAP_TTL_MS } from "../src/db/shards";
import { generateFixedExitPermissions } from "../src/modules/exit-permission/fixed";
import { sendDueReminders } from "../src/modules/task/reminders";
import { fixedAutoPickup } from "./fixtures/modules/exit-permission";
import { fixtureReminder } from "./fixtures/modules/task";
import { freshStorage } from "./fresh-storage";
import { DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const SHARD = "DB_SHARD_1";
const DATE = "2026-11-23";

const superAdmin = (t: TestApp) => t.token(DEMO.superAdmin.id, {}, true);

/** The tables of a school's rows: those with a `school_id` (the platform's shard map aside), and the roles' grants. */
async function tablesOf(db: D1Database) {
  const rows = await db
    .prepare(
      `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c
       WHERE m.type = 'table' AND c.name = 'school_id' AND m.name <> 'school_shard' AND m.name NOT LIKE '\\_cf\\_%' ESCAPE '\\'`,
    )
    .all<{ name: string }>();
  const where = new Map(rows.results.map((r) => [r.name, "school_id = ?"]));
  where.set("role_permission", "role_id IN (SELECT id FROM role WHERE school_id = ?)");
  return where;
}

/** Every row of `school` in `db`, per table (as JSON texts, sorted; tables without rows left out). */
async function rowsOf(db: D1Database, school: number): Promise<Record<string, string[]>> {
  const all: Record<string, string[]> = {};
  for (const [table, where] of await tablesOf(db)) {
    const rows = await db.prepare(`SELECT * FROM "${table}" WHERE ${where}`).bind(school).all();
    if (rows.results.length > 0) all[table] = rows.results.map((r) => JSON.stringify(r)).sort();
  }
  return all;
}

/** What the API answers about the school: the reads its staff make. */
async function reads(t: TestApp, token: string) {
  const paths = [
    "/api/v1/student?pageSize=100",
    "/api/v1/family?pageSize=100",
    "/api/v1/parent?pageSize=100",
    "/api/v1/route?pageSize=100",
    "/api/v1/audit-log?pageSize=100",
    "/api/v1/family/6001",
    `/api/v1/dismissal/release?date=${DATE}`,
  ];
  const answers: Record<string, unknown> = {};
  for (const path of paths) {
    const res = await t.request(path, { token, school: SOUTH });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    answers[path] = await res.json();
  }
  return answers;
}

const move = async (t: TestApp, to: string, school = SOUTH) =>
  t.request(`/api/v1/school/${school}/move`, { method: "POST", token: await superAdmin(t), body: { to } });

const mapRow = (school = SOUTH) =>
  env.DB.prepare("SELECT binding, paused_until, moving_from, moving_to FROM school_shard WHERE school_id = ?")
    .bind(school)
    .first();

/** A family of school `school` through the API: a write. */
const addFamily = (t: TestApp, token: string, school: number, name: string) =>
  t.request("/api/v1/family", { method: "POST", token, school, body: { familyNumber: `MV-${name}`, name } });

describe("moving a school between databases", () => {
  let original: Record<string, string[]>;

  beforeAll(async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    // The demo's school 2 lives on the shard (seed/demo.sql), where its triggers' rows already have
    // ids of the shard's range (it could not move below it: the 422 below): this file starts from
    // the demo loaded with school 2 on `DB`, and moves it to the shard and back.
    await freshStorage(env.TEST_SEED.replace(/^ {2}\(2, 'DB_SHARD_1', /m, "  (2, 'DB', "));
    expect(await mapRow()).toMatchObject({ binding: "DB" });
    // A route (and its transport), written through the API: audit rows with them.
    const on = await t.request("/api/v1/application-module/school/transport/enabled", {
      method: "PUT",
      token,
      school: SOUTH,
      body: { enabled: true },
    });
    expect(on.status, await on.clone().text()).toBeLessThan(300);
    const transport = await t.request("/api/v1/transport", {
      method: "POST",
      token,
      school: SOUTH,
      body: { name: "Bus South", seats: 40 },
    });
    expect(transport.status, await transport.clone().text()).toBe(201);
    const route = await t.request("/api/v1/route", {
      method: "POST",
      token,
      school: SOUTH,
      body: {
        name: "South Route",
        transportId: ((await transport.json()) as { id: number }).id,
        direction: "home",
        weekdays: [1],
        stops: [{ name: "School gate", time: "15:00" }],
      },
    });
    expect(route.status, await route.clone().text()).toBe(201);
    // A dismissal day: a parent's "I'm here" and the release to them at the gate.
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO dismissal_arrival (school_id, date, student_id, user_id, status, called_at, called_by, created_at, updated_at)
         VALUES (2, ?, 6001, 1116, 'called', ?, 5, ?, ?)`,
      ).bind(DATE, `${DATE}T20:00:00.000Z`, `${DATE}T19:59:00.000Z`, `${DATE}T20:00:00.000Z`),
      env.DB.prepare(
        `INSERT INTO dismissal_release (school_id, date, student_id, collector_kind, collector_id, collector_name, method, released_by, released_at, created_at, updated_at)
         VALUES (2, ?, 6001, 'guardian', 18, 'A parent', 'list', 5, ?, ?, ?)`,
      ).bind(DATE, `${DATE}T20:05:00.000Z`, `${DATE}T20:05:00.000Z`, `${DATE}T20:05:00.000Z`),
    ]);
    original = await rowsOf(env.DB, SOUTH);
    for (const table of [
      "student",
      "family",
      "parent",
      "route",
      "audit_log",
      "dismissal_release",
      "dismissal_arrival",
    ]) {
      expect(original[table]?.length, table).toBeGreaterThan(0);
    }
  });

  it("moves to the shard and back: every row and id the same, nothing left behind, the same answers", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const before = await reads(t, token);

    const res = await move(t, SHARD);
    expect(res.status, await res.clone().text()).toBe(200);
    const report = (await res.json()) as { moved: boolean; rows: Record<string, number> };
    expect(report).toMatchObject({ moved: true, source: "DB", target: SHARD });
    expect(report.rows).toEqual(Object.fromEntries(Object.entries(original).map(([k, v]) => [k, v.length])));
    expect(await rowsOf(env.DB_SHARD_1, SOUTH)).toEqual(original);
    expect(await rowsOf(env.DB, SOUTH)).toEqual({});
    expect(await mapRow()).toEqual({ binding: SHARD, paused_until: null, moving_from: null, moving_to: null });
    // The anchors: the school's row, whole, and the people its rows name.
    expect(await env.DB_SHARD_1.prepare("SELECT * FROM school WHERE id = 2").first()).toEqual(
      await env.DB.prepare("SELECT * FROM school WHERE id = 2").first(),
    );
    expect(await env.DB_SHARD_1.prepare("SELECT * FROM user WHERE id = 1116").first()).toEqual(
      await env.DB.prepare("SELECT * FROM user WHERE id = 1116").first(),
    );
    expect(await reads(t, token)).toEqual(before);

    // Moving it where it is does nothing.
    const again = await move(t, SHARD);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ moved: false, rows: {} });

    const back = await move(t, "DB");
    expect(back.status, await back.clone().text()).toBe(200);
    expect(await back.json()).toMatchObject({ moved: true, source: SHARD, target: "DB" });
    expect(await rowsOf(env.DB, SOUTH)).toEqual(original);
    expect(await rowsOf(env.DB_SHARD_1, SOUTH)).toEqual({});
    expect(await env.DB_SHARD_1.prepare("SELECT id FROM school WHERE id = 2").first()).toBeNull();
    expect(await reads(t, token)).toEqual(before);
    // The moves' own audit rows, in the platform's trail.
    const trail = await env.DB.prepare(
      "SELECT changes FROM audit_log WHERE entity = 'school' AND record_id = 2 AND action = 'move' ORDER BY id",
    ).all<{ changes: string }>();
    expect(trail.results.map((r) => JSON.parse(r.changes))).toEqual([
      { database: { old: "DB", new: SHARD } },
      { database: { old: SHARD, new: "DB" } },
    ]);
  });

  it("a failure midway leaves the school where it was, whole and unpaused; run again, the move completes", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const before = await rowsOf(env.DB, SOUTH);
    // The target refuses the school's routes.
    await env.DB_SHARD_1.prepare(
      "CREATE TRIGGER refuse_routes BEFORE INSERT ON route BEGIN SELECT RAISE(ABORT, 'refused'); END",
    ).run();
    const failed = await move(t, SHARD);
    expect(failed.status, await failed.clone().text()).toBe(500);
    expect((await problem(failed)).detail).toContain("stays on DB");
    expect(await rowsOf(env.DB, SOUTH)).toEqual(before);
    expect(await rowsOf(env.DB_SHARD_1, SOUTH)).toEqual({});
    expect(await env.DB_SHARD_1.prepare("SELECT id FROM school WHERE id = 2").first()).toBeNull();
    expect(await mapRow()).toEqual({ binding: "DB", paused_until: null, moving_from: null, moving_to: null });
    const write = await addFamily(t, token, SOUTH, "after-failure");
    expect(write.status, await write.clone().text()).toBe(201);

    await env.DB_SHARD_1.prepare("DROP TRIGGER refuse_routes").run();
    const whole = await rowsOf(env.DB, SOUTH);
    const res = await move(t, SHARD);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await rowsOf(env.DB_SHARD_1, SOUTH)).toEqual(whole);
    expect(await rowsOf(env.DB, SOUTH)).toEqual({});
    const back = await move(t, "DB");
    expect(back.status, await back.clone().text()).toBe(200);
  });

  it("pauses the school's writes while it moves (503, Retry-After), its reads and other schools going on", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const seen: Record<string, unknown>[] = [];
    // The move waits out the isolates' copies of the map by the clock: the checks run in its first wait.
    const wait = t.clock.wait.bind(t.clock);
    t.clock.wait = async (ms: number) => {
      await wait(ms);
      if (seen.length > 0) return;
      const write = await addFamily(t, token, SOUTH, "paused");
      const state = await t.request(`/api/v1/school/${SOUTH}/shard`, { token });
      seen.push({
        write: write.status,
        retryAfter: write.headers.get("retry-after"),
        type: write.headers.get("content-type"),
        problem: await problem(write),
        read: (await t.request("/api/v1/family?pageSize=5", { token, school: SOUTH })).status,
        other: (await addFamily(t, token, NORTH, "north-during-move")).status,
        state: await state.json(),
      });
    };
    const res = await move(t, SHARD);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(seen).toEqual([
      {
        write: 503,
        retryAfter: "10",
        type: "application/problem+json",
        problem: expect.objectContaining({ status: 503, detail: expect.stringContaining("School 2 is moving") }),
        read: 200,
        other: 201,
        state: { schoolId: SOUTH, binding: "DB", pausedUntil: expect.any(String), movingTo: SHARD },
      },
    ]);
    // Unpaused where it now is.
    const after = await addFamily(t, token, SOUTH, "after-move");
    expect(after.status, await after.clone().text()).toBe(201);
    expect(await (await t.request(`/api/v1/school/${SOUTH}/shard`, { token })).json()).toEqual({
      schoolId: SOUTH,
      binding: SHARD,
      pausedUntil: null,
      movingTo: null,
    });
    t.clock.wait = wait;

    // Its new rows are numbered in the shard's range: it cannot move back to DB, whose numbering
    // would then continue in the shard's range (SQLite numbers after the largest id of a table).
    const made = (await after.json()) as { id: number };
    expect(made.id).toBeGreaterThan(2 ** 40);
    const back = await move(t, "DB");
    expect(back.status, await back.clone().text()).toBe(422);
    expect((await problem(back)).detail).toContain("above DB's range");
    expect(await mapRow()).toEqual({ binding: SHARD, paused_until: null, moving_from: null, moving_to: null });
    expect((await addFamily(t, token, SOUTH, "still-on-shard")).status).toBe(201);
  });

  it("an isolate sees a school's pause within the map's expiry, and its end likewise", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    expect(MAP_TTL_MS).toBe(10_000);
    // This isolate reads school 1's map row at its next statement, and keeps it 10 s.
    forgetSchool(NORTH);
    expect((await addFamily(t, token, NORTH, "ttl-before")).status).toBe(201);
    const until = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    await env.DB.prepare(
      `INSERT INTO school_shard (school_id, binding, paused_until) VALUES (1, 'DB', ?)
       ON CONFLICT(school_id) DO UPDATE SET paused_until = excluded.paused_until`,
    )
      .bind(until)
      .run();
    t.clock.advance(9);
    expect((await addFamily(t, token, NORTH, "ttl-kept")).status, "its copy of the map, 9 s old").toBe(201);
    t.clock.advance(1);
    const paused = await addFamily(t, token, NORTH, "ttl-paused");
    expect(paused.status, "read again after 10 s").toBe(503);
    expect(paused.headers.get("retry-after")).toBe("10");
    await env.DB.prepare("UPDATE school_shard SET paused_until = NULL WHERE school_id = 1").run();
    expect((await addFamily(t, token, NORTH, "ttl-still")).status, "its copy says paused").toBe(503);
    t.clock.advance(10);
    expect((await addFamily(t, token, NORTH, "ttl-after")).status).toBe(201);
  });

  it("refuses a database that is not bound, and a school that does not exist", async () => {
    const t = makeTestApp();
    const unbound = await move(t, "DB_SHARD_9");
    expect(unbound.status).toBe(422);
    expect((await problem(unbound)).detail).toContain("DB_SHARD_9");
    expect((await move(t, SHARD, 999_999)).status).toBe(404);
    // Not paused (the demo schools have no map row: a school without one is on DB).
    expect((await mapRow())?.paused_until ?? null).toBeNull();
  });
});

describe("the jobs while a school of their database is paused for a move", () => {
  beforeAll(async () => {
    // Both demo schools on `DB`, as above: each job's one run goes over both.
    await freshStorage(env.TEST_SEED.replace(/^ {2}\(2, 'DB_SHARD_1', /m, "  (2, 'DB', "));
  });

  const pause = async (paused: boolean, t: TestApp) => {
    const until = paused ? new Date(t.clock.now().getTime() + 3_600_000).toISOString() : null;
    await env.DB.prepare("UPDATE school_shard SET paused_until = ? WHERE school_id = 2").bind(until).run();
    forgetSchool(SOUTH);
  };

  it("the daily fixed permissions: the other schools' days are made, the paused school's at the next run", async () => {
    const t = makeTestApp();
    const north = (await fixedAutoPickup(t, NORTH)).days;
    const south = (await fixedAutoPickup(t, SOUTH)).days;
    const [northBefore, southBefore] = [await north(), await south()];
    expect(northBefore).toBeGreaterThan(0);
    expect(southBefore).toBeGreaterThan(0);
    // Two weeks on, the job makes two more weeks of days.
    t.clock.advance(14 * 86_400);
    await pause(true, t);
    try {
      await generateFixedExitPermissions(t.deps);
      expect(await north(), "the other school's days, made").toBeGreaterThan(northBefore);
      expect(await south(), "the paused school's, not").toBe(southBefore);
    } finally {
      await pause(false, t);
    }
    await generateFixedExitPermissions(t.deps);
    expect(await south()).toBeGreaterThan(southBefore);
  });

  it("task reminders: the other schools' go out, and the run names the paused school, whose go at the next run", async () => {
    const t = makeTestApp();
    const reminderIn = async (school: number) => {
      const id = await fixtureReminder(t, school, 3600);
      return async () => (await t.db.select().from(taskReminders).where(eq(taskReminders.id, id)))[0]?.status;
    };
    // The paused school's reminder is due first: the run meets it before the other school's.
    const south = await reminderIn(SOUTH);
    t.clock.advance(60);
    const north = await reminderIn(NORTH);
    t.clock.advance(2 * 3600);
    await pause(true, t);
    try {
      await expect(sendDueReminders(t.deps)).rejects.toThrow(
        /^not done for school 2 \(School 2 is moving to another database[^)]*\): the next run does it$/,
      );
      expect(await north(), "the other school's reminder").toBe("sent");
      expect(await south(), "the paused school's").toBe("scheduled");
    } finally {
      await pause(false, t);
    }
    await sendDueReminders(t.deps);
    expect(await south()).toBe("sent");
  });
});
