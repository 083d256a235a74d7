/**
 * Families: create with members, a family number unique per school (409), a
 * student or parent in two families (409), the school's parent limit (422, also under concurrent
 * writes), ids of another school (404), replacing members, delete (members stay, in no family),
 * members and existence by number, the parent limit, validating ids, and visibility per role on
 * every read: staff see the school's families, a parent and their delegate only their own, a
 * teacher without family.read a 403.
 */

import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { families } from "../src/db/schema/family";
import { parents } from "../src/db/schema/parent";
import { students } from "../src/db/schema/student";
import { withSearch } from "../src/db/search";
import { jobCtx } from "../src/lib/context";
import type { Page } from "../src/lib/pagination";
import { grantsOf } from "../src/modules";
import { addFamilyParents } from "../src/modules/family/resource";
import { countingTestApp, DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const PATH = "/api/v1/family";

type Family = {
  id: number;
  familyNumber: string;
  name: string;
  parents: { id: number; userId: number; firstName: string; lastName: string; relationship: string }[];
  students: { id: number; firstName: string; lastName: string; level: string | null; status: string }[];
  parentCount: number;
  studentCount: number;
};

const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0], extra: string[] = []) =>
  t.token(userId, { [school]: [...grantsOf(role).map((p) => p.name), ...extra] });
const northAdmin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");
const southAdmin = (t: TestApp) => as(t, DEMO.southAdmin.id, SOUTH, "school-admin");
const demoParent = (t: TestApp) => as(t, DEMO.northParent.id, NORTH, "parent");

let next = 0;
const newPhone = () => `+1555${5_300_000 + ++next}`;
const number = () => `F-T${++next}-${Math.random().toString(36).slice(2, 6)}`;

