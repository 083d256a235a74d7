/**
 * Schools over several databases (docs/scaling.md "Shards"): the tests run with two, `DB` (the
 * platform's, shard 0) and `DB_SHARD_1`. The shard map says where a school's rows are; the data
 * layer reads and writes them there and nowhere else; a new school is placed on the least-loaded
 * database that takes new schools.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Batch } from "../src/db/batch";
import { placeSchool } from "../src/db/placement";
import { openForNewSchools } from "../src/db/shards";
import { jobsFor, runScheduled } from "../src/jobs/scheduled";
import { jobCtx } from "../src/lib/context";
import { notify } from "../src/modules/notification/api";
import { fanOut } from "../src/modules/notification/fan-out";
import { deadWebhook } from "../src/modules/webhook/deliver";
import { freshStorage } from "./fresh-storage";
import { DEMO, makeTestApp, type TestApp } from "./helpers";
import { rowsOf, SHARD, schoolOnShard1 } from "./shard-kit";

const NORTH = 1;
const SOUTH = 2;

const superAdmin = (t: TestApp) => t.token(DEMO.superAdmin.id, {}, true);

describe("schools over two databases", () => {
  it("a school's rows are written to, and read from, its own database only", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const school = await schoolOnShard1(t);

    const family = async (on: number, name: string) => {
      const res = await t.request("/api/v1/family", {
        method: "POST",
        token,
        school: on,
        body: { familyNumber: `SH-${on}-${name}`, name },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return ((await res.json()) as { id: number }).id;
    };
    const theirs = await family(school, "Sharded");
    const ours = await family(NORTH, "Platform");
    // Each database's ids are its own range: a school keeps its ids wherever it moves.
    expect(theirs).toBeGreaterThan(2 ** 40);
    expect(ours).toBeLessThan(2 ** 40);

    // Each school's rows where the map says, and nowhere else.
    const one = await rowsOf(env.DB_SHARD_1, school);
    expect(one).toMatchObject({ family: 1, audit_log: 1 });
    expect(await rowsOf(env.DB, school)).toEqual({});
    expect(await rowsOf(env.DB_SHARD_1, NORTH)).toEqual({});
    const north = await env.DB.prepare("SELECT id FROM family WHERE id = ? AND school_id = ?")
      .bind(ours, NORTH)
      .first();
    expect(north).not.toBeNull();

    // Read back through the API: each from its own database; the other school's id is a 404.
    const get = (on: number, id: number) => t.request(`/api/v1/family/${id}`, { token, school: on });
    expect((await get(school, theirs)).status).toBe(200);
    expect((await get(NORTH, ours)).status).toBe(200);
    expect((await get(NORTH, theirs)).status).toBe(404);
    const list = await t.request("/api/v1/family", { token, school });
    expect(((await list.json()) as { data: { name: string }[] }).data.map((f) => f.name)).toEqual(["Sharded"]);

    // The answer's bookmark is the school's database's: sent back, the read starts there.
    const bookmark = (await get(school, theirs)).headers.get("x-d1-bookmark");
    expect(bookmark).toMatch(/^[0-9a-f]{8}-/);
    const again = await t.request(`/api/v1/family/${theirs}`, {
      token,
      school,
      headers: { "x-d1-bookmark": bookmark ?? "" },
    });
    expect(again.status).toBe(200);
  });

  it("a new school is placed on the least-loaded database that takes new schools", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    /** Creates a school through the API; its database by the map. */
    const create = async (app: TestApp, name: string) => {
      const res = await app.request("/api/v1/school", {
        method: "POST",
        token,
        body: { name, timeZone: "America/Mexico_City", levels: ["elementary"] },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const { id } = (await res.json()) as { id: number };
      const placed = await env.DB.prepare("SELECT binding FROM school_shard WHERE school_id = ?").bind(id).first();
      return { id, binding: (placed as { binding: string }).binding };
    };
    /** Schools on each database now (a school with no map row is on DB). */
    const loads = async () => {
      const row = await env.DB.prepare(
        `SELECT sum(coalesce(m.binding, 'DB') = 'DB') AS db, sum(m.binding = ?) AS shard
         FROM school s LEFT JOIN school_shard m ON m.school_id = s.id`,
      )
        .bind(SHARD)
        .first<{ db: number; shard: number }>();
      const counts: Record<string, number> = { DB: Number(row?.db ?? 0), [SHARD]: Number(row?.shard ?? 0) };
      return counts;
    };
    // Every database takes new schools by default, each going to the one with fewer schools (DB,
    // the first listed, on a tie): they alternate once the two hold as many.
    expect(openForNewSchools(t.deps)).toEqual(["DB", SHARD]);
    const placed: { id: number; binding: string; name: string }[] = [];
    for (const name of ["Placed A", "Placed B", "Placed C", "Placed D"]) {
      const load = await loads();
      const expected = (load[SHARD] ?? 0) < (load.DB ?? 0) ? SHARD : "DB";
      const school = await create(t, name);
      expect(school.binding, `${name} with ${JSON.stringify(load)}`).toBe(expected);
      placed.push({ ...school, name });
    }
    expect(new Set(placed.map((p) => p.binding))).toEqual(new Set(["DB", SHARD]));

    // A school placed on the shard works there from its first request: its anchor is there, its
    // rows are written there and nowhere else, its administrator reads them.
    const onShard = placed.find((p) => p.binding === SHARD) ?? { id: 0, name: "" };
    expect(await env.DB_SHARD_1.prepare("SELECT name FROM school WHERE id = ?").bind(onShard.id).first()).toEqual({
      name: onShard.name,
    });
    const family = await t.request("/api/v1/family", {
      method: "POST",
      token,
      school: onShard.id,
      body: { familyNumber: "PL-1", name: "Placed Family" },
    });
    expect(family.status, await family.clone().text()).toBe(201);
    const rows = (db: D1Database) =>
      db.prepare("SELECT count(*) AS n FROM family WHERE school_id = ?").bind(onShard.id).first<{ n: number }>();
    expect(await rows(env.DB_SHARD_1)).toEqual({ n: 1 });
    expect(await rows(env.DB)).toEqual({ n: 0 });
    const read = await t.request("/api/v1/family", { token, school: onShard.id });
    expect(((await read.json()) as { data: { name: string }[] }).data.map((f) => f.name)).toEqual(["Placed Family"]);

    // A database left out of NEW_SCHOOLS_ON takes no new school, however empty.
    const closed = makeTestApp({ config: { ...t.deps.config, newSchoolsOn: ["DB"] } });
    expect(openForNewSchools(closed.deps)).toEqual(["DB"]);
    expect((await create(closed, "Placed E")).binding).toBe("DB");
    expect((await create(closed, "Placed F")).binding).toBe("DB");

    // The least-loaded of the list given, whichever order: the first listed on a tie.
    const at = t.clock.now().toISOString();
    const place = async (name: string, open: string[]) => {
      const row = await env.DB.prepare(
        "INSERT INTO school (name, name_search, time_zone, levels, created_at, updated_at) VALUES (?, ?, 'UTC', '[]', ?, ?) RETURNING id",
      )
        .bind(name, name.toLowerCase(), at, at)
        .first<{ id: number }>();
      if (!row) throw new Error("no school");
      await t.db.batch([placeSchool(t.db, row.id, at, open)]);
      const m = await env.DB.prepare("SELECT binding FROM school_shard WHERE school_id = ?").bind(row.id).first();
      return (m as { binding: string }).binding;
    };
    const picks: string[] = [];
    for (let i = 0; i < 6; i++) {
      const open = i % 2 === 0 ? ["DB", SHARD] : [SHARD, "DB"];
      const load = await loads();
      const [first, second] = open as [string, string];
      const expected = (load[second] ?? 0) < (load[first] ?? 0) ? second : first;
      const picked = await place(`P${i}`, open);
      expect(picked, `with ${JSON.stringify(load)}, open ${open.join(", ")}`).toBe(expected);
      picks.push(picked);
    }
    expect(picks).toContain(SHARD);
    expect(picks).toContain("DB");
  });

  it("a cron run runs its jobs once per database, each recorded in that database's history", async () => {
    const t = makeTestApp();
    const cron = "*/5 * * * *";
    const count = async (db: D1Database) =>
      (await db.prepare("SELECT count(*) AS n FROM cron_history WHERE cron = ?").bind(cron).first<{ n: number }>())?.n;
    const [before, beforeShard] = [await count(env.DB), await count(env.DB_SHARD_1)];
    await runScheduled(t.deps, cron);
    const jobs = jobsFor(cron).length;
    expect(jobs).toBeGreaterThan(0);
    expect(await count(env.DB)).toBe((before ?? 0) + jobs);
    expect(await count(env.DB_SHARD_1)).toBe((beforeShard ?? 0) + jobs);
    const failed = await env.DB_SHARD_1.prepare(
      "SELECT job, detail FROM cron_history WHERE status <> 'completed'",
    ).all();
    expect(failed.results).toEqual([]);
  });
});

