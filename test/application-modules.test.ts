/**
 * Application modules: the catalogue (platform, super-admins), each school's state of each module
 * (list, enabled list, check, toggle, bulk toggle, initialise), and how authorization reads that
 * state: from the access token for members (as of its issue), from the school lookup for
 * super-admins. The 403 of every gated route is generated from the OpenAPI document in
 * test/module-gate.test.ts.
 */
import { and, asc, desc, eq, gt, lt } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { applicationModules, schoolModules } from "../src/db/schema/application-module";
import { auditLog } from "../src/db/schema/audit-log";
import { APP_MODULES, FIRST_CUSTOM_MODULE_ID, ModuleSet } from "../src/lib/app-modules";
import { readJson, uniq } from "./fixture-kit";
import { DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const CATALOGUE = "/api/v1/application-module";
const SCHOOL = "/api/v1/application-module/school";
const RULES = "/api/v1/rules-transportation/content";

type SchoolModule = { id: number; key: string; enabled: boolean; statusUpdatedAt: string | null };
type Page<T> = { data: T[]; total: number };

const t = makeTestApp();
const superAdmin = () => t.token(DEMO.superAdmin.id, {}, true);

async function expectStatus(res: Response, status: number) {
  expect(res.status, await res.clone().text()).toBe(status);
}

/** A new module of the catalogue; returns its id and key. */
async function newModule(app: TestApp = t) {
  const key = uniq("extra");
  const res = await app.request(CATALOGUE, {
    method: "POST",
    token: await app.token(1, {}, true),
    school: NORTH,
    body: { key, name: `Module ${key}` },
  });
  await expectStatus(res, 201);
  return { id: (await readJson<{ id: number }>(res)).id, key };
}

async function toggle(school: number, key: string, enabled: boolean, token?: string) {
  return t.request(`${SCHOOL}/${key}/enabled`, {
    method: "PUT",
    token: token ?? (await superAdmin()),
    school,
    body: { enabled },
  });
}

async function status(school: number, key: string) {
  const res = await t.request(`${SCHOOL}/${key}/enabled`, { token: await superAdmin(), school });
  await expectStatus(res, 200);
  return readJson<{ key: string; enabled: boolean }>(res);
}

/** The state row of a module in a school (undefined: none, i.e. enabled by default). */
async function stateRow(school: number, moduleId: number) {
  const [row] = await (await t.schoolDb(school))
    .select()
    .from(schoolModules)
    .where(and(eq(schoolModules.schoolId, school), eq(schoolModules.moduleId, moduleId)));
  return row;
}

/** The last audit id in `school`'s database (a school's audit rows are in its database). */
const lastAuditId = async (school = NORTH) => {
  const [row] = await (await t.schoolDb(school))
    .select({ id: auditLog.id })
    .from(auditLog)
    .orderBy(desc(auditLog.id))
    .limit(1);
  return row?.id ?? 0;
};

const auditSince = async (since: number, entity: string, school = NORTH) =>
  (await t.schoolDb(school))
    .select()
    .from(auditLog)
    .where(and(gt(auditLog.id, since), eq(auditLog.entity, entity)))
    .orderBy(asc(auditLog.id));

function claimsOf(jwt: string) {
  const payload = jwt.split(".")[1] ?? "";
  return JSON.parse(atob(payload.replaceAll("-", "+").replaceAll("_", "/"))) as {
    sch: Record<string, string>;
    off?: Record<string, string>;
  };
}

async function refresh(refreshToken: string) {
  const res = await t.request("/api/v1/auth/refresh-token", { method: "POST", body: { refreshToken } });
  await expectStatus(res, 200);
  return readJson<{ accessToken: string; refreshToken: string }>(res);
}

// ---------------------------------------------------------------------------------------------

describe("the catalogue", () => {
  it("holds the built-in modules with the code's ids, keys and names (migration and code agree)", async () => {
    const rows = await t.db
      .select()
      .from(applicationModules)
      .where(lt(applicationModules.id, FIRST_CUSTOM_MODULE_ID))
      .orderBy(asc(applicationModules.id));
    expect(rows.map((r) => ({ id: r.id, key: r.key, name: r.name, description: r.description }))).toEqual(
      Object.entries(APP_MODULES)
        .map(([key, m]) => ({ id: m.id, key, name: m.name, description: m.description }))
        .sort((a, b) => a.id - b.id),
    );
  });

  it("takes new modules from super-admins (ids from 1000), with unique keys that never change", async () => {
    const { id, key } = await newModule();
    expect(id).toBeGreaterThanOrEqual(FIRST_CUSTOM_MODULE_ID);
    const token = await superAdmin();
    const got = await t.request(`${CATALOGUE}/${id}`, { token, school: NORTH });
    expect(await got.json()).toMatchObject({ id, key, builtIn: false, description: "" });

    const again = await t.request(CATALOGUE, { method: "POST", token, school: NORTH, body: { key, name: "Again" } });
    await expectStatus(again, 409);
    expect((await problem(again)).detail).toBe("An application module with this key already exists");

    for (const body of [{ key: "renamed" }, { name: "" }, {}]) {
      const res = await t.request(`${CATALOGUE}/${id}`, { method: "PUT", token, school: NORTH, body });
      await expectStatus(res, 400);
    }
    for (const bad of ["Upper", "with space", "-lead", "trail-", "a--b", "x".repeat(41)]) {
      const res = await t.request(CATALOGUE, { method: "POST", token, school: NORTH, body: { key: bad, name: "X" } });
      expect(res.status, bad).toBe(400);
      expect((await problem(res)).errors?.map((e) => e.path)).toEqual(["key"]);
    }
    const renamed = await t.request(`${CATALOGUE}/${id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { name: "Library", description: "Books to borrow" },
    });
    await expectStatus(renamed, 204);
    expect(await (await t.request(`${CATALOGUE}/${id}`, { token, school: NORTH })).json()).toMatchObject({
      key,
      name: "Library",
      description: "Books to borrow",
    });
  });

  it("lets built-in modules be renamed but not deleted (422); an unknown id is a 404", async () => {
    const token = await superAdmin();
    const id = APP_MODULES.documents.id;
    const renamed = await t.request(`${CATALOGUE}/${id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { name: "Files" },
    });
    await expectStatus(renamed, 204);
    const refused = await t.request(`${CATALOGUE}/${id}`, { method: "DELETE", token, school: NORTH });
    await expectStatus(refused, 422);
    expect((await problem(refused)).detail).toBe(`Application module ${id} is built in and cannot be deleted`);
    expect((await t.request(`${CATALOGUE}/500`, { method: "DELETE", token, school: NORTH })).status).toBe(404);
    await t.request(`${CATALOGUE}/${id}`, { method: "PUT", token, school: NORTH, body: { name: "Documents" } });
  });

  it("is read by the school's people and changed only by super-admins", async () => {
    const admin = await t.signIn(DEMO.northAdmin.phone);
    const parent = await t.signIn(DEMO.northParent.phone);
    for (const { accessToken } of [admin, parent]) {
      const list = await t.request(`${CATALOGUE}?pageSize=100`, { token: accessToken });
      await expectStatus(list, 200);
      const keys = (await readJson<Page<{ key: string }>>(list)).data.map((m) => m.key);
      expect(keys).toEqual(expect.arrayContaining(Object.keys(APP_MODULES)));
      const refused = await t.request(CATALOGUE, {
        method: "POST",
        token: accessToken,
        body: { key: uniq("mine"), name: "Mine" },
      });
      await expectStatus(refused, 403);
      expect((await problem(refused)).detail).toMatch(/application-module\.manage/);
    }
  });

  it("deletes a created module with every school's state of it", async () => {
    const { id, key } = await newModule();
    await expectStatus(await toggle(NORTH, key, false), 204);
    await expectStatus(await toggle(SOUTH, key, true), 204);
    expect(await stateRow(NORTH, id)).toMatchObject({ enabled: false });
    const res = await t.request(`${CATALOGUE}/${id}`, { method: "DELETE", token: await superAdmin(), school: NORTH });
    await expectStatus(res, 204);
    expect(await t.db.select().from(schoolModules).where(eq(schoolModules.moduleId, id))).toEqual([]);
    expect((await t.request(`${SCHOOL}/${key}/enabled`, { token: await superAdmin(), school: NORTH })).status).toBe(
      404,
    );
  });
});

describe("a school's modules", () => {
  it("lists the whole catalogue with the school's state: the demo's school 2 has transport off", async () => {
    const token = await superAdmin();
    const south = await readJson<Page<SchoolModule>>(
      await t.request(`${SCHOOL}?pageSize=100`, { token, school: SOUTH }),
    );
    const state = Object.fromEntries(south.data.map((m) => [m.key, m.enabled]));
    for (const key of Object.keys(APP_MODULES)) expect(state[key], key).toBe(key !== "transport");
    const keys = south.data.map((m) => m.key);
    expect(keys).toEqual([...keys].sort());

    const off = await readJson<Page<SchoolModule>>(
      await t.request(`${SCHOOL}?enabled=false`, { token, school: SOUTH }),
    );
    expect(off.data.map((m) => m.key)).toEqual(["transport"]);
    expect(off.data[0]).toMatchObject({ builtIn: true, statusUpdatedAt: "2026-08-01T12:00:00.000Z" });

    const on = await readJson<Page<SchoolModule>>(
      await t.request(`${SCHOOL}/enabled?pageSize=100`, { token, school: SOUTH }),
    );
    expect(on.data.map((m) => m.key)).not.toContain("transport");
    expect(on.total).toBe(south.total - 1);
    expect((await t.request(`${SCHOOL}?enabled=yes`, { token, school: SOUTH })).status).toBe(400);
  });

  it("checks one module; a key the catalogue lacks is a 404, a malformed one a 400", async () => {
    expect(await status(SOUTH, "transport")).toEqual({ key: "transport", enabled: false });
    expect(await status(NORTH, "transport")).toEqual({ key: "transport", enabled: true });
    const token = await superAdmin();
    const missing = await t.request(`${SCHOOL}/no-such-module/enabled`, { token, school: NORTH });
    await expectStatus(missing, 404);
    expect((await problem(missing)).detail).toBe("Application module no-such-module not found");
    expect((await t.request(`${SCHOOL}/No_Such/enabled`, { token, school: NORTH })).status).toBe(400);
  });

  it("counts a module as enabled where the school has no state for it yet", async () => {
    const { id, key } = await newModule();
    expect(await stateRow(NORTH, id)).toBeUndefined();
    expect(await status(NORTH, key)).toEqual({ key, enabled: true });
    const page = await readJson<Page<SchoolModule>>(
      await t.request(`${SCHOOL}?pageSize=100`, { token: await superAdmin(), school: NORTH }),
    );
    expect(page.data.find((m) => m.key === key)).toMatchObject({ enabled: true, statusUpdatedAt: null });
  });
});

describe("toggling a module", () => {
  it("sets the state, records who and when, and audits each real change once", async () => {
    t.clock.advance(3600);
    const since = await lastAuditId();
    await expectStatus(await toggle(NORTH, "events", false), 204);
    const row = await stateRow(NORTH, APP_MODULES.events.id);
    expect(row).toMatchObject({
      enabled: false,
      updatedBy: DEMO.superAdmin.id,
      updatedAt: t.clock.now().toISOString(),
    });
    expect(await status(NORTH, "events")).toEqual({ key: "events", enabled: false });

    await expectStatus(await toggle(NORTH, "events", false), 204); // already off: nothing changes
    await expectStatus(await toggle(NORTH, "events", true), 204);
    const rows = await auditSince(since, "school-module");
    expect(rows.map((r) => [r.recordId, r.action, r.schoolId, r.actorId])).toEqual([
      [row?.id, "disable", NORTH, DEMO.superAdmin.id],
      [row?.id, "enable", NORTH, DEMO.superAdmin.id],
    ]);
    // A field that was null records its null old value.
    expect(JSON.parse(rows[0]?.changes ?? "")).toEqual({
      enabled: { old: true, new: false },
      updatedBy: { old: null, new: DEMO.superAdmin.id },
    });
    expect(JSON.parse(rows[1]?.changes ?? "")).toEqual({ enabled: { old: false, new: true } });
  });

  it("bulk: all or nothing; unknown keys are a 404 naming them, a key named twice a 400", async () => {
    const token = await superAdmin();
    const put = (modules: unknown) => t.request(SCHOOL, { method: "PUT", token, school: NORTH, body: { modules } });
    const since = await lastAuditId();

    const unknown = await put([
      { key: "events", enabled: false },
      { key: "nope-one", enabled: false },
      { key: "nope-two", enabled: true },
    ]);
    await expectStatus(unknown, 404);
    expect((await problem(unknown)).detail).toBe("Application modules nope-one, nope-two not found");
    expect(await status(NORTH, "events")).toMatchObject({ enabled: true });

    const twice = await put([
      { key: "events", enabled: false },
      { key: "events", enabled: true },
    ]);
    await expectStatus(twice, 400);
    expect((await put([])).status).toBe(400);
    expect((await put(Array.from({ length: 101 }, (_, i) => ({ key: `k${i}`, enabled: true })))).status).toBe(400);

    await expectStatus(
      await put([
        { key: "events", enabled: false },
        { key: "tasks", enabled: false },
        { key: "documents", enabled: true }, // already on: no change, no audit row
      ]),
      204,
    );
    expect(await status(NORTH, "events")).toMatchObject({ enabled: false });
    expect(await status(NORTH, "tasks")).toMatchObject({ enabled: false });
    const rows = await auditSince(since, "school-module");
    const events = await stateRow(NORTH, APP_MODULES.events.id);
    const tasks = await stateRow(NORTH, APP_MODULES.tasks.id);
    expect(rows.map((r) => r.recordId).sort()).toEqual([events?.id, tasks?.id].sort());

    await expectStatus(
      await put([
        { key: "events", enabled: true },
        { key: "tasks", enabled: true },
      ]),
      204,
    );
  });

  it("initialises the school's missing states in the same batch", async () => {
    const { id, key } = await newModule();
    const since = await lastAuditId();
    await expectStatus(await toggle(NORTH, key, false), 204);
    expect(await stateRow(NORTH, id)).toMatchObject({ enabled: false });
    const [initialised] = await auditSince(since, "school");
    expect(initialised).toMatchObject({ recordId: NORTH, action: "initialize-modules", schoolId: NORTH });
    expect(JSON.parse(initialised?.changes ?? "").modules.new).toContain(key);
    expect((await auditSince(since, "school-module")).map((r) => r.action)).toEqual(["disable"]);
  });

  it("needs application-module.toggle: a school admin may read the states, not change them", async () => {
    const { accessToken } = await t.signIn(DEMO.northAdmin.phone);
    await expectStatus(await t.request(`${SCHOOL}/events/enabled`, { token: accessToken }), 200);
    const refused = await toggle(NORTH, "events", false, accessToken);
    await expectStatus(refused, 403);
    expect((await problem(refused)).detail).toBe("Missing permission application-module.toggle in school 1");
  });

  it("20 concurrent toggles leave one consistent state, with one audit row per real change", async () => {
    const { id, key } = await newModule();
    await expectStatus(await toggle(NORTH, key, true), 204); // the state row exists: enabled
    const row = await stateRow(NORTH, id);
    const since = await lastAuditId();
    const wanted = Array.from({ length: 20 }, (_, i) => i % 3 !== 0);
    const answers = await Promise.all(wanted.map((enabled) => toggle(NORTH, key, enabled)));
    expect(answers.map((r) => r.status)).toEqual(wanted.map(() => 204));

    const rows = await auditSince(since, "school-module");
    const changes = rows.map((r) => {
      expect(r.recordId).toBe(row?.id);
      return JSON.parse(r.changes).enabled as { old: boolean; new: boolean };
    });
    // Each row is a real change, each starts where the one before ended, and the last ends in the
    // stored state: no change went unaudited, none was audited twice.
    let state = true;
    for (const change of changes) {
      expect(change.old).toBe(state);
      expect(change.new).toBe(!state);
      state = change.new;
    }
    expect((await stateRow(NORTH, id))?.enabled).toBe(state);
    expect(changes.length).toBeLessThanOrEqual(20);
    expect(rows.map((r) => r.action)).toEqual(changes.map((c) => (c.new ? "enable" : "disable")));
  });

  it("20 concurrent bulk toggles of two modules stay consistent per module", async () => {
    const a = await newModule();
    const b = await newModule();
    const since = await lastAuditId();
    const token = await superAdmin();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.request(SCHOOL, {
          method: "PUT",
          token,
          school: NORTH,
          body: {
            modules: [
              { key: a.key, enabled: i % 2 === 0 },
              { key: b.key, enabled: i % 4 < 2 },
            ],
          },
        }),
      ),
    );
    expect(answers.every((r) => r.status === 204)).toBe(true);
    for (const m of [a, b]) {
      const row = await stateRow(NORTH, m.id);
      const rows = (await auditSince(since, "school-module")).filter((r) => r.recordId === row?.id);
      let state = true; // initialised enabled by the first batch
      for (const r of rows) {
        const change = JSON.parse(r.changes).enabled as { old: boolean; new: boolean };
        expect(change).toEqual({ old: state, new: !state });
        state = change.new;
      }
      expect(row?.enabled).toBe(state);
    }
    // The school's states were initialised once, by exactly one of the batches.
    const inits = (await auditSince(since, "school")).filter((r) => r.action === "initialize-modules");
    expect(inits).toHaveLength(1);
  });
});

