/**
 * School administrators: the school-admin role's memberships in the current school.
 * Creating one by user id or by phone (an invited user), 409 for a second time (also when requests
 * race), editing the person, removing the role but not the user, and never the last administrator
 * (422, also when two removals race).
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { roleUsers, users } from "../src/db/schema/core";
import type { Page } from "../src/lib/pagination";
import { grantsOf } from "../src/modules";
import { DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const PATH = "/api/v1/school-administrator";

type Admin = {
  id: number;
  createdAt: string;
  updatedAt: string;
  userId: number;
  firstName: string;
  lastName: string;
  email: string | null;
  phone: string;
  status: "invited" | "active" | "inactive";
  since: string;
};

const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [school]: grantsOf(role).map((p) => p.name) });
const northAdmin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");
const southAdmin = (t: TestApp) => as(t, DEMO.southAdmin.id, SOUTH, "school-admin");

let next = 0;
const newPhone = () => `+1555${4_000_000 + ++next}`;

async function add(t: TestApp, body: Record<string, unknown>, token?: string, school?: number) {
  const res = await t.request(PATH, { method: "POST", token: token ?? (await northAdmin(t)), school, body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Admin;
}

/** A user's administrator memberships in every school, read in each database (docs/scaling.md "Shards"). */
const membershipsOf = async (t: TestApp, userId: number) =>
  (
    await Promise.all(
      Object.values(t.deps.shards ?? { DB: t.db }).map((db) =>
        db
          .select()
          .from(roleUsers)
          .where(and(eq(roleUsers.userId, userId), eq(roleUsers.roleId, 2))),
      ),
    )
  ).flat();