/** A parent profile in `school` (made through the API), answered with its id and user id. */
async function newParent(t: TestApp, school = NORTH) {
  const res = await t.request("/api/v1/parent", {
    method: "POST",
    token: school === NORTH ? await northAdmin(t) : await southAdmin(t),
    body: { phone: newPhone(), firstName: "Fam", lastName: `P${next}`, relationship: "mother" },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: number; userId: number };
}

/** A student in `school` (the students module is built elsewhere: a row, as its migration has it). */
async function newStudent(t: TestApp, school = NORTH, extra: Partial<typeof students.$inferInsert> = {}) {
  const at = t.clock.now().toISOString();
  const [row] = await t.db
    .insert(students)
    .values(
      withSearch(students, {
        schoolId: school,
        firstName: "Kid",
        lastName: `S${++next}`,
        createdAt: at,
        updatedAt: at,
        ...extra,
      }),
    )
    .returning({ id: students.id });
  if (!row) throw new Error("no student");
  return row.id;
}

async function create(t: TestApp, body: Record<string, unknown>, token?: string) {
  return t.request(PATH, { method: "POST", token: token ?? (await northAdmin(t)), body });
}

async function made(t: TestApp, body: Record<string, unknown> = {}, token?: string) {
  const res = await create(t, { familyNumber: number(), name: "Family", ...body }, token);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Family;
}

const put = async (t: TestApp, id: number, body: Record<string, unknown>) =>
  t.request(`${PATH}/${id}`, { method: "PUT", token: await northAdmin(t), body });

const read = async (t: TestApp, id: number, token?: string) => {
  const res = await t.request(`${PATH}/${id}`, { token: token ?? (await northAdmin(t)) });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Family;
};

describe("families: create", () => {
  it("creates a family with its parents and students, and reads them back", async () => {
    const t = makeTestApp();
    const p = await newParent(t);
    const s = await newStudent(t, NORTH, { level: "elementary" });
    const familyNumber = number();
    const res = await create(t, { familyNumber, name: "García López", parentIds: [p.id], studentIds: [s] });
    expect(res.status, await res.clone().text()).toBe(201);
    const family = (await res.json()) as Family;
    expect(family).toMatchObject({
      familyNumber,
      name: "García López",
      parentCount: 1,
      studentCount: 1,
      parents: [{ id: p.id, userId: p.userId, firstName: "Fam", relationship: "mother" }],
      students: [{ id: s, firstName: "Kid", level: "elementary", status: "active" }],
    });
    expect(await read(t, family.id)).toEqual(family);
    const [profile] = await t.db.select().from(parents).where(eq(parents.id, p.id));
    expect(profile?.familyId).toBe(family.id);
  });

  it("409s a family number the school already has; another school may use it", async () => {
    const t = makeTestApp();
    const familyNumber = number();
    await made(t, { familyNumber });
    const again = await create(t, { familyNumber, name: "Other" });
    expect(again.status).toBe(409);
    expect((await problem(again)).detail).toMatch(/family number/);
    expect((await create(t, { familyNumber, name: "South" }, await southAdmin(t))).status).toBe(201);
  });

  it("409s a family number the school has in another case or with other accents, on create and update", async () => {
    const t = makeTestApp();
    const tag = `${++next}${Math.random().toString(36).slice(2, 6)}`;
    const original = await made(t, { familyNumber: `Fá-${tag}` });
    for (const familyNumber of [`FÁ-${tag}`, `fa-${tag}`, `FA-${tag}`.toUpperCase()]) {
      const res = await create(t, { familyNumber, name: "Other" });
      expect(res.status, familyNumber).toBe(409);
      expect((await problem(res)).detail).toBe(
        "A family with this family number already exists in this school (numbers that differ only in case or accents are the same)",
      );
    }
    // The demo school's "F-0001", renumbered into, is taken too; its own number in another case is not a clash.
    const renumbered = await put(t, original.id, { familyNumber: "f-0001" });
    expect(renumbered.status).toBe(409);
    expect((await problem(renumbered)).detail).toBe(
      "A family with this family number already exists in this school (numbers that differ only in case or accents are the same)",
    );
    expect((await put(t, original.id, { familyNumber: `FA-${tag}` })).status).toBe(204);
    expect((await read(t, original.id)).familyNumber).toBe(`FA-${tag}`);
  });

  it("409s a student or a parent already in another family, and changes nothing", async () => {
    const t = makeTestApp();
    const p = await newParent(t);
    const s = await newStudent(t);
    const first = await made(t, { parentIds: [p.id], studentIds: [s] });
    const n = number();
    const student = await create(t, { familyNumber: n, name: "Second", studentIds: [s] });
    expect(student.status).toBe(409);
    expect((await problem(student)).detail).toMatch(/a student in two families/);
    const parent = await create(t, { familyNumber: n, name: "Second", parentIds: [p.id] });
    expect(parent.status).toBe(409);
    expect((await problem(parent)).detail).toMatch(/a parent in two families/);
    expect(await t.db.select().from(families).where(eq(families.familyNumber, n))).toEqual([]);
    expect((await read(t, first.id)).studentCount).toBe(1);
  });

  it("422s parents beyond the school's limit (2 in the demo school), naming it", async () => {
    const t = makeTestApp();
    const ids = [(await newParent(t)).id, (await newParent(t)).id, (await newParent(t)).id];
    const res = await create(t, { familyNumber: number(), name: "Big", parentIds: ids });
    expect(res.status).toBe(422);
    expect((await problem(res)).detail).toBe(
      "This school allows at most 2 parents per family; the family would have 3",
    );
    expect((await made(t, { parentIds: ids.slice(0, 2) })).parentCount).toBe(2);
  });

  it("answers 404 for ids of another school, as if absent", async () => {
    const t = makeTestApp();
    const theirParent = await newParent(t, SOUTH);
    const theirStudent = await newStudent(t, SOUTH);
    const p = await create(t, { familyNumber: number(), name: "X", parentIds: [theirParent.id] });
    expect(p.status).toBe(404);
    expect((await problem(p)).detail).toMatch(/Parent/);
    const s = await create(t, { familyNumber: number(), name: "X", studentIds: [theirStudent] });
    expect(s.status).toBe(404);
    expect((await problem(s)).detail).toMatch(/Student/);
    const deleted = await newStudent(t, NORTH, { deletedAt: "2026-11-01T00:00:00.000Z" });
    expect((await create(t, { familyNumber: number(), name: "X", studentIds: [deleted] })).status).toBe(404);
  });

  it("refuses bad input with 400s", async () => {
    const t = makeTestApp();
    for (const body of [
      { name: "No number" },
      { familyNumber: "", name: "Empty" },
      { familyNumber: "F-1", name: "x".repeat(201) },
      { familyNumber: "F-1", name: "Dup", studentIds: [1, 1] },
      { familyNumber: "F-1", name: "Zero", parentIds: [0] },
      { familyNumber: "F-1", name: "Many", studentIds: Array.from({ length: 51 }, (_, i) => i + 1) },
      { familyNumber: "F-1\u202e", name: "Bidi" },
      { familyNumber: "F-1", name: "Extra", schoolId: 2 },
    ]) {
      const res = await create(t, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const admin = await northAdmin(t);
    expect((await t.request(`${PATH}?name=${"x".repeat(49)}`, { token: admin })).status).toBe(400);
    expect((await t.request(`${PATH}?sort=members`, { token: admin })).status).toBe(400);
    expect((await put(t, 1, {})).status).toBe(400);
    expect((await t.request(`${PATH}/validate`, { method: "POST", token: admin, body: { ids: [] } })).status).toBe(400);
  });
});

describe("families: list and get", () => {
  it("filters by family number and name, sorts, and counts", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const a = await made(t, { name: "Zeta Unique" });
    const b = await made(t, { name: "Alpha Unique" });
    const byNumber = (await (
      await t.request(`${PATH}?familyNumber=${a.familyNumber}`, { token })
    ).json()) as Page<Family>;
    expect(byNumber.data.map((f) => f.id)).toEqual([a.id]);
    const byName = (await (
      await t.request(`${PATH}?name=Unique&sort=name&pageSize=100`, { token })
    ).json()) as Page<Family>;
    expect(byName.data.map((f) => f.id)).toEqual([b.id, a.id]);
    expect(byName.total).toBe(2);
  });

  it("reads a page and a family in one D1 call each", async () => {
    const { t, measure } = countingTestApp();
    const token = await northAdmin(t);
    const listed = await measure(() => t.request(`${PATH}?name=Parent`, { token }));
    expect(listed.res.status).toBe(200);
    expect(listed.calls).toBe(1);
    const got = await measure(() => t.request(`${PATH}/1`, { token }));
    expect(got.res.status).toBe(200);
    expect(((await got.res.json()) as Family).parents.map((p) => p.userId)).toContain(DEMO.northParent.id);
    expect(got.calls).toBe(1);
  });
});

describe("families: update and delete", () => {
  it("renames and replaces members; members not listed leave; [] empties", async () => {
    const t = makeTestApp();
    const [p1, p2] = [await newParent(t), await newParent(t)];
    const [s1, s2] = [await newStudent(t), await newStudent(t)];
    const f = await made(t, { parentIds: [p1.id], studentIds: [s1] });
    expect((await put(t, f.id, { name: "Renamed", parentIds: [p2.id], studentIds: [s1, s2] })).status).toBe(204);
    let now = await read(t, f.id);
    expect(now.name).toBe("Renamed");
    expect(now.parents.map((p) => p.id)).toEqual([p2.id]);
    expect(now.students.map((s) => s.id)).toEqual([s1, s2]);
    const [left] = await t.db.select().from(parents).where(eq(parents.id, p1.id));
    expect(left?.familyId).toBeNull();
    expect((await put(t, f.id, { studentIds: [] })).status).toBe(204);
    now = await read(t, f.id);
    expect(now.students).toEqual([]);
    expect(now.parents.map((p) => p.id)).toEqual([p2.id]);
  });

  it("applies the rules of create: 409 number and two families, 422 limit, 404 unknown", async () => {
    const t = makeTestApp();
    const other = await made(t);
    const s = await newStudent(t);
    await made(t, { studentIds: [s] });
    const f = await made(t);
    expect((await put(t, f.id, { familyNumber: other.familyNumber })).status).toBe(409);
    expect((await put(t, f.id, { studentIds: [s] })).status).toBe(409);
    const three = [(await newParent(t)).id, (await newParent(t)).id, (await newParent(t)).id];
    expect((await put(t, f.id, { parentIds: three })).status).toBe(422);
    // Replacing keeps within the limit: two new parents in place of the two there.
    expect((await put(t, f.id, { parentIds: three.slice(0, 2) })).status).toBe(204);
    expect((await put(t, f.id, { parentIds: three.slice(1, 3) })).status).toBe(204);
    expect((await read(t, f.id)).parents.map((p) => p.id)).toEqual(three.slice(1, 3));
    expect((await put(t, 987654, { name: "Nobody" })).status).toBe(404);
  });

  it("deletes a family; its parents and students stay, in no family", async () => {
    const t = makeTestApp();
    const p = await newParent(t);
    const s = await newStudent(t);
    const f = await made(t, { parentIds: [p.id], studentIds: [s] });
    const res = await t.request(`${PATH}/${f.id}`, { method: "DELETE", token: await northAdmin(t) });
    expect(res.status).toBe(204);
    expect((await t.request(`${PATH}/${f.id}`, { token: await northAdmin(t) })).status).toBe(404);
    const [profile] = await t.db.select().from(parents).where(eq(parents.id, p.id));
    const [student] = await t.db.select().from(students).where(eq(students.id, s));
    expect(profile?.familyId).toBeNull();
    expect(student?.familyId).toBeNull();
    expect((await t.request(`${PATH}/${f.id}`, { method: "DELETE", token: await northAdmin(t) })).status).toBe(404);
  });
});

describe("families: by number, parent limit, validate", () => {
  it("answers members and existence by family number, never another school's", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const s = await newStudent(t);
    const f = await made(t, { studentIds: [s] });
    const members = await t.request(`${PATH}/members?familyNumber=${encodeURIComponent(f.familyNumber)}`, { token });
    expect(members.status).toBe(200);
    expect(((await members.json()) as Family).students.map((x) => x.id)).toEqual([s]);
    const south = await made(t, {}, await southAdmin(t));
    expect(
      (await t.request(`${PATH}/members?familyNumber=${encodeURIComponent(south.familyNumber)}`, { token })).status,
    ).toBe(404);
    const exists = async (n: string, tk = token) =>
      (
        (await (await t.request(`${PATH}/exists?familyNumber=${encodeURIComponent(n)}`, { token: tk })).json()) as {
          exists: boolean;
        }
      ).exists;
    expect(await exists(f.familyNumber)).toBe(true);
    expect(await exists(south.familyNumber)).toBe(false);
    expect(await exists(south.familyNumber, await southAdmin(t))).toBe(true);
    expect(await exists("F-none")).toBe(false);
  });

  it("finds a family by its number in any case and with or without accents: members, exists, the filter", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const tag = `${++next}${Math.random().toString(36).slice(2, 6)}`;
    const f = await made(t, { familyNumber: `Núm-${tag}` });
    for (const asked of [`NUM-${tag}`, `núm-${tag}`, `Num-${tag}`.toLowerCase()]) {
      const members = await t.request(`${PATH}/members?familyNumber=${encodeURIComponent(asked)}`, { token });
      expect(members.status, asked).toBe(200);
      expect(((await members.json()) as Family).id).toBe(f.id);
      const exists = await t.request(`${PATH}/exists?familyNumber=${encodeURIComponent(asked)}`, { token });
      expect(await exists.json(), asked).toEqual({ exists: true });
      const listed = await t.request(`${PATH}?familyNumber=${encodeURIComponent(asked)}`, { token });
      expect(
        ((await listed.json()) as Page<Family>).data.map((x) => x.id),
        asked,
      ).toEqual([f.id]);
    }
    // The demo family "F-0001", asked as "f-0001".
    const demo = await t.request(`${PATH}/members?familyNumber=f-0001`, { token });
    expect(((await demo.json()) as Family).familyNumber).toBe("F-0001");
  });

  it("answers the parent limit and whether one more may join", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const f = await made(t, { parentIds: [(await newParent(t)).id] });
    const limit = async () => (await (await t.request(`${PATH}/${f.id}/parent-limit`, { token })).json()) as object;
    expect(await limit()).toEqual({ limit: 2, parents: 1, canAdd: true });
    const second = await newParent(t);
    await addFamilyParents(jobCtx(t.deps, "test", NORTH), f.id, [second.id]);
    expect(await limit()).toEqual({ limit: 2, parents: 2, canAdd: false });
    expect((await t.request(`${PATH}/987654/parent-limit`, { token })).status).toBe(404);
  });

  it("validates ids: another school's are missing", async () => {
    const t = makeTestApp();
    const ours = await made(t);
    const theirs = await made(t, {}, await southAdmin(t));
    const res = await t.request(`${PATH}/validate`, {
      method: "POST",
      token: await northAdmin(t),
      body: { ids: [ours.id, theirs.id, 987654] },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ valid: [ours.id], missing: [theirs.id, 987654] });
  });
});

