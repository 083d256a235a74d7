/** Students: CRUD, soft delete, delete-multiple, guardians and restrictions, mayPickUp, visibility per role, export. */

import { eq } from "drizzle-orm";
import { strFromU8, unzipSync } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import { delegates } from "../src/db/schema/delegate";
import { documents } from "../src/db/schema/document";
import { families } from "../src/db/schema/family";
import { groupStudents, groups, groupTeachers } from "../src/db/schema/group";
import { students } from "../src/db/schema/student";
import { teachers } from "../src/db/schema/teacher";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { withSearch } from "../src/db/search";
import { jobCtx } from "../src/lib/context";
import { readXlsx } from "../src/lib/xlsx";
import { mayPickUp, pickUpDecision } from "../src/modules/student/guardianship";
import { exportStudents } from "../src/modules/student/resource";
import { allPages, countingTestApp, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const AT = "2026-08-01T12:00:00.000Z";
let seq = 0;
const u = (p: string) => `${p}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;

const admin = (t: TestApp) => t.token(2, { [NORTH]: "all" });
const southAdmin = (t: TestApp) => t.token(5, { [SOUTH]: "all" });

async function create(t: TestApp, body: Record<string, unknown>, school = NORTH) {
  const token = school === NORTH ? await admin(t) : await southAdmin(t);
  const res = await t.request("/api/v1/student", { method: "POST", token, school, body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: number; familyId: number | null; firstName: string };
}

async function parentIn(t: TestApp, school = NORTH) {
  const token = school === NORTH ? await admin(t) : await southAdmin(t);
  const phone = `+1555${7_000_000 + Math.floor(Math.random() * 999_999)}`;
  const res = await t.request("/api/v1/parent", {
    method: "POST",
    token,
    school,
    body: { phone, firstName: "Gil", relationship: "father" },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: number; userId: number };
}

async function link(t: TestApp, studentId: number, parentId: number, extra: Record<string, unknown> = {}) {
  const res = await t.request(`/api/v1/student/${studentId}/guardian`, {
    method: "POST",
    token: await admin(t),
    school: NORTH,
    body: { parentId, ...extra },
  });
  return res;
}

describe("students", () => {
  it("creates, reads, updates and soft-deletes a student", async () => {
    const t = makeTestApp();
    const idNumber = u("S");
    const s = await create(t, { firstName: "Ana", lastName: "Ruiz", level: "elementary", idNumber, familyId: 1 });
    const token = await admin(t);
    expect((await t.request(`/api/v1/student/${s.id}`, { token, school: NORTH })).status).toBe(200);
    const put = await t.request(`/api/v1/student/${s.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { level: "middle" },
    });
    expect(put.status).toBe(204);
    const dup = await t.request("/api/v1/student", {
      method: "POST",
      token,
      school: NORTH,
      body: { firstName: "B", lastName: "C", idNumber },
    });
    expect(dup.status).toBe(409);
    expect((await t.request(`/api/v1/student/${s.id}`, { method: "DELETE", token, school: NORTH })).status).toBe(204);
    expect((await t.request(`/api/v1/student/${s.id}`, { token, school: NORTH })).status).toBe(404);
    expect((await t.request(`/api/v1/student/${s.id}`, { method: "DELETE", token, school: NORTH })).status).toBe(404);
    const [row] = await t.db.select().from(students).where(eq(students.id, s.id));
    expect(row?.deletedAt).not.toBeNull();
    const page = (await (
      await t.request(`/api/v1/student?family=1&pageSize=100`, { token, school: NORTH })
    ).json()) as {
      data: { id: number }[];
    };
    expect(page.data.map((r) => r.id)).not.toContain(s.id);
  });

  it("never moves a student between families silently: another family is a 409; out first, then in", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const s = await create(t, { firstName: "Mo", lastName: u("Ve"), familyId: 1 });
    const [other] = await t.db
      .insert(families)
      .values(withSearch(families, { schoolId: NORTH, familyNumber: u("F"), name: "Other" }))
      .returning({ id: families.id });
    const put = (familyId: number | null) =>
      t.request(`/api/v1/student/${s.id}`, { method: "PUT", token, school: NORTH, body: { familyId } });
    const moved = await put(other?.id as number);
    expect(moved.status).toBe(409);
    expect((await problem(moved)).detail).toBe(
      `Student ${s.id} is already in another family (1); a student in two families is not allowed: take them out of it first`,
    );
    expect((await put(1)).status).toBe(204); // the same family: nothing to refuse
    expect((await put(null)).status).toBe(204);
    expect((await put(other?.id as number)).status).toBe(204);
    const read = await t.request(`/api/v1/student/${s.id}`, { token, school: NORTH });
    expect(((await read.json()) as { familyId: number }).familyId).toBe(other?.id);
  });

  it("finds a name without its accents or case, across first and last name", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const tag = u("Ñúñez"); // "Ñúñez-<n>-<random>": unique in the school
    const last = `López ${tag}`;
    const plain = tag.replace("Ñúñez", "nunez");
    // "é" sent as e + a combining accent is stored as one letter.
    const s = await create(t, { firstName: "Jose\u0301 María", lastName: last });
    expect(s.firstName).toBe("José María");
    const found = async (name: string) => {
      const res = await t.request(`/api/v1/student?name=${encodeURIComponent(name)}`, { token, school: NORTH });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { id: number }[] }).data.map((r) => r.id);
    };
    for (const name of [plain, `lopez ${plain}`, `LÓPEZ ${tag.toUpperCase()}`, `maria lopez ${plain}`]) {
      expect(await found(name), name).toEqual([s.id]);
    }
    expect(await found(`José María López ${tag}`)).toEqual([s.id]);
    expect(await found(`JOSÉ MARÍA LÓPEZ ${tag}`)).toEqual([s.id]);
    const other = await create(t, { firstName: "João", lastName: `Conceição ${tag}` });
    expect(await found(`joao conceicao ${plain}`)).toEqual([other.id]);
    expect(await found(`jose  maria ${plain}`)).toEqual([]);
  });

  it("refuses a family of another school (404) and bad input (400)", async () => {
    const t = makeTestApp();
    const [south] = await t.db
      .insert(families)
      .values(
        withSearch(families, { schoolId: SOUTH, familyNumber: u("F"), name: "South", createdAt: AT, updatedAt: AT }),
      )
      .returning();
    const token = await admin(t);
    const res = await t.request("/api/v1/student", {
      method: "POST",
      token,
      school: NORTH,
      body: { firstName: "A", lastName: "B", familyId: south?.id },
    });
    expect(res.status).toBe(404);
    expect((await problem(res)).detail).toMatch(/Family/);
    for (const body of [
      { firstName: "A" },
      { firstName: "A", lastName: "B", birthDate: "2020-13-01" },
      { firstName: "A", lastName: "B", level: "college" },
    ]) {
      expect((await t.request("/api/v1/student", { method: "POST", token, school: NORTH, body })).status).toBe(400);
    }
    // Known levels and real dates the school cannot take: 422 with the reason, nothing written.
    const southToken = await southAdmin(t);
    const preschool = await t.request("/api/v1/student", {
      method: "POST",
      token: southToken,
      school: SOUTH,
      body: { firstName: "A", lastName: "B", level: "preschool" },
    });
    expect(preschool.status).toBe(422);
    expect((await problem(preschool)).detail).toBe(
      "The school does not offer the level preschool; it offers elementary, middle, high",
    );
    const tomorrow2 = new Date(t.clock.now().getTime() + 2 * 24 * 3600 * 1000).toISOString().slice(0, 10);
    const unborn = await t.request("/api/v1/student", {
      method: "POST",
      token,
      school: NORTH,
      body: { firstName: "A", lastName: "B", birthDate: tomorrow2 },
    });
    expect(unborn.status).toBe(422);
    expect((await problem(unborn)).detail).toBe(`The birth date ${tomorrow2} is after today`);
    const s = await create(t, { firstName: "A", lastName: u("B"), birthDate: "2018-05-14" }, SOUTH);
    const moved = await t.request(`/api/v1/student/${s.id}`, {
      method: "PUT",
      token: southToken,
      school: SOUTH,
      body: { level: "preschool" },
    });
    expect(moved.status).toBe(422);
    expect((await t.request("/api/v1/student?sort=firstName", { token, school: NORTH })).status).toBe(400);
    expect((await t.request(`/api/v1/student?name=${"x".repeat(60)}`, { token, school: NORTH })).status).toBe(400);
  });

  it("deletes several at once, all or none (another school's ids are named)", async () => {
    const t = makeTestApp();
    const a = await create(t, { firstName: "A", lastName: u("L") });
    const b = await create(t, { firstName: "B", lastName: u("L") });
    const theirs = await create(t, { firstName: "C", lastName: u("L") }, SOUTH);
    const token = await admin(t);
    const refused = await t.request("/api/v1/student/delete-multiple", {
      method: "POST",
      token,
      school: NORTH,
      body: { ids: [a.id, theirs.id] },
    });
    expect(refused.status).toBe(404);
    expect((await problem(refused)).detail).toContain(String(theirs.id));
    expect((await t.request(`/api/v1/student/${a.id}`, { token, school: NORTH })).status).toBe(200);
    // Two requests race: one deletes, the other finds a deleted id and deletes nothing.
    const [r1, r2] = await Promise.all([
      t.request("/api/v1/student/delete-multiple", {
        method: "POST",
        token,
        school: NORTH,
        body: { ids: [a.id, b.id] },
      }),
      t.request("/api/v1/student/delete-multiple", { method: "POST", token, school: NORTH, body: { ids: [b.id] } }),
    ]);
    expect([r1.status, r2.status].sort()).toEqual([200, 404]);
    const ok = r1.status === 200 ? r1 : r2;
    expect(((await ok.json()) as { deleted: number[] }).deleted.length).toBeGreaterThan(0);
    // DELETE on the same path does the same, as for groups (it is not a student id: never a 400 on `id`).
    const c = await create(t, { firstName: "C", lastName: u("L") });
    const viaDelete = await t.request("/api/v1/student/delete-multiple", {
      method: "DELETE",
      token,
      school: NORTH,
      body: { ids: [c.id] },
    });
    expect(viaDelete.status, await viaDelete.clone().text()).toBe(200);
    expect(await viaDelete.json()).toEqual({ deleted: [c.id] });
    expect((await t.request(`/api/v1/student/${c.id}`, { token, school: NORTH })).status).toBe(404);
  });

  it("answers the detail in one D1 round trip: family, guardians, groups, approved trusted people", async () => {
    const { t, measure } = countingTestApp();
    const s = await create(t, { firstName: "D", lastName: u("L"), familyId: 1 });
    const p = await parentIn(t);
    expect((await link(t, s.id, p.id, { canPickUp: false })).status).toBe(201);
    const [g] = await t.db
      .insert(groups)
      .values(
        withSearch(groups, {
          schoolId: NORTH,
          name: u("G"),
          level: "elementary",
          schoolYear: "2026-2027",
          createdAt: AT,
          updatedAt: AT,
        }),
      )
      .returning();
    await t.db
      .insert(groupStudents)
      .values({ schoolId: NORTH, groupId: g?.id ?? 0, studentId: s.id, createdAt: AT, updatedAt: AT });
    const trusted = (name: string, status: "pending" | "approved" | "rejected") => ({
      schoolId: NORTH,
      studentId: s.id,
      name,
      relationship: "aunt",
      phone: "+15557400001",
      status,
      decidedAt: status === "pending" ? null : AT,
      createdAt: AT,
      updatedAt: AT,
    });
    await t.db
      .insert(trustedPeople)
      .values([
        trusted("Ana Approved", "approved"),
        trusted("Pia Pending", "pending"),
        trusted("Rita Rejected", "rejected"),
      ]);
    const token = await admin(t);
    const { res, calls } = await measure(() => t.request(`/api/v1/student/${s.id}/detail`, { token, school: NORTH }));
    expect(res.status).toBe(200);
    expect(calls).toBe(1);
    const d = (await res.json()) as {
      family: { id: number };
      guardians: { parentId: number; canPickUp: boolean; restricted: boolean }[];
      groups: { id: number }[];
      trustedPeople: { name: string }[];
      trustedAddresses: unknown[];
    };
    expect(d.family.id).toBe(1);
    expect(d.trustedPeople.map((x) => x.name)).toEqual(["Ana Approved"]);
    expect(d.trustedAddresses).toEqual([]);
    expect(d.guardians).toEqual([expect.objectContaining({ parentId: p.id, canPickUp: false, restricted: false })]);
    expect(d.groups.map((x) => x.id)).toEqual([g?.id]);
    const list = await measure(() => t.request("/api/v1/student?level=elementary", { token, school: NORTH }));
    expect(list.calls).toBe(1);
  });

  it("lists each student with their groups, still in one D1 round trip (no call per child)", async () => {
    const { t, measure } = countingTestApp();
    const family = u("Fam");
    const [f] = await t.db
      .insert(families)
      .values(
        withSearch(families, { schoolId: NORTH, familyNumber: u("F"), name: family, createdAt: AT, updatedAt: AT }),
      )
      .returning();
    const kids = [
      await create(t, { firstName: "Uno", lastName: u("L"), familyId: f?.id }),
      await create(t, { firstName: "Dos", lastName: u("L"), familyId: f?.id }),
      await create(t, { firstName: "Tres", lastName: u("L"), familyId: f?.id }),
    ];
    const group = async (name: string) => {
      const [g] = await t.db
        .insert(groups)
        .values(
          withSearch(groups, {
            schoolId: NORTH,
            name,
            level: "elementary",
            schoolYear: "2026-2027",
            createdAt: AT,
            updatedAt: AT,
          }),
        )
        .returning();
      return g?.id ?? 0;
    };
    const [music, third] = [await group(u("Música")), await group(u("3°A"))];
    const join = (groupId: number, studentId: number) =>
      t.db.insert(groupStudents).values({ schoolId: NORTH, groupId, studentId, createdAt: AT, updatedAt: AT });
    await join(third, kids[0]?.id ?? 0);
    await join(music, kids[0]?.id ?? 0);
    await join(third, kids[1]?.id ?? 0);
    const token = await admin(t);
    const { res, calls } = await measure(() =>
      t.request(`/api/v1/student?family=${f?.id}&pageSize=100`, { token, school: NORTH }),
    );
    expect(res.status).toBe(200);
    expect(calls).toBe(1);
    const page = (await res.json()) as {
      data: { id: number; groups: { id: number; name: string; level: string }[] }[];
    };
    const groupsOf = (id?: number) => page.data.find((s) => s.id === id)?.groups.map((g) => g.id);
    expect(groupsOf(kids[0]?.id)).toEqual([music, third].sort((a, b) => a - b));
    expect(groupsOf(kids[1]?.id)).toEqual([third]);
    expect(groupsOf(kids[2]?.id)).toEqual([]);
    expect(page.data.find((s) => s.id === kids[1]?.id)?.groups[0]).toMatchObject({ level: "elementary" });
    // The record answers them everywhere it is read: the detail and the single record agree.
    const one = (await (await t.request(`/api/v1/student/${kids[0]?.id}`, { token, school: NORTH })).json()) as {
      groups: { id: number }[];
    };
    expect(one.groups.map((g) => g.id)).toEqual(groupsOf(kids[0]?.id));
  });
});

