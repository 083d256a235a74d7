/**
 * Parents: the parent role's profiles in the current school. Creating by phone (a new, invited user or a known one), 409 for a
 * second time (also when requests race), visibility per role (staff, a teacher with and without
 * parent.read / parent.contact, a parent sees only themself), editing, removing the role (the user
 * stays, the delegates go), and the .xlsx export.
 */
import { and, eq } from "drizzle-orm";
import { strFromU8, unzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { roleUsers, users } from "../src/db/schema/core";
import { delegates } from "../src/db/schema/delegate";
import { parents } from "../src/db/schema/parent";
import { jobCtx } from "../src/lib/context";
import type { Page } from "../src/lib/pagination";
import { grantsOf } from "../src/modules";
import { exportRows } from "../src/modules/parent/resource";
import { allPages, countingTestApp, DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const PATH = "/api/v1/parent";

type Parent = {
  id: number;
  userId: number;
  firstName: string;
  lastName: string;
  phone: string;
  email: string | null;
  relationship: string;
  familyId: number | null;
  status: string;
  createdAt: string;
  updatedAt: string;
};

const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0], extra: string[] = []) =>
  t.token(userId, { [school]: [...grantsOf(role).map((p) => p.name), ...extra] });
const northAdmin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");
const southAdmin = (t: TestApp) => as(t, DEMO.southAdmin.id, SOUTH, "school-admin");

let next = 0;
const newPhone = () => `+1555${5_200_000 + ++next}`;

