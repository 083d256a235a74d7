/**
 * Schools over several databases (docs/scaling.md "Shards"), the platform's side: a school on
 * `DB_SHARD_1` keeps its anchors there (its `school` row, custom permissions), the sign-in and a
 * user's memberships read every database holding the user's schools, the audit trail across
 * schools merges each database's, pushes find their devices in the platform database, and the
 * jobs act on the shard's schools.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { forgetShards } from "../src/db/shards";
import { runScheduled } from "../src/jobs/scheduled";
import { verifyAccessToken } from "../src/lib/tokens";
import { DEMO, makeTestApp, type TestApp } from "./helpers";
import { PushQueue } from "./push-queue";
import { copyToShard, schoolOnShard1 } from "./shard-kit";

const NORTH = 1;
const ADMIN_ROLE = 2;
const PARENT_ROLE = 5;

const superAdmin = (t: TestApp) => t.token(DEMO.superAdmin.id, {}, true);

/** `userId` holds `roleId` in `school` (on the shard): the user's anchor and the membership there. */
async function memberOnShard(school: number, userId: number, roleId: number) {
  await copyToShard("user", userId);
  await env.DB_SHARD_1.prepare("INSERT INTO role_user (school_id, user_id, role_id) VALUES (?, ?, ?)")
    .bind(school, userId, roleId)
    .run();
}

const schoolRow = (db: D1Database, id: number) =>
  db.prepare("SELECT name, address_id AS addressId, logo FROM school WHERE id = ?").bind(id).first();

