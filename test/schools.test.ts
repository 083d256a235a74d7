/**
 * Schools: the platform's create / list / delete (school.write), a school
 * admin's read and update of their own school only (another school is a 404), levels, time zones,
 * statistics in one round trip, the logo's presigned URLs (a real upload through the dev S3
 * endpoint), the school's address (one of its own), and deleting schools with everything they own.
 */

import { env } from "cloudflare:test";
import { and, count, desc, eq, gt, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Db } from "../src/db/client";
import { addresses } from "../src/db/schema/address";
import { auditLog } from "../src/db/schema/audit-log";
import { bulkProcesses } from "../src/db/schema/bulk-process";
import { roleUsers, schools } from "../src/db/schema/core";
import { documents } from "../src/db/schema/document";
import { groups } from "../src/db/schema/group";
import { schoolConfigurations } from "../src/db/schema/school-configuration";
import { students } from "../src/db/schema/student";
import { withSearch } from "../src/db/search";
import { shardOf } from "../src/db/shards";
import type { Page } from "../src/lib/pagination";
import { grantsOf } from "../src/modules";
import { uniq } from "./fixtures";
import { countingTestApp, DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const PATH = "/api/v1/school";

type Address = { id: number; street: string; city: string; country: string; latitude: number | null };
type School = {
  id: number;
  createdAt: string;
  updatedAt: string;
  name: string;
  timeZone: string;
  levels: string[];
  email: string | null;
  phone: string | null;
  logo: string | null;
  addressId: number | null;
  address: Address | null;
};
type Stats = {
  schoolId: number;
  people: { total: number; byRole: { roleId: number; key: string | null; name: string; count: number }[] };
  students: { total: number; byLevel: Record<string, number> };
  groups: number;
  routes: number;
};

/** A token with exactly what a built-in role grants (as a real sign-in would carry). */
const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [school]: grantsOf(role).map((p) => p.name) });
const superAdmin = (t: TestApp) => t.token(DEMO.superAdmin.id, {}, true);
const northAdmin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");
const southAdmin = (t: TestApp) => as(t, DEMO.southAdmin.id, SOUTH, "school-admin");

const json = async <T>(res: Response, status: number): Promise<T> => {
  expect(res.status, await res.clone().text()).toBe(status);
  return (await res.json()) as T;
};

async function createSchool(t: TestApp, body: Record<string, unknown> = {}) {
  const res = await t.request(PATH, {
    method: "POST",
    token: await superAdmin(t),
    body: { name: uniq("School"), timeZone: "America/Chicago", levels: ["high"], ...body },
  });
  return json<School>(res, 201);
}

async function expect400(res: Response, field: string) {
  expect(res.status, await res.clone().text()).toBe(400);
  expect((await problem(res)).errors?.map((e) => e.path)).toContain(field);
}

describe("levels", () => {
  it("lists the four levels with labels, and the current school's own", async () => {
    const t = makeTestApp();
    const all = await json<{ key: string; label: string }[]>(
      await t.request(`${PATH}/levels`, { token: await t.token(DEMO.northParent.id, { [NORTH]: [] }) }),
      200,
    );
    expect(all).toEqual([
      { key: "preschool", label: "Preschool" },
      { key: "elementary", label: "Elementary school" },
      { key: "middle", label: "Middle school" },
      { key: "high", label: "High school" },
    ]);
    const north = await json<{ key: string }[]>(
      await t.request(`${PATH}/levels/current`, { token: await as(t, DEMO.northParent.id, NORTH, "parent") }),
      200,
    );
    expect(north.map((l) => l.key)).toEqual(["preschool", "elementary", "middle", "high"]);
    const south = await json<{ key: string; label: string }[]>(
      await t.request(`${PATH}/levels/current`, { token: await southAdmin(t) }),
      200,
    );
    expect(south).toEqual([
      { key: "elementary", label: "Elementary school" },
      { key: "middle", label: "Middle school" },
      { key: "high", label: "High school" },
    ]);
  });
});