async function add(t: TestApp, body: Record<string, unknown>, token?: string) {
  const res = await t.request(PATH, { method: "POST", token: token ?? (await northAdmin(t)), body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Parent;
}

const list = async (t: TestApp, token: string, query = "") => {
  const res = await t.request(`${PATH}${query}`, { token });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Page<Parent>;
};

describe("parents", () => {
  it("creates a parent by phone: an invited user, the relationship set, the profile read back", async () => {
    const t = makeTestApp();
    const phone = newPhone();
    const created = await add(t, {
      phone,
      firstName: "Lucia",
      lastName: "Hernandez",
      email: "lucia@example.test",
      relationship: "mother",
    });
    expect(created).toMatchObject({
      firstName: "Lucia",
      lastName: "Hernandez",
      phone,
      email: "lucia@example.test",
      relationship: "mother",
      familyId: null,
      status: "invited",
    });
    const [user] = await t.db.select().from(users).where(eq(users.id, created.userId));
    expect(user?.phone).toBe(phone);
    const got = await t.request(`${PATH}/${created.id}`, { token: await northAdmin(t) });
    expect(await got.json()).toEqual(created);
  });

  it("audits a new person's parent role and profile with who they are (the invited user's id)", async () => {
    const t = makeTestApp();
    const created = await add(t, { phone: newPhone(), firstName: "Auditada", relationship: "mother" });
    const trail = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, "create"), eq(auditLog.schoolId, NORTH)));
    const changesOf = (entity: string, recordId: number) =>
      JSON.parse(trail.find((a) => a.entity === entity && a.recordId === recordId)?.changes ?? "null");
    const [membership] = await t.db
      .select()
      .from(roleUsers)
      .where(and(eq(roleUsers.userId, created.userId), eq(roleUsers.schoolId, NORTH)));
    expect(changesOf("role-user", membership?.id ?? 0)).toEqual({
      userId: { old: null, new: created.userId },
      roleId: { old: null, new: 5 },
    });
    expect(changesOf("parent", created.id)).toEqual({
      userId: { old: null, new: created.userId },
      relationship: { old: null, new: "mother" },
    });
  });

  it("attaches a known number to the same user (their name kept); a parent already here is a 409", async () => {
    const t = makeTestApp();
    const teacherAsParent = await add(t, {
      phone: DEMO.northTeacher.phone,
      firstName: "Other",
      relationship: "father",
    });
    expect(teacherAsParent.userId).toBe(DEMO.northTeacher.id);
    expect(teacherAsParent.firstName).toBe("Tomas");
    const again = await t.request(PATH, {
      method: "POST",
      token: await northAdmin(t),
      body: { phone: DEMO.northTeacher.phone, firstName: "X", relationship: "father" },
    });
    expect(again.status).toBe(409);
    expect((await problem(again)).detail).toBe("This person is already a parent in this school");
    // The same person may be a parent in another school.
    const south = await t.request(PATH, {
      method: "POST",
      token: await southAdmin(t),
      body: { phone: DEMO.northTeacher.phone, firstName: "X", relationship: "father" },
    });
    expect(south.status).toBe(201);
  });

  it("makes one parent of concurrent identical requests: one 201, the rest 409", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const body = { phone: newPhone(), firstName: "Race", relationship: "guardian" };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => t.request(PATH, { method: "POST", token, body })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const [user] = await t.db.select().from(users).where(eq(users.phone, body.phone));
    expect(
      await t.db
        .select()
        .from(parents)
        .where(eq(parents.userId, user?.id ?? 0)),
    ).toHaveLength(1);
  });

  it("refuses bad input: no relationship, an unknown one, a bad phone, unknown fields, a long name filter", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    for (const body of [
      { phone: newPhone(), firstName: "A" },
      { phone: newPhone(), firstName: "A", relationship: "uncle" },
      { phone: "12", firstName: "A", relationship: "mother" },
      { phone: newPhone(), firstName: "A", relationship: "mother", familyId: 1 },
    ]) {
      expect((await t.request(PATH, { method: "POST", token, body })).status).toBe(400);
    }
    expect((await t.request(`${PATH}?name=${"x".repeat(49)}`, { token })).status).toBe(400);
    expect((await t.request(`${PATH}?relationship=uncle`, { token })).status).toBe(400);
  });

  it("filters by name, relationship, status and family", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const a = await add(t, {
      phone: newPhone(),
      firstName: "Zacarias",
      lastName: "Filtro",
      relationship: "grandparent",
    });
    expect((await list(t, token, "?name=Zacar")).data.map((p) => p.id)).toEqual([a.id]);
    const grand = await list(t, token, "?relationship=grandparent&pageSize=100");
    expect(grand.data.every((p) => p.relationship === "grandparent")).toBe(true);
    expect(grand.data.map((p) => p.id)).toContain(a.id);
    const invited = await list(t, token, "?status=invited&name=Filtro");
    expect(invited.data.map((p) => p.id)).toEqual([a.id]);
    expect((await list(t, token, "?status=active&name=Filtro")).total).toBe(0);
    await t.db.update(parents).set({ familyId: 1 }).where(eq(parents.id, a.id));
    const family = await list(t, token, "?familyId=1&pageSize=100");
    expect(family.data.map((p) => p.id)).toContain(a.id);
    expect(family.data.every((p) => p.familyId === 1)).toBe(true);
  });

  it("shows each caller what their role allows", async () => {
    const t = makeTestApp();
    const created = await add(t, { phone: newPhone(), firstName: "Visible", relationship: "mother" });
    // Staff: every parent, with phones.
    const staff = await as(t, 99, NORTH, "staff");
    const all = await list(t, staff, "?name=Visible");
    expect(all.data[0]?.phone).toBe(created.phone);
    // A teacher granted parent.read but not parent.contact (nor user.contact): every parent, the
    // phone masked (the parent has no email).
    const reader = await as(t, DEMO.northTeacher.id, NORTH, "teacher", ["parent.read"]);
    const seen = await list(t, reader, "?name=Visible");
    expect(seen.data[0]).toMatchObject({
      id: created.id,
      phone: `${created.phone.slice(0, 3)}•••••••${created.phone.slice(-2)}`,
      email: null,
    });
    // ... and with parent.contact, the phone.
    const contact = await as(t, DEMO.northTeacher.id, NORTH, "teacher", ["parent.read", "parent.contact"]);
    expect((await list(t, contact, "?name=Visible")).data[0]?.phone).toBe(created.phone);
    // A plain teacher: no other parent of the school (only their own profile, if they are one).
    const teacher = await as(t, DEMO.northTeacher.id, NORTH, "teacher");
    const own = await list(t, teacher);
    expect(own.data.every((p) => p.userId === DEMO.northTeacher.id)).toBe(true);
    expect(own.total).toBeLessThanOrEqual(1);
    expect((await t.request(`${PATH}/${created.id}`, { token: teacher })).status).toBe(404);
    expect((await t.request(`${PATH}/export`, { token: teacher })).status).toBe(403);
    expect((await t.request(PATH, { method: "POST", token: teacher, body: {} })).status).toBe(403);
  });

  it("a parent, signed in, sees only themself (with their own phone and email)", async () => {
    const t = makeTestApp();
    await add(t, { phone: newPhone(), firstName: "Someone", relationship: "father" });
    const { accessToken } = await t.signIn(DEMO.northParent.phone);
    const page = await list(t, accessToken);
    expect(page.total).toBe(1);
    expect(page.data[0]).toMatchObject({
      userId: DEMO.northParent.id,
      phone: DEMO.northParent.phone,
      email: "parent.north@example.test",
    });
    const own = page.data[0]?.id ?? 0;
    expect((await t.request(`${PATH}/${own}`, { token: accessToken })).status).toBe(200);
    expect(
      (await t.request(`${PATH}/${own}`, { method: "PUT", token: accessToken, body: { relationship: "mother" } }))
        .status,
    ).toBe(403);
  });

  it("keeps schools apart: another school's parent is a 404 for every verb", async () => {
    const t = makeTestApp();
    const south = await add(t, { phone: newPhone(), firstName: "Sur", relationship: "mother" }, await southAdmin(t));
    const token = await northAdmin(t);
    expect((await t.request(`${PATH}/${south.id}`, { token })).status).toBe(404);
    expect(
      (await t.request(`${PATH}/${south.id}`, { method: "PUT", token, body: { relationship: "other" } })).status,
    ).toBe(404);
    expect((await t.request(`${PATH}/${south.id}`, { method: "DELETE", token })).status).toBe(404);
    expect((await list(t, token, "?name=Sur")).data.map((p) => p.id)).not.toContain(south.id);
  });

  it("updates the relationship and the person's name and email (204)", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const p = await add(t, { phone: newPhone(), firstName: "Old", relationship: "mother" });
    const res = await t.request(`${PATH}/${p.id}`, {
      method: "PUT",
      token,
      body: { relationship: "guardian", firstName: "New", email: "new@example.test" },
    });
    expect(res.status).toBe(204);
    const got = (await (await t.request(`${PATH}/${p.id}`, { token })).json()) as Parent;
    expect(got).toMatchObject({ relationship: "guardian", firstName: "New", email: "new@example.test" });
    expect((await t.request(`${PATH}/${p.id}`, { method: "PUT", token, body: {} })).status).toBe(400);
    expect((await t.request(`${PATH}/999999`, { method: "PUT", token, body: { firstName: "X" } })).status).toBe(404);
  });

  it("removes the parent role (the user stays; their delegates go)", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const p = await add(t, { phone: newPhone(), firstName: "Leaving", relationship: "mother" });
    const d = await t.request("/api/v1/delegate", {
      method: "POST",
      token,
      body: {
        parentId: p.id,
        phone: newPhone(),
        firstName: "Helper",
        validFrom: "2026-11-01",
        validUntil: "2026-12-31",
      },
    });
    expect(d.status).toBe(201);
    const student = await t.request("/api/v1/student", {
      method: "POST",
      token,
      body: { firstName: "Child", lastName: "Leaving", level: "elementary" },
    });
    const studentId = ((await student.json()) as { id: number }).id;
    const g = await t.request(`/api/v1/student/${studentId}/guardian`, {
      method: "POST",
      token,
      body: { parentId: p.id },
    });
    expect(g.status).toBe(201);
    const removed = await t.request(`${PATH}/${p.id}`, { method: "DELETE", token });
    expect(removed.status).toBe(204);
    // One batch audits the profile, the membership, each delegate and each guardianship that goes.
    const trail = await t.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.requestId, removed.headers.get("x-request-id") ?? ""));
    expect(trail.map((a) => `${a.entity}:${a.action}`).sort()).toEqual([
      "delegate:delete",
      "guardian:delete",
      "parent:delete",
      "role-user:delete",
    ]);
    expect((await t.request(`${PATH}/${p.id}`, { token })).status).toBe(404);
    expect((await t.request(`${PATH}/${p.id}`, { method: "DELETE", token })).status).toBe(404);
    const roles = await t.db
      .select()
      .from(roleUsers)
      .where(and(eq(roleUsers.userId, p.userId), eq(roleUsers.roleId, 5)));
    expect(roles).toEqual([]);
    expect(await t.db.select().from(users).where(eq(users.id, p.userId))).toHaveLength(1);
    expect(await t.db.select().from(delegates).where(eq(delegates.parentId, p.id))).toEqual([]);
  });

  it("reads a page and a record in one D1 call each", async () => {
    const { t, measure } = countingTestApp();
    const token = await northAdmin(t);
    const listed = await measure(() => t.request(`${PATH}?name=Paula`, { token }));
    expect(listed.res.status).toBe(200);
    expect(listed.calls).toBe(1);
    const got = await measure(() => t.request(`${PATH}/1`, { token }));
    expect(got.res.status).toBe(200);
    expect(got.calls).toBe(1);
  });
});