describe("a school's anchor in its shard", () => {
  it("is written with the platform's row on every change of the school, and goes with the school", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    // No anchor yet: the first write of the school copies the whole row.
    const school = await schoolOnShard1(t, "Anchored School", false);
    const put = (body: unknown, headers: { school?: number } = {}) =>
      t.request(`/api/v1/school/${school}`, { method: "PUT", token, body, ...headers });
    expect((await put({ name: "Renamed School" })).status).toBe(204);
    expect(await schoolRow(env.DB, school)).toMatchObject({ name: "Renamed School" });
    expect(await schoolRow(env.DB_SHARD_1, school)).toMatchObject({ name: "Renamed School" });

    // The school's own admin, in the school: the platform's row first, then the copy.
    const admin = await t.token(DEMO.northAdmin.id, { [school]: "all" });
    const own = await t.request(`/api/v1/school/${school}`, {
      method: "PUT",
      token: admin,
      school,
      body: { name: "Own Name" },
    });
    expect(own.status, await own.clone().text()).toBe(204);
    expect(await schoolRow(env.DB, school)).toMatchObject({ name: "Own Name" });
    expect(await schoolRow(env.DB_SHARD_1, school)).toMatchObject({ name: "Own Name" });

    // Its address is one of its own, in its shard: checked there, set in both.
    const address = await t.request("/api/v1/address", {
      method: "POST",
      token,
      school,
      body: { street: "Calle 1", city: "CDMX", country: "MX" },
    });
    expect(address.status, await address.clone().text()).toBe(201);
    const addressId = ((await address.json()) as { id: number }).id;
    const setAddress = (id: number) =>
      t.request(`/api/v1/school/${school}/address`, { method: "PUT", token, body: { addressId: id } });
    expect((await setAddress(addressId)).status).toBe(204);
    expect(await schoolRow(env.DB, school)).toMatchObject({ addressId });
    expect(await schoolRow(env.DB_SHARD_1, school)).toMatchObject({ addressId });
    // Read back: the row from DB, its address from the shard.
    const got = await t.request(`/api/v1/school/${school}`, { token });
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({ addressId, address: { id: addressId, street: "Calle 1" } });
    // Another school's address is still a 404.
    const north = await env.DB.prepare("SELECT id FROM address WHERE school_id = ? LIMIT 1")
      .bind(NORTH)
      .first<{ id: number }>();
    if (north) expect((await setAddress(north.id)).status).toBe(404);

    // Its statistics are counted in its shard.
    const family = await t.request("/api/v1/family", {
      method: "POST",
      token,
      school,
      body: { familyNumber: "AN-1", name: "Anchored" },
    });
    expect(family.status).toBe(201);
    const stats = await t.request(`/api/v1/school/${school}/statistics`, { token });
    expect(stats.status).toBe(200);

    // Deleting it deletes its anchor, and with it the school's rows in the shard.
    expect((await t.request(`/api/v1/school/${school}`, { method: "DELETE", token })).status).toBe(204);
    expect(await schoolRow(env.DB, school)).toBeNull();
    expect(await schoolRow(env.DB_SHARD_1, school)).toBeNull();
    const left = await env.DB_SHARD_1.prepare("SELECT count(*) AS n FROM family WHERE school_id = ?")
      .bind(school)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("several schools deleted at once take their anchors with them", async () => {
    const t = makeTestApp();
    const school = await schoolOnShard1(t, "Doomed Shard School");
    const res = await t.request("/api/v1/school/delete-multiple", {
      method: "POST",
      token: await superAdmin(t),
      body: { ids: [school] },
    });
    expect(res.status).toBe(200);
    expect(await schoolRow(env.DB_SHARD_1, school)).toBeNull();
  });
});

describe("custom permissions on every shard", () => {
  it("a custom permission is copied to the shard when created, and granted there", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const school = await schoolOnShard1(t, "Permission School");
    const created = await t.request("/api/v1/permission", {
      method: "POST",
      token,
      body: { name: "report.export", description: "Export reports" },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: number };
    expect(id).toBeGreaterThanOrEqual(1000);
    const copy = await env.DB_SHARD_1.prepare("SELECT name FROM permission WHERE id = ?").bind(id).first();
    expect(copy).toEqual({ name: "report.export" });

    // A role of the shard's school grants it (the role's grants are checked in the school's database).
    const role = await t.request("/api/v1/role", {
      method: "POST",
      token,
      school,
      body: { name: "Reporter", permissions: ["report.export", "user.read"] },
    });
    expect(role.status, await role.clone().text()).toBe(201);
    const body = (await role.json()) as { permissions: { name: string }[] };
    expect(body.permissions.map((p) => p.name)).toContain("report.export");

    // Renamed and deleted: in the shard too.
    const put = await t.request(`/api/v1/permission/${id}`, { method: "PUT", token, body: { name: "report.print" } });
    expect(put.status).toBe(204);
    expect(await env.DB_SHARD_1.prepare("SELECT name FROM permission WHERE id = ?").bind(id).first()).toEqual({
      name: "report.print",
    });
    expect((await t.request(`/api/v1/permission/${id}`, { method: "DELETE", token })).status).toBe(204);
    expect(await env.DB_SHARD_1.prepare("SELECT name FROM permission WHERE id = ?").bind(id).first()).toBeNull();
  });
});

describe("a user with schools on both databases", () => {
  it("signs in with both schools' roles and modules in the token, and lists both memberships", async () => {
    const t = makeTestApp();
    const school = await schoolOnShard1(t, "Second Home School");
    // The North teacher is also the shard school's admin; a module is off there.
    await memberOnShard(school, DEMO.northTeacher.id, ADMIN_ROLE);
    const off = await env.DB_SHARD_1.prepare("SELECT id FROM application_module WHERE key = 'lost-articles'").first<{
      id: number;
    }>();
    if (!off) throw new Error("no lost-articles module");
    await env.DB_SHARD_1.prepare(
      "INSERT INTO school_module (school_id, module_id, enabled, created_at, updated_at) VALUES (?, ?, 0, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
    )
      .bind(school, off.id)
      .run();

    const session = await t.signIn(DEMO.northTeacher.phone);
    const check = async (accessToken: string) => {
      const claims = await verifyAccessToken(t.deps.config.authSecret, accessToken, t.clock.now());
      expect(Object.keys(claims?.sch ?? {}).map(Number)).toEqual(expect.arrayContaining([NORTH, school]));
      expect(Object.keys(claims?.off ?? {}).map(Number)).toContain(school);
      // The shard's school answers with the admin's permissions.
      const families = await t.request("/api/v1/family", { token: accessToken, school });
      expect(families.status, await families.clone().text()).toBe(200);
    };
    await check(session.accessToken);

    const refreshed = await t.request("/api/v1/auth/refresh-token", {
      method: "POST",
      body: { refreshToken: session.refreshToken },
    });
    expect(refreshed.status, await refreshed.clone().text()).toBe(200);
    await check(((await refreshed.json()) as { accessToken: string }).accessToken);

    const me = await t.request("/api/v1/user/me", { token: session.accessToken });
    expect(me.status).toBe(200);
    const schools = ((await me.json()) as { schools: { id: number; name: string; roles: { id: number }[] }[] }).schools;
    expect(schools.map((s) => s.id)).toEqual(expect.arrayContaining([NORTH, school]));
    const there = schools.find((s) => s.id === school);
    expect(there).toMatchObject({ name: "Second Home School", roles: [{ id: ADMIN_ROLE }] });
  });
});

describe("the audit trail across schools", () => {
  it("merges every database's rows, newest first, page by page", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const school = await schoolOnShard1(t, "Audited School");
    const family = async (on: number, name: string) => {
      t.clock.advance(1);
      const res = await t.request("/api/v1/family", {
        method: "POST",
        token,
        school: on,
        body: { familyNumber: `AU-${on}-${name}`, name },
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: number }).id;
    };
    // Interleaved between the databases.
    const ids = [
      await family(NORTH, "A"),
      await family(school, "B"),
      await family(NORTH, "C"),
      await family(school, "D"),
    ];
    const page = async (n: number) => {
      const res = await t.request(`/api/v1/audit-log?entity=family&pageSize=2&page=${n}`, { token });
      expect(res.status).toBe(200);
      return (await res.json()) as { data: { recordId: number; schoolId: number }[]; total: number };
    };
    const first = await page(1);
    const second = await page(2);
    expect(first.data.map((r) => r.recordId)).toEqual([ids[3], ids[2]]);
    expect(second.data.map((r) => r.recordId)).toEqual([ids[1], ids[0]]);
    const count = async (db: D1Database) =>
      (await db.prepare("SELECT count(*) AS n FROM audit_log WHERE entity = 'family'").first<{ n: number }>())?.n ?? 0;
    expect(first.total).toBe((await count(env.DB)) + (await count(env.DB_SHARD_1)));
    expect(await count(env.DB_SHARD_1)).toBeGreaterThanOrEqual(2);
    // One entry by its id: found on the database whose id range holds it.
    const shardEntry = first.data[0] as { id?: number; schoolId: number };
    expect(shardEntry.schoolId).toBe(school);
    const one = await t.request(`/api/v1/audit-log/${shardEntry.id}`, { token });
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ id: shardEntry.id, schoolId: school, entity: "family" });
  });
});