describe("creating and listing schools (platform)", () => {
  it("creates a school with its levels in canonical order, contact and time zone, audited", async () => {
    const t = makeTestApp();
    const created = await createSchool(t, {
      name: "  Westside School ",
      timeZone: "America/Mexico_City",
      levels: ["high", "preschool"],
      email: "office@westside.example",
      phone: "+525555550199",
    });
    expect(created).toMatchObject({
      name: "Westside School",
      timeZone: "America/Mexico_City",
      levels: ["preschool", "high"],
      email: "office@westside.example",
      phone: "+525555550199",
      logo: null,
      addressId: null,
      address: null,
      createdAt: t.clock.now().toISOString(),
    });
    const got = await json<School>(
      await t.request(`${PATH}/${created.id}`, { token: await superAdmin(t), school: NORTH }),
      200,
    );
    expect(got).toEqual(created);
    const [audit] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "school"), eq(auditLog.recordId, created.id)));
    expect(audit).toMatchObject({ action: "create", actorType: "user", actorId: DEMO.superAdmin.id, schoolId: null });
    expect(JSON.parse(audit?.changes ?? "{}").levels).toEqual({ old: null, new: ["preschool", "high"] });
  });

  it("accepts IANA time zones (also the renamed ones V8 spells the old way, and UTC), refuses others with 400", async () => {
    const t = makeTestApp();
    for (const timeZone of ["UTC", "Asia/Kolkata", "Asia/Calcutta", "Europe/Kyiv", "America/New_York"]) {
      expect((await createSchool(t, { timeZone })).timeZone).toBe(timeZone);
    }
    const token = await superAdmin(t);
    for (const timeZone of ["Mars/Olympus", "america/new_york", "", "GMT+5", "America/New_York ", 5]) {
      const res = await t.request(PATH, {
        method: "POST",
        token,
        body: { name: "Bad zone", timeZone, levels: ["high"] },
      });
      await expect400(res, "timeZone");
    }
    const update = await t.request(`${PATH}/${NORTH}`, {
      method: "PUT",
      token: await northAdmin(t),
      body: { timeZone: "Europe/Atlantis" },
    });
    await expect400(update, "timeZone");
  });

  it("refuses an unknown level, a repeated one, none, and bad contact details with 400", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const post = (body: Record<string, unknown>) =>
      t.request(PATH, {
        method: "POST",
        token,
        body: { name: "Levels", timeZone: "UTC", levels: ["high"], ...body },
      });
    await expect400(await post({ levels: ["kindergarten"] }), "levels.0");
    await expect400(await post({ levels: ["high", "High"] }), "levels.1");
    await expect400(await post({ levels: ["high", "high"] }), "levels");
    await expect400(await post({ levels: [] }), "levels");
    await expect400(await post({ levels: undefined }), "levels");
    await expect400(await post({ email: "not-an-email" }), "email");
    await expect400(await post({ phone: "5555550100" }), "phone");
    await expect400(await post({ id: 99 }), "id");
    await expect400(await post({ addressId: 1 }), "addressId");
    const update = await t.request(`${PATH}/${NORTH}`, {
      method: "PUT",
      token: await northAdmin(t),
      body: { levels: ["middle", "university"] },
    });
    await expect400(update, "levels.1");
    expect((await t.db.select({ n: count() }).from(schools).where(eq(schools.name, "Levels")))[0]?.n).toBe(0);
  });

  it("lists every school for the platform, filtered by name; a school admin may not list or create", async () => {
    const t = makeTestApp();
    const mine = await createSchool(t, { name: "Zebra Academy" });
    const token = await superAdmin(t);
    const page = await json<Page<School>>(await t.request(`${PATH}?pageSize=100`, { token }), 200);
    expect(page.data.map((s) => s.id)).toEqual(expect.arrayContaining([NORTH, SOUTH, mine.id]));
    expect(page.data.find((s) => s.id === SOUTH)?.address?.city).toBe("Brooklyn");
    const zebra = await json<Page<School>>(await t.request(`${PATH}?name=zebra`, { token }), 200);
    expect(zebra.data.map((s) => s.id)).toEqual([mine.id]);
    const sorted = await json<Page<School>>(await t.request(`${PATH}?sort=-name&pageSize=2`, { token }), 200);
    expect(sorted.data[0]?.name).toBe("Zebra Academy");

    const admin = await northAdmin(t);
    expect((await t.request(PATH, { token: admin })).status).toBe(403);
    const create = await t.request(PATH, {
      method: "POST",
      token: admin,
      body: { name: "Mine", timeZone: "UTC", levels: ["high"] },
    });
    expect(create.status).toBe(403);
    expect((await problem(create)).detail).toContain("school.write");
  });
});