describe("school administrators", () => {
  it("lists and reads the current school's administrators (user fields and since)", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const page = (await (await t.request(PATH, { token })).json()) as Page<Admin>;
    expect(page.data).toEqual([
      {
        id: 1,
        createdAt: "2026-08-01T12:00:00.000Z",
        updatedAt: "2026-08-01T12:00:00.000Z",
        userId: DEMO.northAdmin.id,
        firstName: "Alma",
        lastName: "Admin",
        email: "admin.north@example.test",
        phone: DEMO.northAdmin.phone,
        status: "active",
        since: "2026-08-01T12:00:00.000Z",
      },
    ]);
    expect(await (await t.request(`${PATH}/1`, { token })).json()).toEqual(page.data[0]);
    // The teacher's membership (role_user 2) is not an administrator's; the south admin's is another school's.
    for (const id of [2, 4]) expect((await t.request(`${PATH}/${id}`, { token })).status).toBe(404);
    expect(((await (await t.request(`${PATH}?name=alm`, { token })).json()) as Page<Admin>).total).toBe(1);
    expect(((await (await t.request(`${PATH}?name=sofia`, { token })).json()) as Page<Admin>).total).toBe(0);
    // Staff read them (user.read); teachers do not.
    const staff = await as(t, DEMO.northTeacher.id, NORTH, "staff");
    expect((await t.request(PATH, { token: staff })).status).toBe(200);
    const teacher = await as(t, DEMO.northTeacher.id, NORTH, "teacher");
    expect((await t.request(PATH, { token: teacher })).status).toBe(403);
  });

  it("makes a member of the school an administrator by user id; another school's user is a 404", async () => {
    const t = makeTestApp();
    const created = await add(t, { userId: DEMO.northTeacher.id });
    expect(created).toMatchObject({
      userId: DEMO.northTeacher.id,
      firstName: "Tomas",
      status: "active",
      since: t.clock.now().toISOString(),
      createdAt: t.clock.now().toISOString(),
    });
    const [membership] = await t.db.select().from(roleUsers).where(eq(roleUsers.id, created.id));
    expect(membership).toMatchObject({ schoolId: NORTH, userId: DEMO.northTeacher.id, roleId: 2 });
    const [audit] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "school-administrator"), eq(auditLog.recordId, created.id)));
    expect(audit).toMatchObject({ action: "create", schoolId: NORTH, actorId: DEMO.northAdmin.id });

    const again = await t.request(PATH, {
      method: "POST",
      token: await northAdmin(t),
      body: { userId: DEMO.northTeacher.id },
    });
    expect(again.status).toBe(409);
    expect((await problem(again)).detail).toBe("This user is already an administrator of this school");

    // The south admin has no role in the north school: not the north school's to name.
    const outsider = await t.request(PATH, {
      method: "POST",
      token: await northAdmin(t),
      body: { userId: DEMO.southAdmin.id },
    });
    expect(outsider.status).toBe(404);
    expect((await problem(outsider)).detail).toBe(`User ${DEMO.southAdmin.id} not found`);
    expect(await membershipsOf(t, DEMO.southAdmin.id)).toHaveLength(1);
  });

  it("invites a new user by phone, and reuses a known number (one person administers two schools)", async () => {
    const t = makeTestApp();
    const phone = newPhone();
    const invited = await add(t, { phone, firstName: " Nora ", lastName: "Nuevo", email: "nora@example.test" });
    expect(invited).toMatchObject({
      phone,
      firstName: "Nora",
      lastName: "Nuevo",
      email: "nora@example.test",
      status: "invited",
    });
    const [user] = await t.db.select().from(users).where(eq(users.id, invited.userId));
    expect(user).toMatchObject({
      phone,
      status: "invited",
      isSuperAdmin: false,
      createdAt: t.clock.now().toISOString(),
    });
    const userAudit = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "user"), eq(auditLog.recordId, invited.userId)));
    expect(userAudit.map((r) => [r.action, r.schoolId])).toEqual([["create", NORTH]]);
    // The membership's row names the user the same batch invited.
    const [membershipAudit] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "school-administrator"), eq(auditLog.recordId, invited.id)));
    expect(JSON.parse(membershipAudit?.changes ?? "null")).toEqual({
      userId: { old: null, new: invited.userId },
      roleId: { old: null, new: 2 },
    });

    // The north admin's number, added in the south school: the same person; the south school sees
    // the name it gave, the north school (and the user row) still "Alma".
    const both = await add(t, { phone: DEMO.northAdmin.phone, firstName: "Someone Else" }, await southAdmin(t));
    expect(both).toMatchObject({ userId: DEMO.northAdmin.id, firstName: "Someone Else" });
    const [alma] = await t.db.select().from(users).where(eq(users.id, DEMO.northAdmin.id));
    expect(alma?.firstName).toBe("Alma");
    expect((await membershipsOf(t, DEMO.northAdmin.id)).map((m) => m.schoolId).sort()).toEqual([NORTH, SOUTH]);
    // And they show up in the south school's list only through its own membership.
    const south = (await (await t.request(PATH, { token: await southAdmin(t) })).json()) as Page<Admin>;
    expect(south.data.map((a) => a.userId)).toEqual([DEMO.southAdmin.id, DEMO.northAdmin.id]);
  });

  it("refuses bodies that are neither a user id nor a phone with a name (400)", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const post = (body: unknown) => t.request(PATH, { method: "POST", token, body });
    const cases: [unknown, string][] = [
      [{}, "userId"],
      [{ phone: newPhone() }, "firstName"],
      [{ userId: 3, phone: newPhone() }, "phone"],
      [{ userId: 3, firstName: "X" }, "firstName"],
      [{ phone: "5550000", firstName: "X" }, "phone"],
      [{ phone: newPhone(), firstName: "X", email: "nope" }, "email"],
      [{ userId: 0 }, "userId"],
      [{ userId: 3, roleId: 1 }, "roleId"],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(
        (await problem(res)).errors?.map((e) => e.path),
        JSON.stringify(body),
      ).toContain(field);
    }
  });

  it("makes one administrator of concurrent identical requests: one 201, the rest 409", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    for (const body of [{ userId: DEMO.northParent.id }, { phone: newPhone(), firstName: "Racer" }]) {
      const results = await Promise.all(
        Array.from({ length: 8 }, () => t.request(PATH, { method: "POST", token, body })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses, JSON.stringify(body)).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
      const winner = results.find((r) => r.status === 201);
      if (!winner) throw new Error("no 201");
      const { userId } = (await winner.json()) as Admin;
      expect(await membershipsOf(t, userId)).toHaveLength(1);
    }
  });

  it("updates the person's name and email (204), audited on both the administrator and the user", async () => {
    const t = makeTestApp();
    const admin = await add(t, { phone: newPhone(), firstName: "Old" });
    t.clock.advance(60);
    const token = await northAdmin(t);
    const res = await t.request(`${PATH}/${admin.id}`, {
      method: "PUT",
      token,
      body: { firstName: "New", email: "new@example.test" },
    });
    expect(res.status, await res.clone().text()).toBe(204);
    const after = (await (await t.request(`${PATH}/${admin.id}`, { token })).json()) as Admin;
    expect(after).toMatchObject({
      firstName: "New",
      email: "new@example.test",
      updatedAt: t.clock.now().toISOString(),
      since: admin.since,
    });
    const [user] = await t.db.select().from(users).where(eq(users.id, admin.userId));
    expect(user).toMatchObject({ firstName: "New", email: "new@example.test", updatedAt: t.clock.now().toISOString() });
    const [userUpdate] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "user"), eq(auditLog.recordId, admin.userId), eq(auditLog.action, "update")));
    expect(JSON.parse(userUpdate?.changes ?? "{}").firstName).toEqual({ old: "Old", new: "New" });
    const [adminUpdate] = await t.db
      .select()
      .from(auditLog)
      .where(
        and(
          eq(auditLog.entity, "school-administrator"),
          eq(auditLog.recordId, admin.id),
          eq(auditLog.action, "update"),
        ),
      );
    expect(adminUpdate).toMatchObject({ schoolId: NORTH, actorId: DEMO.northAdmin.id });

    // Another school's administrator: 404, untouched.
    const other = await t.request(`${PATH}/4`, { method: "PUT", token, body: { firstName: "Mine" } });
    expect(other.status).toBe(404);
    expect((await t.db.select().from(users).where(eq(users.id, DEMO.southAdmin.id)))[0]?.firstName).toBe("Sofia");
    const empty = await t.request(`${PATH}/${admin.id}`, { method: "PUT", token, body: {} });
    expect(empty.status).toBe(400);
    const phone = await t.request(`${PATH}/${admin.id}`, { method: "PUT", token, body: { phone: newPhone() } });
    expect(phone.status).toBe(400);
  });

  it("removes the role, not the user; refuses the last administrator (422); writes need role.write", async () => {
    const t = makeTestApp();
    const { school, adminId, token, db } = await freshSchool(t);
    const admin = await add(t, { phone: newPhone(), firstName: "Temp" }, token, school);
    const staff = await as(t, adminId, school, "staff");
    const del = (id: number, tk = token) => t.request(`${PATH}/${id}`, { method: "DELETE", token: tk, school });
    expect((await del(admin.id, staff)).status).toBe(403);

    expect((await del(admin.id)).status).toBe(204);
    expect((await t.request(`${PATH}/${admin.id}`, { token, school })).status).toBe(404);
    expect(await t.db.select().from(users).where(eq(users.id, admin.userId))).toHaveLength(1);

    const [only] = await db
      .select({ id: roleUsers.id })
      .from(roleUsers)
      .where(and(eq(roleUsers.schoolId, school), eq(roleUsers.roleId, 2)));
    const last = await del(only?.id ?? 0);
    expect(last.status).toBe(422);
    expect((await problem(last)).detail).toContain("last administrator");
    expect(
      await db
        .select()
        .from(roleUsers)
        .where(eq(roleUsers.id, only?.id ?? 0)),
    ).toHaveLength(1);
    // The south school's administrator is not this school's to remove.
    expect((await del(4)).status).toBe(404);
  });

  it("of two administrators removing each other at once, one is refused: the school keeps one", async () => {
    const t = makeTestApp();
    const { school, token, db } = await freshSchool(t);
    for (let round = 0; round < 5; round++) {
      await add(t, { phone: newPhone(), firstName: `Pair ${round}` }, token, school);
      const both = await db
        .select({ id: roleUsers.id })
        .from(roleUsers)
        .where(and(eq(roleUsers.schoolId, school), eq(roleUsers.roleId, 2)));
      expect(both).toHaveLength(2);
      const results = await Promise.all(
        both.map(({ id }) => t.request(`${PATH}/${id}`, { method: "DELETE", token, school })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([204, 422]);
      const left = await db
        .select({ id: roleUsers.id })
        .from(roleUsers)
        .where(and(eq(roleUsers.schoolId, school), eq(roleUsers.roleId, 2)));
      expect(left).toHaveLength(1);
    }
  });
});

/** A new school with exactly one administrator, a token of a super-admin acting in it, and its database. */
async function freshSchool(t: TestApp) {
  const token = await t.token(DEMO.superAdmin.id, {}, true);
  const res = await t.request("/api/v1/school", {
    method: "POST",
    token,
    body: { name: `School ${newPhone()}`, timeZone: "UTC", levels: ["high"] },
  });
  expect(res.status).toBe(201);
  const school = ((await res.json()) as { id: number }).id;
  const first = await add(t, { phone: newPhone(), firstName: "First" }, token, school);
  // Its rows' database: a new school is placed on either (docs/scaling.md "Placement").
  return { school, adminId: first.userId, token, db: await t.schoolDb(school) };
}