describe("parents export (.xlsx)", () => {
  const sheetOf = async (res: Response) => {
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const sheet = files["xl/worksheets/sheet1.xml"];
    if (!sheet) throw new Error("no sheet in the workbook");
    return strFromU8(sheet);
  };

  it("streams the filtered parents as a workbook, phones only with parent.contact", async () => {
    const t = makeTestApp();
    const a = await add(t, { phone: newPhone(), firstName: "Exportada", lastName: "Uno", relationship: "mother" });
    const b = await add(t, { phone: newPhone(), firstName: "Exportado", lastName: "Dos", relationship: "father" });
    const res = await t.request(`${PATH}/export?name=Export`, { token: await northAdmin(t) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    const xml = await sheetOf(res);
    for (const text of ["First name", "Exportada", "Exportado", a.phone, b.phone, "mother"])
      expect(xml).toContain(text);
    expect(xml).not.toContain("Paula");

    const filtered = await sheetOf(
      await t.request(`${PATH}/export?name=Export&relationship=father`, { token: await northAdmin(t) }),
    );
    expect(filtered).toContain("Exportado");
    expect(filtered).not.toContain("Exportada");

    const reader = await as(t, DEMO.northTeacher.id, NORTH, "teacher", ["parent.read"]);
    const plain = await sheetOf(await t.request(`${PATH}/export?name=Export`, { token: reader }));
    expect(plain).toContain("Exportada");
    expect(plain).not.toContain(a.phone ?? "");
  });

  it("reads every page, in the list's order (a keyset over createdAt, id)", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    for (let i = 0; i < 5; i++) await add(t, { phone: newPhone(), firstName: `Paged${i}`, relationship: "other" });
    const listed = await allPages<Parent>(t, PATH, { token });
    const ctx = { ...jobCtx(t.deps, "test", NORTH) };
    const rows: unknown[][] = [];
    for await (const row of exportRows(ctx, {}, 2)) rows.push(row);
    expect(rows.map((r) => r[0])).toEqual(listed.data.map((p) => p.id));
    const xml = await sheetOf(await t.request(`${PATH}/export`, { token }));
    // The header row and one row per parent.
    expect(xml.match(/<row /g)?.length).toBe(listed.total + 1);
  });
});