describe("a school admin and their own school", () => {
  it("reads their school with its levels, contact and address; another school is a 404", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const north = await json<School>(await t.request(`${PATH}/${NORTH}`, { token }), 200);
    expect(north).toMatchObject({
      id: NORTH,
      name: "Northside Demo School",
      timeZone: "America/Mexico_City",
      levels: ["preschool", "elementary", "middle", "high"],
      email: "office@northside.example.test",
      phone: "+525555550100",
      logo: null,
      addressId: 1,
      address: { id: 1, city: "Ciudad de Mexico", country: "MX", postalCode: "03940", latitude: 19.3638 },
    });
    const other = await t.request(`${PATH}/${SOUTH}`, { token });
    expect(other.status).toBe(404);
    expect((await problem(other)).detail).toBe(`School ${SOUTH} not found`);
    // Teachers and parents read their own school too (its name, time zone, logo).
    for (const [id, role] of [
      [DEMO.northTeacher.id, "teacher"],
      [DEMO.northParent.id, "parent"],
    ] as const) {
      const tk = await as(t, id, NORTH, role);
      expect((await t.request(`${PATH}/${NORTH}`, { token: tk })).status).toBe(200);
      expect((await t.request(`${PATH}/${SOUTH}`, { token: tk })).status).toBe(404);
    }
  });

  it("updates their school (204, audited); another school's is a 404 and stays as it was", async () => {
    const t = makeTestApp();
    t.clock.advance(3600);
    const token = await northAdmin(t);
    const res = await t.request(`${PATH}/${NORTH}`, {
      method: "PUT",
      token,
      body: {
        name: "Northside School",
        timeZone: "America/Monterrey",
        levels: ["middle", "elementary"],
        email: null,
        phone: "+525555550111",
      },
    });
    expect(res.status, await res.clone().text()).toBe(204);
    const after = await json<School>(await t.request(`${PATH}/${NORTH}`, { token }), 200);
    expect(after).toMatchObject({
      name: "Northside School",
      timeZone: "America/Monterrey",
      levels: ["elementary", "middle"],
      email: null,
      phone: "+525555550111",
      updatedAt: t.clock.now().toISOString(),
      addressId: 1,
    });
    const [audit] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "school"), eq(auditLog.recordId, NORTH), eq(auditLog.action, "update")));
    expect(audit).toMatchObject({ schoolId: NORTH, actorId: DEMO.northAdmin.id });
    expect(JSON.parse(audit?.changes ?? "{}").name).toEqual({ old: "Northside Demo School", new: "Northside School" });

    const south = await t.db.select().from(schools).where(eq(schools.id, SOUTH));
    const other = await t.request(`${PATH}/${SOUTH}`, { method: "PUT", token, body: { name: "Taken over" } });
    expect(other.status).toBe(404);
    await problem(other);
    expect(await t.db.select().from(schools).where(eq(schools.id, SOUTH))).toEqual(south);

    // A teacher reads the school but may not change it.
    const teacher = await as(t, DEMO.northTeacher.id, NORTH, "teacher");
    const refused = await t.request(`${PATH}/${NORTH}`, { method: "PUT", token: teacher, body: { name: "Mine" } });
    expect(refused.status).toBe(403);
    expect((await problem(refused)).detail).toContain("school.update");
    // Nor may a school admin delete it: that is the platform's.
    expect((await t.request(`${PATH}/${NORTH}`, { method: "DELETE", token })).status).toBe(403);
  });

  it("sets the logo key only under its own school's prefix, or clears it", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const put = (logo: unknown) => t.request(`${PATH}/${NORTH}`, { method: "PUT", token, body: { logo } });
    await expect400(await put(`${SOUTH}/logo/logo.png`), "logo");
    await expect400(await put(`${NORTH}/documents/logo.png`), "logo");
    await expect400(await put(`${NORTH}/logo/../x.png`), "logo");
    expect((await put(`${NORTH}/logo/logo-1.png`)).status).toBe(204);
    expect((await json<School>(await t.request(`${PATH}/${NORTH}`, { token }), 200)).logo).toBe("1/logo/logo-1.png");
    expect((await put(null)).status).toBe(204);
    expect((await json<School>(await t.request(`${PATH}/${NORTH}`, { token }), 200)).logo).toBeNull();
  });
});