describe("families: the parent limit under concurrency", () => {
  it("concurrent additions never exceed the limit: the count is in the UPDATE's WHERE", async () => {
    const t = makeTestApp();
    const f = await made(t);
    const candidates = await Promise.all([1, 2, 3, 4, 5].map(() => newParent(t)));
    const ctx = jobCtx(t.deps, "test", NORTH);
    const results = await Promise.allSettled(candidates.map((p) => addFamilyParents(ctx, f.id, [p.id])));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    for (const r of results) {
      if (r.status === "rejected") expect([409, 422]).toContain((r.reason as { status: number }).status);
    }
    const inFamily = await t.db.select({ id: parents.id }).from(parents).where(eq(parents.familyId, f.id));
    expect(inFamily).toHaveLength(2);
  });

  it("concurrent requests: one family gets a student, and no family more parents than the limit", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const s = await newStudent(t);
    const created = await Promise.all(
      [1, 2, 3, 4].map(() =>
        t.request(PATH, { method: "POST", token, body: { familyNumber: number(), name: "Race", studentIds: [s] } }),
      ),
    );
    expect(created.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    const f = await made(t);
    const ps = await Promise.all([1, 2, 3, 4].map(() => newParent(t)));
    const puts = await Promise.all(
      [[ps[0]], [ps[1], ps[2]], [ps[3]], [ps[0], ps[3]]].map((group) =>
        t.request(`${PATH}/${f.id}`, {
          method: "PUT",
          token,
          body: { parentIds: group.map((p) => p?.id) },
        }),
      ),
    );
    for (const r of puts) expect([204, 409]).toContain(r.status);
    const members = await t.db
      .select({ id: parents.id })
      .from(parents)
      .where(
        inArray(
          parents.id,
          ps.map((p) => p.id),
        ),
      );
    expect(members.length).toBe(4);
    expect((await read(t, f.id)).parentCount).toBeLessThanOrEqual(2);
  });
});