describe("guardians", () => {
  it("links a parent, changes capabilities, restricts (audited) and removes", async () => {
    const t = makeTestApp();
    const s = await create(t, { firstName: "G", lastName: u("L") });
    const p = await parentIn(t);
    const res = await link(t, s.id, p.id);
    expect(res.status).toBe(201);
    const g = (await res.json()) as { id: number; relationship: string; canPickUp: boolean };
    expect(g).toMatchObject({ relationship: "father", canPickUp: true });
    expect((await link(t, s.id, p.id)).status).toBe(409);
    const southParent = await parentIn(t, SOUTH);
    expect((await link(t, s.id, southParent.id)).status).toBe(404);
    const token = await admin(t);
    const path = `/api/v1/student-guardian/${g.id}`;
    expect((await t.request(path, { method: "PUT", token, school: NORTH, body: { canPickUp: false } })).status).toBe(
      204,
    );
    const reversed = await t.request(`${path}/restriction`, {
      method: "PATCH",
      token,
      school: NORTH,
      body: { restricted: true, reason: "Court order", from: "2026-12-31", until: "2026-12-01" },
    });
    expect(reversed.status).toBe(400);
    const [doc] = await t.db
      .insert(documents)
      .values(
        withSearch(documents, {
          schoolId: SOUTH,
          name: "x.pdf",
          slug: `2/documents/${u("x")}.pdf`,
          entity: "documents",
          contentType: "application/pdf",
        } as never),
      )
      .returning();
    const foreign = await t.request(`${path}/restriction`, {
      method: "PATCH",
      token,
      school: NORTH,
      body: { restricted: true, reason: "Court order", documentId: doc?.id },
    });
    expect(foreign.status).toBe(404);
    const staffOnly = await t.request(`${path}/restriction`, {
      method: "PATCH",
      token: await t.token(1001, { [NORTH]: ["student.read", "student.write"] }),
      school: NORTH,
      body: { restricted: true, reason: "Court order" },
    });
    expect(staffOnly.status).toBe(403);
    const set = await t.request(`${path}/restriction`, {
      method: "PATCH",
      token,
      school: NORTH,
      body: { restricted: true, reason: "Court order", from: "2026-12-01", until: "2026-12-31" },
    });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ restricted: true, restrictionUntil: "2026-12-31" });
    const cleared = await t.request(`${path}/restriction`, {
      method: "PATCH",
      token,
      school: NORTH,
      body: { restricted: false },
    });
    expect(await cleared.json()).toMatchObject({ restricted: false, restrictionReason: null });
    expect((await t.request(path, { method: "DELETE", token, school: NORTH })).status).toBe(204);
  });
});