const countingApp = countingTestApp;

describe("statistics", () => {
  it("counts the seeded people by role and the students, in one D1 round trip", async () => {
    const { t, measure } = countingApp();
    const token = await northAdmin(t);
    const { res, calls } = await measure(() => t.request(`${PATH}/${NORTH}/statistics`, { token }));
    const stats = await json<Stats>(res, 200);
    expect(calls).toBe(1);
    expect(stats).toEqual({
      schoolId: NORTH,
      people: {
        // The demo users, the demo people of scripts/demo-people.ts (the delegate holds no role) and
        // the 404 parents scripts/demo-school.ts adds to Northside's families.
        total: 439,
        byRole: [
          { roleId: 2, key: "school-admin", name: "School admin", count: 1 },
          { roleId: 3, key: "staff", name: "Administrative staff", count: 3 },
          { roleId: 4, key: "teacher", name: "Teacher", count: 13 },
          { roleId: 5, key: "parent", name: "Parent", count: 421 },
          { roleId: 6, key: "driver", name: "Driver", count: 1 },
          { roleId: 7, key: "gate", name: "Gate", count: 0 },
        ],
      },
      // scripts/demo-school.ts: 400 students (Pablo among them) in 24 groups.
      students: { total: 400, byLevel: { preschool: 48, elementary: 199, middle: 101, high: 52 } },
      groups: 24,
      // scripts/demo-transport.ts: 8 routes over 4 vehicles.
      routes: 8,
    });
    const south = await json<Stats>(
      await t.request(`${PATH}/${SOUTH}/statistics`, { token: await southAdmin(t) }),
      200,
    );
    expect(south.people.total).toBe(61);
    expect(south.people.byRole.map((r) => r.count)).toEqual([1, 3, 12, 45, 0, 0]);
    expect(south.students.total).toBe(50);
    expect(south.groups).toBe(5);
  });

  it("leaves deleted students out, and counts a new group", async () => {
    const { t } = countingApp();
    const token = await northAdmin(t);
    const before = await json<Stats>(await t.request(`${PATH}/${NORTH}/statistics`, { token }), 200);
    const [pupil] = await t.db
      .select({ id: students.id, level: students.level })
      .from(students)
      .where(and(eq(students.schoolId, NORTH), eq(students.level, "high")))
      .limit(1);
    await t.db
      .update(students)
      .set(withSearch(students, { deletedAt: t.clock.now().toISOString() }))
      .where(eq(students.id, pupil?.id ?? 0));
    const at = t.clock.now().toISOString();
    await t.db.insert(groups).values(
      withSearch(groups, {
        schoolId: NORTH,
        name: "Stats 1",
        level: "high",
        schoolYear: "2026-2027",
        createdAt: at,
        updatedAt: at,
      }),
    );
    const after = await json<Stats>(await t.request(`${PATH}/${NORTH}/statistics`, { token }), 200);
    expect(after.students.total).toBe(before.students.total - 1);
    expect(after.students.byLevel.high).toBe((before.students.byLevel.high ?? 0) - 1);
    expect(after.groups).toBe(before.groups + 1);
  });

  it("follows role changes, counts a person with two roles once, and hides another school's (404)", async () => {
    const t = makeTestApp();
    const at = t.clock.now().toISOString();
    // The teacher also becomes staff; the south admin becomes a teacher in the north.
    await t.db.insert(roleUsers).values([
      { schoolId: NORTH, userId: DEMO.northTeacher.id, roleId: 3, createdAt: at, updatedAt: at },
      { schoolId: NORTH, userId: DEMO.southAdmin.id, roleId: 4, createdAt: at, updatedAt: at },
    ]);
    const token = await northAdmin(t);
    const stats = await json<Stats>(await t.request(`${PATH}/${NORTH}/statistics`, { token }), 200);
    expect(stats.people.total).toBe(440);
    expect(Object.fromEntries(stats.people.byRole.map((r) => [r.key, r.count]))).toEqual({
      "school-admin": 1,
      staff: 4,
      teacher: 14,
      parent: 421,
      driver: 1,
      gate: 0,
    });
    const other = await t.request(`${PATH}/${SOUTH}/statistics`, { token });
    expect(other.status).toBe(404);
    const teacher = await t.request(`${PATH}/${NORTH}/statistics`, {
      token: await as(t, DEMO.northTeacher.id, NORTH, "teacher"),
    });
    expect(teacher.status).toBe(403);
  });
});