describe("families: visibility per role", () => {
  const reads = (id: number, familyNumber: string) =>
    [
      // Filtered by the number: the demo seed's 251 families fill many pages.
      ["GET", `${PATH}?familyNumber=${encodeURIComponent(familyNumber)}`],
      ["GET", `${PATH}/${id}`],
      ["GET", `${PATH}/members?familyNumber=${encodeURIComponent(familyNumber)}`],
      ["GET", `${PATH}/exists?familyNumber=${encodeURIComponent(familyNumber)}`],
      ["GET", `${PATH}/${id}/parent-limit`],
      ["POST", `${PATH}/validate`],
    ] as const;
  const call = (t: TestApp, token: string, [method, path]: readonly [string, string], id: number) =>
    t.request(path, { method, token, body: method === "POST" ? { ids: [id] } : undefined });

  it("staff see every family of the school on every read", async () => {
    const t = makeTestApp();
    const f = await made(t);
    for (const token of [await as(t, 20, NORTH, "staff"), await northAdmin(t)]) {
      for (const op of reads(f.id, f.familyNumber)) {
        const res = await call(t, token, op, f.id);
        expect(res.status, op.join(" ")).toBe(200);
        const body = (await res.json()) as Record<string, unknown>;
        if (op[1].startsWith(`${PATH}?`)) expect((body.data as Family[]).map((x) => x.id)).toContain(f.id);
        if (op[1].includes("exists")) expect(body.exists).toBe(true);
        if (op[0] === "POST") expect(body.valid).toEqual([f.id]);
      }
    }
  });

  it("a teacher without family.read gets 403 on every read", async () => {
    const t = makeTestApp();
    const token = await as(t, DEMO.northTeacher.id, NORTH, "teacher");
    for (const op of reads(1, "F-0001")) {
      expect((await call(t, token, op, 1)).status, op.join(" ")).toBe(403);
    }
  });

  it("a parent sees only their own family on every read", async () => {
    const t = makeTestApp();
    const token = await demoParent(t);
    const other = await made(t);
    for (const op of reads(1, "F-0001")) {
      const res = await call(t, token, op, 1);
      expect(res.status, op.join(" ")).toBe(200);
    }
    const page = (await (await t.request(PATH, { token })).json()) as Page<Family>;
    expect(page.data.map((f) => f.id)).toEqual([1]);
    expect(page.data[0]?.students.map((s) => s.id)).toContain(1);
    for (const op of reads(other.id, other.familyNumber).slice(1)) {
      const res = await call(t, token, op, other.id);
      if (op[1].includes("exists")) expect(await res.json()).toEqual({ exists: false });
      else if (op[0] === "POST") expect(await res.json()).toEqual({ valid: [], missing: [other.id] });
      else expect(res.status, op.join(" ")).toBe(404);
    }
    expect((await create(t, { familyNumber: number(), name: "Mine" }, token)).status).toBe(403);
  });

  it("a parent's valid delegate sees that parent's family, and only it", async () => {
    const t = makeTestApp();
    const phone = newPhone();
    const res = await t.request("/api/v1/delegate", {
      method: "POST",
      token: await demoParent(t),
      body: { phone, firstName: "Del", validFrom: "2026-11-01", validUntil: "2026-12-31" },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { userId } = (await res.json()) as { userId: number };
    const other = await made(t);
    const token = await as(t, userId, NORTH, "parent");
    const page = (await (await t.request(PATH, { token })).json()) as Page<Family>;
    expect(page.data.map((f) => f.id)).toEqual([1]);
    expect((await t.request(`${PATH}/1`, { token })).status).toBe(200);
    expect((await t.request(`${PATH}/${other.id}`, { token })).status).toBe(404);
    // Out of the delegation's dates, nothing.
    t.clock.current = new Date("2027-02-01T15:00:00.000Z");
    const later = await as(t, userId, NORTH, "parent");
    expect(((await (await t.request(PATH, { token: later })).json()) as Page<Family>).data).toEqual([]);
  });

  it("another school's admin never sees this school's families", async () => {
    const t = makeTestApp();
    const f = await made(t);
    const token = await southAdmin(t);
    expect((await t.request(`${PATH}/${f.id}`, { token })).status).toBe(404);
    const page = (await (await t.request(`${PATH}?pageSize=100`, { token })).json()) as Page<Family>;
    expect(page.data.map((x) => x.id)).not.toContain(f.id);
  });
});