describe("mayPickUp", () => {
  const linkOf = (over: Partial<Parameters<typeof pickUpDecision>[0] & object> = {}) => ({
    canPickUp: true,
    restricted: false,
    restrictionFrom: null,
    restrictionUntil: null,
    ...over,
  });
  it("gives each reason, with inclusive restriction dates", () => {
    expect(pickUpDecision(undefined, "2026-12-01")).toEqual({ allowed: false, reason: "not a guardian" });
    expect(pickUpDecision(linkOf(), "2026-12-01")).toEqual({ allowed: true });
    expect(pickUpDecision(linkOf({ canPickUp: false }), "2026-12-01")).toEqual({
      allowed: false,
      reason: "may not pick up",
    });
    const r = linkOf({ restricted: true, restrictionFrom: "2026-12-01", restrictionUntil: "2026-12-31" });
    expect(pickUpDecision(r, "2026-11-30")).toEqual({ allowed: true });
    expect(pickUpDecision(r, "2026-12-01")).toEqual({ allowed: false, reason: "restricted until 2026-12-31" });
    expect(pickUpDecision(r, "2026-12-31")).toEqual({ allowed: false, reason: "restricted until 2026-12-31" });
    expect(pickUpDecision(r, "2027-01-01")).toEqual({ allowed: true });
    expect(pickUpDecision(linkOf({ restricted: true }), "2030-01-01")).toEqual({
      allowed: false,
      reason: "restricted",
    });
  });

  it("reads the link by parent id or user id", async () => {
    const t = makeTestApp();
    const s = await create(t, { firstName: "M", lastName: u("L") });
    const p = await parentIn(t);
    const other = await parentIn(t);
    await link(t, s.id, p.id);
    const ctx = jobCtx(t.deps, "test", NORTH);
    expect(await mayPickUp(ctx, { parentId: p.id, studentId: s.id, date: "2026-12-01" })).toEqual({ allowed: true });
    expect(await mayPickUp(ctx, { guardianUserId: p.userId, studentId: s.id, date: "2026-12-01" })).toEqual({
      allowed: true,
    });
    expect(await mayPickUp(ctx, { parentId: other.id, studentId: s.id, date: "2026-12-01" })).toEqual({
      allowed: false,
      reason: "not a guardian",
    });
    expect(await mayPickUp(ctx, { parentId: p.id, studentId: 987654, date: "2026-12-01" })).toEqual({
      allowed: false,
      reason: "not a student of this school",
    });
  });
});