type LogoUrl = { logo: string; url: string; method: "GET" | "PUT"; expiresAt: string; headers: Record<string, string> };

describe("the school logo", () => {
  it("uploads an image through its PUT URL and downloads it through its GET URL", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const sign = (body: Record<string, unknown>, tk = token) =>
      t.request(`${PATH}/${NORTH}/logo/signed-url`, { method: "PUT", token: tk, body });

    const none = await sign({ method: "GET" });
    expect(none.status).toBe(404);
    expect((await problem(none)).detail).toContain("has no logo");

    const put = await json<LogoUrl>(await sign({ contentType: "image/webp" }), 200);
    expect(put.logo).toMatch(/^1\/logo\/logo-[0-9a-f-]{36}\.webp$/);
    expect(put).toMatchObject({ method: "PUT", headers: { "content-type": "image/webp" } });
    expect(put.expiresAt).toBe(new Date(t.clock.now().getTime() + 300_000).toISOString());
    expect(new URL(put.url).pathname).toBe(`/dev/s3/school-documents/${put.logo}`);
    expect((await json<School>(await t.request(`${PATH}/${NORTH}`, { token }), 200)).logo).toBe(put.logo);
    const [audit] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "school"), eq(auditLog.recordId, NORTH), eq(auditLog.action, "logo")));
    expect(JSON.parse(audit?.changes ?? "{}").logo.new).toBe(put.logo);

    const bytes = crypto.getRandomValues(new Uint8Array(2048));
    const uploaded = await t.app.request(put.url, { method: "PUT", headers: put.headers, body: bytes }, env);
    expect(uploaded.status).toBe(200);
    // Another type than the signed one is refused by the storage.
    const wrongType = await t.app.request(
      put.url,
      { method: "PUT", headers: { "content-type": "image/png" }, body: bytes },
      env,
    );
    expect(wrongType.status).toBe(403);

    // A parent may get the download URL (the app shows the logo), not an upload URL.
    const parent = await as(t, DEMO.northParent.id, NORTH, "parent");
    const get = await json<LogoUrl>(await sign({ method: "GET" }, parent), 200);
    expect(get).toMatchObject({ logo: put.logo, method: "GET", headers: {} });
    const downloaded = await t.app.request(get.url, {}, env);
    expect(downloaded.status).toBe(200);
    expect(new Uint8Array(await downloaded.arrayBuffer())).toEqual(bytes);
    const refused = await sign({ contentType: "image/png" }, parent);
    expect(refused.status).toBe(403);
    expect((await problem(refused)).detail).toContain("school.update");
  });

  it("accepts only image types, needs one to upload, and reaches only the caller's school", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const sign = (body: Record<string, unknown>, id = NORTH) =>
      t.request(`${PATH}/${id}/logo/signed-url`, { method: "PUT", token, body });
    for (const contentType of ["image/gif", "application/pdf", "text/html", "image/svg"]) {
      await expect400(await sign({ contentType }), "contentType");
    }
    await expect400(await sign({}), "contentType");
    await expect400(await sign({ method: "GET", contentType: "image/png" }), "contentType");
    await expect400(await sign({ method: "POST", contentType: "image/png" }), "method");
    for (const contentType of ["image/png", "image/jpeg", "image/svg+xml"]) {
      const ext = { "image/png": "png", "image/jpeg": "jpg", "image/svg+xml": "svg" }[contentType];
      expect((await json<LogoUrl>(await sign({ contentType }), 200)).logo).toMatch(new RegExp(`\\.${ext}$`));
    }
    const south = await sign({ contentType: "image/png" }, SOUTH);
    expect(south.status).toBe(404);
    expect((await t.db.select({ logo: schools.logo }).from(schools).where(eq(schools.id, SOUTH)))[0]?.logo).toBeNull();
  });
});