describe("pushes of a school on the shard", () => {
  it("reach the device registered in the platform database, and drop a device gone since", async () => {
    const push = new PushQueue();
    const t = makeTestApp({ queues: { push } });
    const school = await schoolOnShard1(t, "Pushing School");
    await copyToShard("user", DEMO.superAdmin.id);
    await memberOnShard(school, DEMO.northParent.id, PARENT_ROLE);
    // The parent registers a phone while in the shard's school: a platform row, in DB only.
    const parent = await t.token(DEMO.northParent.id, { [school]: [] });
    const token = "shard-parent-device-0001";
    const registered = await t.request("/api/v1/device-token", {
      method: "POST",
      token: parent,
      school,
      body: { token, platform: "android" },
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const device = ((await registered.json()) as { id: number }).id;
    expect(await env.DB.prepare("SELECT user_id FROM device_token WHERE id = ?").bind(device).first()).toEqual({
      user_id: DEMO.northParent.id,
    });
    expect(await env.DB_SHARD_1.prepare("SELECT id FROM device_token WHERE id = ?").bind(device).first()).toBeNull();

    const send = async (title: string) => {
      const res = await t.request("/api/v1/notification", {
        method: "POST",
        token: await superAdmin(t),
        school,
        body: { title, body: "From the shard", users: [DEMO.northParent.id] },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return ((await res.json()) as { id: number }).id;
    };
    const pushesOf = (id: number) =>
      env.DB_SHARD_1.prepare(
        "SELECT device_token_id AS device, status FROM notification_push WHERE notification_id = ?",
      )
        .bind(id)
        .all()
        .then((r) => r.results);
    const first = await send("Hello shard");
    await push.drain(t.deps);
    expect(await pushesOf(first)).toEqual([{ device, status: "sent" }]);
    const outbox = await env.DB.prepare("SELECT payload FROM dev_push_outbox WHERE token = ?").bind(token).all();
    expect(outbox.results.map((r) => JSON.stringify(r.payload))).toEqual([expect.stringContaining("Hello shard")]);

    // The device is deleted after its push was written, before it went out: the push is dropped.
    t.clock.advance(60);
    const second = await send("Too late");
    // The fan-out alone (the push it queues is held back).
    const fanOut = push.held.shift();
    if (fanOut) await push.deliverOne(t.deps, fanOut);
    expect(await pushesOf(second)).toEqual([{ device, status: "pending" }]);
    const removed = await t.request(`/api/v1/device-token/${device}`, { method: "DELETE", token: parent, school });
    expect(removed.status).toBe(204);
    await push.drain(t.deps);
    expect(await pushesOf(second)).toEqual([{ device, status: "dropped" }]);
  });
});

describe("jobs over the shard's schools", () => {
  it("a reminder of a school on the shard goes out from the cron run over the shard", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const school = await schoolOnShard1(t, "Reminded School");
    // The acting super-admin's anchor (written by the user anchors' change).
    await copyToShard("user", DEMO.superAdmin.id);
    t.clock.current = new Date("2026-11-23T15:00:00.000Z");
    const created = await t.request("/api/v1/lost-article", {
      method: "POST",
      token,
      school,
      body: { name: "Chamarra roja", category: "clothing", donateAfter: "2026-12-01" },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const article = ((await created.json()) as { id: number }).id;
    const reminder = await t.request("/api/v1/lost-article-reminder", {
      method: "POST",
      token,
      school,
      body: { lostArticleId: article, daysBefore: 2, time: "09:30" },
    });
    expect(reminder.status, await reminder.clone().text()).toBe(201);
    const id = ((await reminder.json()) as { id: number }).id;
    t.clock.current = new Date("2026-11-29T15:31:00.000Z");
    await runScheduled(t.deps, "*/5 * * * *");
    const row = await env.DB_SHARD_1.prepare("SELECT status FROM lost_article_reminder WHERE id = ?").bind(id).first();
    expect(row).toEqual({ status: "sent" });
    const notice = await env.DB_SHARD_1.prepare(
      "SELECT count(*) AS n FROM notification WHERE school_id = ? AND about_entity = 'lost-article' AND about_id = ?",
    )
      .bind(school, article)
      .first<{ n: number }>();
    expect(notice?.n).toBe(1);
  });
});

// Later test files start on fresh storage; this isolate's map must not outlive this one's.
forgetShards();