describe("visibility per role", () => {
  const t = makeTestApp();
  let mine: number; // in the demo parent's family (family 1)
  let guarded: number; // no family; the demo parent is its guardian
  let taught: number; // in the demo teacher's group
  let stranger: number;
  beforeAll(async () => {
    mine = (await create(t, { firstName: "Fam", lastName: u("L"), familyId: 1 })).id;
    guarded = (await create(t, { firstName: "Gua", lastName: u("L") })).id;
    taught = (await create(t, { firstName: "Tau", lastName: u("L") })).id;
    stranger = (await create(t, { firstName: "Str", lastName: u("L") })).id;
    expect((await link(t, guarded, 1)).status).toBe(201); // parent profile 1 = user 4
    const [g] = await t.db
      .insert(groups)
      .values(
        withSearch(groups, {
          schoolId: NORTH,
          name: u("G"),
          level: "elementary",
          schoolYear: "2026-2027",
          createdAt: AT,
          updatedAt: AT,
        }),
      )
      .returning();
    const [teacher] = await t.db.select().from(teachers).where(eq(teachers.userId, 3));
    await t.db
      .insert(groupTeachers)
      .values({ schoolId: NORTH, groupId: g?.id ?? 0, teacherId: teacher?.id ?? 0, createdAt: AT, updatedAt: AT });
    await t.db
      .insert(groupStudents)
      .values({ schoolId: NORTH, groupId: g?.id ?? 0, studentId: taught, createdAt: AT, updatedAt: AT });
    // User 1020 delegates for the demo parent today (the clock: 2026-11-23).
    await t.db.insert(delegates).values({
      schoolId: NORTH,
      parentId: 1,
      userId: 1020,
      validFrom: "2026-11-01",
      validUntil: "2026-11-30",
      createdAt: AT,
      updatedAt: AT,
    } as never);
  });

  const ids = async (token: string) =>
    (await allPages(t, "/api/v1/student", { token, school: NORTH })).data.map((r) => r.id);
  const exported = async (token: string) => {
    const res = await t.request("/api/v1/student/export", { token, school: NORTH });
    expect(res.status).toBe(200);
    return strFromU8(
      unzipSync(new Uint8Array(await res.arrayBuffer()))["xl/worksheets/sheet1.xml"] ?? new Uint8Array(),
    );
  };
  const sees = async (token: string, id: number) =>
    (await t.request(`/api/v1/student/${id}`, { token, school: NORTH })).status === 200 &&
    (await t.request(`/api/v1/student/${id}/detail`, { token, school: NORTH })).status === 200;

  const cases: [string, () => Promise<string>, ("mine" | "guarded" | "taught" | "stranger")[]][] = [
    ["staff", () => t.token(1001, { [NORTH]: ["student.read"] }), ["mine", "guarded", "taught", "stranger"]],
    ["parent", () => t.token(4, { [NORTH]: [] }), ["mine", "guarded"]],
    ["delegate of the parent", () => t.token(1020, { [NORTH]: [] }), ["mine", "guarded"]],
    ["teacher", () => t.token(3, { [NORTH]: [] }), ["taught"]],
    ["another parent", () => t.token(1016, { [NORTH]: [] }), []],
  ];
  for (const [role, token, visible] of cases) {
    it(`${role}: list, get, detail and export show exactly their students`, async () => {
      const tk = await token();
      const all = { mine, guarded, taught, stranger };
      const listed = await ids(tk);
      const sheet = await exported(tk);
      for (const [name, id] of Object.entries(all)) {
        const expected = visible.includes(name as never);
        expect(listed.includes(id), `${role} lists ${name}`).toBe(expected);
        expect(await sees(tk, id), `${role} gets ${name}`).toBe(expected);
        expect(sheet.includes(`<c r="A`) && new RegExp(`<v>${id}</v>`).test(sheet), `${role} exports ${name}`).toBe(
          expected,
        );
      }
    });
  }

  it("a caller with no school is refused (403)", async () => {
    const res = await t.request("/api/v1/student", { token: await t.token(2, {}), school: NORTH });
    expect(res.status).toBe(403);
  });

  it("the export carries the list's filters", async () => {
    const sheet = await exported(await admin(t));
    expect(sheet).toContain("First name");
    const filtered = await t.request("/api/v1/student/export?family=1", { token: await admin(t), school: NORTH });
    const xml = strFromU8(
      unzipSync(new Uint8Array(await filtered.arrayBuffer()))["xl/worksheets/sheet1.xml"] ?? new Uint8Array(),
    );
    expect(xml).toContain(`<v>${mine}</v>`);
    expect(xml).not.toContain(`<v>${stranger}</v>`);
  });
});