describe("the school's address", () => {
  it("points the school at one of its addresses, or none; another school's address is a 404", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const all = await t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
    const created = await json<Address>(
      await t.request("/api/v1/address", {
        method: "POST",
        token: all,
        school: NORTH,
        body: { street: "Calle 5", city: "Puebla", country: "MX" },
      }),
      201,
    );
    const set = (addressId: number | null, id = NORTH) =>
      t.request(`${PATH}/${id}/address`, { method: "PUT", token, body: { addressId } });
    expect((await set(created.id)).status).toBe(204);
    const after = await json<School>(await t.request(`${PATH}/${NORTH}`, { token }), 200);
    expect(after).toMatchObject({ addressId: created.id, address: { id: created.id, city: "Puebla" } });

    // The south school's address (id 2): as if it did not exist.
    const theirs = await set(2);
    expect(theirs.status).toBe(404);
    expect((await problem(theirs)).detail).toBe("Address 2 not found");
    const missing = await set(987654);
    expect(missing.status).toBe(404);
    const otherSchool = await set(created.id, SOUTH);
    expect(otherSchool.status).toBe(404);
    expect((await problem(otherSchool)).detail).toBe(`School ${SOUTH} not found`);
    expect((await json<School>(await t.request(`${PATH}/${NORTH}`, { token }), 200)).addressId).toBe(created.id);

    expect((await set(null)).status).toBe(204);
    expect(await json<School>(await t.request(`${PATH}/${NORTH}`, { token }), 200)).toMatchObject({
      addressId: null,
      address: null,
    });
    await expect400(await t.request(`${PATH}/${NORTH}/address`, { method: "PUT", token, body: {} }), "addressId");
  });
});

/** Rows of a school across some of the tables it owns, in its database (`db`: where it was, once deleted). */
async function owned(t: TestApp, school: number, db?: Db) {
  // Its database as the map says, or as it said before the school went (`db`).
  const on = db ?? (await t.schoolDb(school));
  const n = async (table: typeof roleUsers | typeof addresses | typeof documents | typeof bulkProcesses) =>
    (await on.select({ n: count() }).from(table).where(eq(table.schoolId, school)))[0]?.n ?? 0;
  return {
    roleUsers: await n(roleUsers),
    addresses: await n(addresses),
    documents: await n(documents),
    bulkProcesses: await n(bulkProcesses),
    configurations:
      (await on.select({ n: count() }).from(schoolConfigurations).where(eq(schoolConfigurations.schoolId, school)))[0]
        ?.n ?? 0,
  };
}

/** A new school with rows in several tables (an admin, an address, a document used by an import...), and its database. */
async function populated(t: TestApp) {
  const school = await createSchool(t);
  const sa = await superAdmin(t);
  const post = async (path: string, body: unknown) =>
    json<{ id: number }>(await t.request(path, { method: "POST", token: sa, school: school.id, body }), 201);
  const address = await post("/api/v1/address", { street: "Main St", city: "Austin", country: "US" });
  await t.request(`${PATH}/${school.id}/address`, { method: "PUT", token: sa, body: { addressId: address.id } });
  await post("/api/v1/school-administrator", { phone: `+1555${3_000_000 + school.id}`, firstName: "Head" });
  const doc = await post("/api/v1/documents", { name: "Import", slug: `${school.id}/documents/${uniq("f")}.xlsx` });
  // A document used by a bulk process: the process restricts deleting the document on its own.
  await post("/api/v1/bulk-process", { entity: "students", documentId: doc.id });
  await post("/api/v1/school-configuration", { name: "Year", startDate: "2026-08-24", endDate: "2027-06-30" });
  const db = await t.schoolDb(school.id);
  expect(Object.values(await owned(t, school.id, db)).every((n) => n > 0)).toBe(true);
  return { ...school, db };
}