describe("initialising a school's modules", () => {
  const initialise = async (id: number, school = id) =>
    t.request(`/api/v1/school/${id}/initialize-modules`, { method: "POST", token: await superAdmin(), school });

  it("creates an enabled state for each module the school lacks, once; existing states stay", async () => {
    const first = await newModule();
    const second = await newModule();
    const since = await lastAuditId(SOUTH);
    const res = await initialise(SOUTH);
    await expectStatus(res, 200);
    const body = await readJson<{ schoolId: number; created: string[] }>(res);
    expect(body.schoolId).toBe(SOUTH);
    expect(body.created).toEqual(expect.arrayContaining([first.key, second.key]));
    expect(body.created).toEqual([...body.created].sort());
    expect(await stateRow(SOUTH, first.id)).toMatchObject({ enabled: true, updatedBy: null });
    expect(await status(SOUTH, "transport")).toMatchObject({ enabled: false }); // the demo's state stays

    const audit = await auditSince(since, "school", SOUTH);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ recordId: SOUTH, schoolId: SOUTH, action: "initialize-modules", actorId: 1 });
    expect(JSON.parse(audit[0]?.changes ?? "")).toEqual({ modules: { old: null, new: body.created } });

    const again = await initialise(SOUTH);
    expect(await readJson(again)).toEqual({ schoolId: SOUTH, created: [] });
    expect(await auditSince(since, "school", SOUTH)).toHaveLength(1);
  });

  it("is for the current school: another school's id is a 404", async () => {
    const res = await initialise(SOUTH, NORTH);
    await expectStatus(res, 404);
    expect((await problem(res)).detail).toBe(`School ${SOUTH} not found`);
  });

  it("20 concurrent calls create each state once and audit the initialisation once", async () => {
    const made = [await newModule(), await newModule()];
    const since = await lastAuditId();
    const answers = await Promise.all(Array.from({ length: 20 }, () => initialise(NORTH)));
    const created = await Promise.all(
      answers.map(async (r) => {
        expect(r.status).toBe(200);
        return (await readJson<{ created: string[] }>(r)).created;
      }),
    );
    const all = created.flat();
    for (const m of made) expect(all.filter((k) => k === m.key)).toHaveLength(1);
    for (const m of made) {
      expect(await t.db.select().from(schoolModules).where(eq(schoolModules.moduleId, m.id))).toHaveLength(1);
    }
    expect(await auditSince(since, "school")).toHaveLength(1);
  });
});