describe("students export: the list's query", () => {
  const t = makeTestApp();
  const tag = u("Orden");
  const made: { id: number; lastName: string }[] = [];
  beforeAll(async () => {
    for (const lastName of ["Beta", "Alpha", "Beta", "Gamma", "Alpha", "Beta"]) {
      const s = await create(t, { firstName: tag, lastName });
      made.push({ id: s.id, lastName });
    }
  });
  const ids = async (query: string) => {
    const res = await t.request(`/api/v1/student/export?name=${tag}${query}`, { token: await admin(t), school: NORTH });
    expect(res.status, await res.clone().text()).toBe(200);
    return readXlsx(new Uint8Array(await res.arrayBuffer()))
      .slice(1)
      .map((r) => r[0]);
  };
  const listed = async (query: string) =>
    (await allPages(t, `/api/v1/student?name=${tag}${query}`, { token: await admin(t), school: NORTH })).data.map(
      (r) => r.id,
    );

  it("applies the list's sort to the file's rows, ties broken by id as the list breaks them", async () => {
    const byName = [...made].sort((a, b) => a.lastName.localeCompare(b.lastName) || a.id - b.id).map((s) => s.id);
    expect(await ids("&sort=lastName")).toEqual(byName);
    expect(await ids("&sort=lastName")).toEqual(await listed("&sort=lastName"));
    expect(await ids("&sort=-lastName")).toEqual([...byName].reverse());
    expect(await ids("&sort=-lastName")).toEqual(await listed("&sort=-lastName"));
    expect(await ids("&sort=-createdAt,lastName")).toEqual(await listed("&sort=-createdAt,lastName"));
    // No sort: the list's default order, oldest first.
    expect(await ids("")).toEqual(made.map((s) => s.id));
  });

  it("a keyset over a sort with ties reads every row once, in order, across pages", async () => {
    const query = exportStudents.route.request?.query as { parse(v: unknown): Record<string, unknown> };
    for (const sort of ["lastName", "-lastName"]) {
      const rows: unknown[] = [];
      for await (const row of exportStudents.rows(jobCtx(t.deps, "test", NORTH), query.parse({ name: tag, sort }), 2)) {
        rows.push(row[0]);
      }
      expect(rows).toEqual(await listed(`&sort=${sort}`));
    }
  });

  it("accepts page and pageSize and ignores them: the file is every row", async () => {
    expect(await ids("&page=3&pageSize=1")).toEqual(made.map((s) => s.id));
    expect(await ids("&pageSize=2&sort=lastName")).toHaveLength(made.length);
  });

  it("refuses unknown parameters and sort fields the list does not offer (400)", async () => {
    for (const query of ["&bogus=1", "&sort=firstName", "&page=0", "&pageSize=101"]) {
      const res = await t.request(`/api/v1/student/export?name=${tag}${query}`, {
        token: await admin(t),
        school: NORTH,
      });
      expect(res.status, query).toBe(400);
    }
  });
});