/** seed/demo.sql with demo school 2's map row naming the shard (its one line: docs/scaling.md "Shards"). */
const seedWithSchoolTwoOnTheShard = () => env.TEST_SEED.replace(/^ {2}\(2, 'DB', /m, `  (2, '${SHARD}', `);

/** This file's storage fresh again, the demo loaded with school 2 on the shard (the last tests of the file). */
async function schoolTwoOnTheShard() {
  const seed = seedWithSchoolTwoOnTheShard();
  expect(seed).toMatch(/^ {2}\(2, 'DB_SHARD_1', /m);
  await freshStorage(seed);
}

describe("demo school 2 on the shard (the demo seed split by school)", () => {
  it("demo school 2's rows are only in DB_SHARD_1, school 1's only in DB", async () => {
    await schoolTwoOnTheShard();
    // Table by table: every table with a `school_id` (the shard map, the platform's, left out).
    const north = await rowsOf(env.DB, NORTH);
    const south = await rowsOf(env.DB_SHARD_1, SOUTH);
    expect(Object.keys(north).length).toBeGreaterThan(10);
    expect(Object.keys(south).length).toBeGreaterThan(10);
    expect(south).toMatchObject({ role_user: expect.any(Number), family: 30, student: 50 });
    expect(await rowsOf(env.DB, SOUTH)).toEqual({});
    expect(await rowsOf(env.DB_SHARD_1, NORTH)).toEqual({});
    expect(await env.DB.prepare("SELECT binding FROM school_shard WHERE school_id = ?").bind(SOUTH).first()).toEqual({
      binding: SHARD,
    });

    // The anchors, by name: school 2's row, whole, in both; in the shard only the people school
    // 2's rows name, each the platform's row as it is.
    const schools = async (db: D1Database) => (await db.prepare("SELECT * FROM school ORDER BY id").all()).results;
    const [platformSchools, shardSchools] = [await schools(env.DB), await schools(env.DB_SHARD_1)];
    expect(shardSchools.filter((s) => s.id === SOUTH || s.id === NORTH)).toEqual(
      platformSchools.filter((s) => s.id === SOUTH),
    );
    const anchors = (await env.DB_SHARD_1.prepare("SELECT * FROM user ORDER BY id").all()).results;
    const members = (
      await env.DB_SHARD_1.prepare("SELECT DISTINCT user_id FROM role_user WHERE school_id = ? ORDER BY user_id")
        .bind(SOUTH)
        .all<{ user_id: number }>()
    ).results.map((r) => r.user_id);
    expect(anchors.map((u) => u.id)).toEqual(expect.arrayContaining(members));
    for (const user of anchors) {
      expect(await env.DB.prepare("SELECT * FROM user WHERE id = ?").bind(user.id).first()).toEqual(user);
    }
    // School 1's demo parent is no one school 2 names.
    expect(anchors.some((u) => u.id === 4)).toBe(false);
  });

  it("a fan-out in a school with notifications off marks its notification in the school's database", async () => {
    await schoolTwoOnTheShard();
    const t = makeTestApp();
    const shard = env.DB_SHARD_1;
    await shard
      .prepare(
        "UPDATE school_module SET enabled = 0 WHERE school_id = ? AND module_id = (SELECT id FROM application_module WHERE key = 'notifications')",
      )
      .bind(SOUTH)
      .run();
    const ctx = jobCtx(t.deps, "test", SOUTH);
    const sending = notify(ctx, {
      category: "general",
      title: "Off",
      body: "x",
      audience: { users: [DEMO.southAdmin.id] },
    });
    await new Batch(ctx).add(...sending.statements).commit();
    await fanOut(t.deps, { kind: "fan-out", key: sending.key, schoolId: SOUTH, after: 0 }, "fan-out-off");
    const row = await shard
      .prepare("SELECT fanned_out_at IS NOT NULL AS done FROM notification WHERE key = ?")
      .bind(sending.key)
      .first();
    expect(row).toEqual({ done: 1 });
  });

  it("a queue consumer's lone writes reach the school's database: a webhook delivery failed for good", async () => {
    await schoolTwoOnTheShard();
    const t = makeTestApp();
    const shard = env.DB_SHARD_1;
    const at = t.clock.now().toISOString();
    const id = async (statement: D1PreparedStatement) => (await statement.first<{ id: number }>())?.id ?? 0;
    const endpoint = await id(
      shard
        .prepare(
          "INSERT INTO webhook_endpoint (school_id, url, secret, event_types, created_at, updated_at) VALUES (?, 'https://hooks.example.org/south', 'x', '[]', ?, ?) RETURNING id",
        )
        .bind(SOUTH, at, at),
    );
    const message = await id(
      shard
        .prepare(
          "INSERT INTO webhook_message (school_id, msg_id, event_type, payload, created_at, updated_at) VALUES (?, 'msg_south', 'student.created', '{}', ?, ?) RETURNING id",
        )
        .bind(SOUTH, at, at),
    );
    const delivery = await id(
      shard
        .prepare(
          "INSERT INTO webhook_delivery (school_id, endpoint_id, message_id, status, created_at, updated_at) VALUES (?, ?, ?, 'pending', ?, ?) RETURNING id",
        )
        .bind(SOUTH, endpoint, message, at, at),
    );
    const body = { kind: "webhook", deliveryId: delivery, schoolId: SOUTH };
    await deadWebhook(t.deps, { id: "dead-1", body, attempts: 13 } as unknown as Message<unknown>);
    const row = await shard.prepare("SELECT status FROM webhook_delivery WHERE id = ?").bind(delivery).first();
    expect(row).toEqual({ status: "failed" });
  });
});