describe("deleting schools (platform)", () => {
  it("deletes a school with every row it owns; other schools and the audit trail stay", async () => {
    const t = makeTestApp();
    const school = await populated(t);
    const northBefore = await owned(t, NORTH);
    const res = await t.request(`${PATH}/${school.id}`, { method: "DELETE", token: await superAdmin(t) });
    expect(res.status, await res.clone().text()).toBe(204);
    expect(await owned(t, school.id, school.db)).toEqual({
      roleUsers: 0,
      addresses: 0,
      documents: 0,
      bulkProcesses: 0,
      configurations: 0,
    });
    expect(await owned(t, NORTH)).toEqual(northBefore);
    expect((await t.request(`${PATH}/${school.id}`, { token: await superAdmin(t) })).status).toBe(404);
    // The trail keeps the school's history, its deletion included.
    const trail = await t.db
      .select({ action: auditLog.action })
      .from(auditLog)
      .where(and(eq(auditLog.entity, "school"), eq(auditLog.recordId, school.id)));
    expect(trail.map((r) => r.action)).toEqual(["create", "address", "delete"]);
    // Its own rows' trail, in the database that held them.
    expect(
      (await school.db.select({ n: count() }).from(auditLog).where(eq(auditLog.schoolId, school.id)))[0]?.n,
    ).toBeGreaterThan(3);
    const again = await t.request(`${PATH}/${school.id}`, { method: "DELETE", token: await superAdmin(t) });
    expect(again.status).toBe(404);
  });

  it("deletes several in one batch, says which ids it did not find, and leaves the other schools", async () => {
    const { t, measure } = countingApp();
    const a = await populated(t);
    const b = await createSchool(t);
    const northBefore = await owned(t, NORTH);
    const southBefore = await owned(t, SOUTH);
    const token = await superAdmin(t);
    const [last] = await t.db.select({ id: auditLog.id }).from(auditLog).orderBy(desc(auditLog.id)).limit(1);
    const held = await Promise.all([a.id, b.id].map((id) => shardOf(t.deps, id)));
    const { res, calls } = await measure(() =>
      t.request(`${PATH}/delete-multiple`, { method: "POST", token, body: { ids: [987654, b.id, a.id] } }),
    );
    expect(await json(res, 200)).toEqual({ deleted: [b.id, a.id], notFound: [987654] });
    // One batch on the platform's database, and one on each other database that held one of them.
    expect(calls).toBe(1 + new Set(held.filter((binding) => binding !== "DB")).size);
    expect(
      await t.db
        .select()
        .from(schools)
        .where(inArray(schools.id, [a.id, b.id])),
    ).toEqual([]);
    expect(await owned(t, a.id, a.db)).toMatchObject({ roleUsers: 0, documents: 0, bulkProcesses: 0 });
    expect(await owned(t, NORTH)).toEqual(northBefore);
    expect(await owned(t, SOUTH)).toEqual(southBefore);
    const deletes = await t.db
      .select({ recordId: auditLog.recordId, entity: auditLog.entity, action: auditLog.action })
      .from(auditLog)
      .where(gt(auditLog.id, last?.id ?? 0));
    expect(deletes.map((r) => r.recordId).sort()).toEqual([a.id, b.id].sort());
    expect(deletes.every((r) => r.entity === "school" && r.action === "delete")).toBe(true);

    // Nothing found: nothing deleted, and said so.
    const none = await t.request(`${PATH}/delete-multiple`, { method: "POST", token, body: { ids: [a.id] } });
    expect(await json(none, 200)).toEqual({ deleted: [], notFound: [a.id] });
  });

  it("refuses empty, repeated or too many ids (400), and callers without school.write (403)", async () => {
    const t = makeTestApp();
    const token = await superAdmin(t);
    const post = (body: unknown, tk = token) =>
      t.request(`${PATH}/delete-multiple`, { method: "POST", token: tk, body });
    await expect400(await post({ ids: [] }), "ids");
    await expect400(await post({ ids: [3, 3] }), "ids");
    await expect400(await post({ ids: Array.from({ length: 101 }, (_, i) => i + 10) }), "ids");
    await expect400(await post({ ids: [0] }), "ids.0");
    await expect400(await post({ ids: ["3"] }), "ids.0");
    const admin = await post({ ids: [SOUTH] }, await northAdmin(t));
    expect(admin.status).toBe(403);
    expect((await t.db.select({ id: schools.id }).from(schools).where(eq(schools.id, SOUTH))).length).toBe(1);
  });
});