describe("deleted students: their id number, the list of them, restore", () => {
  type Student = { id: number; idNumber: string | null; deletedAt: string | null };
  const remove = async (t: TestApp, id: number) =>
    expect(
      (await t.request(`/api/v1/student/${id}`, { method: "DELETE", token: await admin(t), school: NORTH })).status,
    ).toBe(204);
  const restore = async (t: TestApp, id: number, token?: string, school = NORTH) =>
    t.request(`/api/v1/student/${id}/restore`, { method: "PATCH", token: token ?? (await admin(t)), school });

  it("a deleted student's id number is free: a new student may take it, by create or update", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const idNumber = u("S");
    const old = await create(t, { firstName: "Old", lastName: u("L"), idNumber });
    await remove(t, old.id);
    const taken = await create(t, { firstName: "New", lastName: u("L"), idNumber });
    expect(taken.id).not.toBe(old.id);
    // A live student still holds it: a second one is refused.
    const dup = await t.request("/api/v1/student", {
      method: "POST",
      token,
      school: NORTH,
      body: { firstName: "Dup", lastName: "L", idNumber },
    });
    expect(dup.status).toBe(409);
    // By update: another deleted student's number.
    const other = u("S");
    const gone = await create(t, { firstName: "Gone", lastName: u("L"), idNumber: other });
    await remove(t, gone.id);
    const put = await t.request(`/api/v1/student/${taken.id}`, {
      method: "PUT",
      token,
      school: NORTH,
      body: { idNumber: other },
    });
    expect(put.status, await put.clone().text()).toBe(204);
  });

  it("restores a deleted student (200, audited) with the groups and guardians delete hid", async () => {
    const t = makeTestApp();
    const token = await admin(t);
    const s = await create(t, { firstName: "Re", lastName: u("L"), idNumber: u("S"), familyId: 1 });
    const p = await parentIn(t);
    expect((await link(t, s.id, p.id)).status).toBe(201);
    const [g] = await t.db
      .insert(groups)
      .values(
        withSearch(groups, {
          schoolId: NORTH,
          name: u("G"),
          level: "elementary",
          schoolYear: "2026-2027",
          createdAt: AT,
          updatedAt: AT,
        }),
      )
      .returning();
    await t.db
      .insert(groupStudents)
      .values({ schoolId: NORTH, groupId: g?.id ?? 0, studentId: s.id, createdAt: AT, updatedAt: AT });
    await remove(t, s.id);
    t.clock.advance(60);

    const res = await restore(t, s.id, undefined);
    expect(res.status, await res.clone().text()).toBe(200);
    const record = (await res.json()) as Student & { familyId: number };
    expect(record).toMatchObject({ id: s.id, deletedAt: null, familyId: 1 });
    const detail = await t.request(`/api/v1/student/${s.id}/detail`, { token, school: NORTH });
    expect(detail.status).toBe(200);
    const d = (await detail.json()) as { guardians: { parentId: number }[]; groups: { id: number }[] };
    expect(d.guardians.map((x) => x.parentId)).toEqual([p.id]);
    expect(d.groups.map((x) => x.id)).toEqual([g?.id]);
    const log = await t.request(`/api/v1/audit-log?record=student:${s.id}`, { token, school: NORTH });
    const entries = ((await log.json()) as { data: { action: string; changes: Record<string, unknown> }[] }).data;
    expect(entries.map((e) => e.action)).toEqual(["restore", "delete", "create"]);
    expect(entries[0]?.changes).toEqual({ deletedAt: { old: "2026-11-23T15:00:00.000Z", new: null } });
  });

  it("refuses: another school's or an unknown id (404), a student not deleted (409), an id number now taken (409)", async () => {
    const t = makeTestApp();
    const theirs = await create(t, { firstName: "Th", lastName: u("L") }, SOUTH);
    const southToken = await southAdmin(t);
    expect(
      (await t.request(`/api/v1/student/${theirs.id}`, { method: "DELETE", token: southToken, school: SOUTH })).status,
    ).toBe(204);
    const notOurs = await restore(t, theirs.id);
    expect(notOurs.status).toBe(404);
    expect((await problem(notOurs)).detail).toBe(`Student ${theirs.id} not found`);
    expect((await restore(t, 987654321)).status).toBe(404);

    const live = await create(t, { firstName: "Li", lastName: u("L") });
    const notDeleted = await restore(t, live.id);
    expect(notDeleted.status).toBe(409);
    expect((await problem(notDeleted)).detail).toBe(`Student ${live.id} is not deleted`);

    const idNumber = u("S");
    const old = await create(t, { firstName: "Old", lastName: u("L"), idNumber });
    await remove(t, old.id);
    const holder = await create(t, { firstName: "Holder", lastName: u("L"), idNumber });
    const held = await restore(t, old.id);
    expect(held.status).toBe(409);
    expect((await problem(held)).detail).toBe(
      `Student ${holder.id} now has the id number ${idNumber}; change or delete that student's id number first`,
    );
    const [row] = await t.db.select().from(students).where(eq(students.id, old.id));
    expect(row?.deletedAt).not.toBeNull();
    // Once the holder gives the number up, the restore goes through.
    const put = await t.request(`/api/v1/student/${holder.id}`, {
      method: "PUT",
      token: await admin(t),
      school: NORTH,
      body: { idNumber: null },
    });
    expect(put.status).toBe(204);
    expect((await restore(t, old.id)).status).toBe(200);
    // Staff who only read may not restore.
    const reader = await t.token(1001, { [NORTH]: ["student.read"] });
    await remove(t, old.id);
    expect((await restore(t, old.id, reader)).status).toBe(403);
  });

  it("lists the school's deleted students with deleted=true, to holders of student.read only", async () => {
    const t = makeTestApp();
    const live = await create(t, { firstName: "Li", lastName: u("L"), familyId: 1 });
    const gone = await create(t, { firstName: "Go", lastName: u("L"), familyId: 1 });
    const theirs = await create(t, { firstName: "Th", lastName: u("L") }, SOUTH);
    await remove(t, gone.id);
    expect(
      (
        await t.request(`/api/v1/student/${theirs.id}`, {
          method: "DELETE",
          token: await southAdmin(t),
          school: SOUTH,
        })
      ).status,
    ).toBe(204);
    const listed = async (token: string, query: string) => {
      const page = await allPages<Student>(t, `/api/v1/student?${query}`, { token, school: NORTH });
      return page.data;
    };
    const staff = await t.token(1001, { [NORTH]: ["student.read"] });
    const deleted = await listed(staff, "deleted=true");
    expect(deleted.map((s) => s.id)).toContain(gone.id);
    expect(deleted.map((s) => s.id)).not.toContain(live.id);
    expect(deleted.map((s) => s.id)).not.toContain(theirs.id);
    expect(deleted.find((s) => s.id === gone.id)?.deletedAt).toBe("2026-11-23T15:00:00.000Z");
    expect(deleted.every((s) => s.deletedAt !== null)).toBe(true);
    const present = await listed(staff, "deleted=false&family=1");
    expect(present.map((s) => s.id)).toContain(live.id);
    expect(present.map((s) => s.id)).not.toContain(gone.id);
    // With other filters, and in the export.
    expect((await listed(staff, "deleted=true&family=1")).map((s) => s.id)).toContain(gone.id);
    const file = await t.request("/api/v1/student/export?deleted=true", { token: staff, school: NORTH });
    const xml = strFromU8(
      unzipSync(new Uint8Array(await file.arrayBuffer()))["xl/worksheets/sheet1.xml"] ?? new Uint8Array(),
    );
    expect(xml).toContain(`<v>${gone.id}</v>`);
    expect(xml).not.toContain(`<v>${live.id}</v>`);
    // The family's parent sees no deleted child.
    expect(await listed(await t.token(4, { [NORTH]: [] }), "deleted=true")).toEqual([]);
    expect((await t.request("/api/v1/student?deleted=yes", { token: staff, school: NORTH })).status).toBe(400);
  });
});