describe("authorization reads the school's modules", () => {
  it("answers the demo's school 2 members 403 naming the module: their token carries it", async () => {
    const south = await t.signIn(DEMO.southAdmin.phone);
    const claims = claimsOf(south.accessToken);
    expect(Object.keys(claims.sch)).toEqual(["2"]);
    expect(ModuleSet.decode(claims.off?.["2"] ?? "")).toEqual([APP_MODULES.transport.id]);
    const res = await t.request(RULES, { token: south.accessToken });
    await expectStatus(res, 403);
    const body = await problem(res);
    expect(body).toMatchObject({
      type: "/problems/forbidden",
      title: "Module disabled",
      detail: "The transport module is disabled in school 2",
    });
    // Routes of other modules, and of none, are served.
    expect((await t.request(SCHOOL, { token: south.accessToken })).status).toBe(200);

    const north = await t.signIn(DEMO.northAdmin.phone);
    expect(claimsOf(north.accessToken).off).toBeUndefined(); // nothing disabled: nothing carried
    expect((await t.request(RULES, { token: north.accessToken })).status).toBe(200);
  });

  it("reaches super-admins at once and members at their next token refresh", async () => {
    const south = await t.signIn(DEMO.southAdmin.phone);
    await expectStatus(await toggle(SOUTH, "transport", true), 204);
    expect((await t.request(RULES, { token: await superAdmin(), school: SOUTH })).status).toBe(200);
    expect((await t.request(RULES, { token: south.accessToken })).status).toBe(403); // as of its issue
    const refreshed = await refresh(south.refreshToken);
    expect(claimsOf(refreshed.accessToken).off).toBeUndefined();
    expect((await t.request(RULES, { token: refreshed.accessToken })).status).toBe(200);

    await expectStatus(await toggle(SOUTH, "transport", false), 204);
    const off = await t.request(RULES, { token: await superAdmin(), school: SOUTH });
    await expectStatus(off, 403);
    expect((await problem(off)).detail).toBe("The transport module is disabled in school 2");
    expect((await t.request(RULES, { token: refreshed.accessToken })).status).toBe(200); // until refreshed
    const again = await refresh(refreshed.refreshToken);
    expect((await t.request(RULES, { token: again.accessToken })).status).toBe(403);
  });

  it("costs members no D1 call, and a super-admin only the school lookup they already had", async () => {
    type Line = { message?: string; status?: number; d1Calls?: number };
    const lines: Line[] = [];
    // The isolate's copy of the shard map is read again after 10 s of this file's clock (src/db/shards.ts
    // MAP_TTL_MS): one request first, so the counted ones find it fresh, as most requests do.
    await t.request(RULES, { token: await t.token(DEMO.northAdmin.id, { [NORTH]: "all" }), school: NORTH });
    const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      const parsed = JSON.parse(String(line)) as Line;
      if (parsed.message === "request") lines.push(parsed);
    });
    try {
      const member = await t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
      await t.request(RULES, { token: member, school: NORTH }); // served: its one read
      await t.request(RULES, { token: await superAdmin(), school: SOUTH }); // refused: the lookup only
      await t.request(RULES, { token: await superAdmin(), school: NORTH }); // the lookup, then the read
    } finally {
      spy.mockRestore();
    }
    expect(lines.map((l) => [l.status, l.d1Calls])).toEqual([
      [200, 1],
      [403, 1],
      [200, 2],
    ]);
  });
});
