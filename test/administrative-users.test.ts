/**
 * Administrative staff: the built-in "staff" role's people in the current school with
 * their profile (position, employee number). Same contract as teachers (test/teachers.test.ts):
 * create by phone or userId (one person, one user), 409 for a second time (also when 20 requests
 * race) and for a taken employee number, edit, remove the role but not the user, one D1 call per
 * read, the .xlsx export. Only a school admin writes; staff read.
 */
import { and, eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { administrativeUsers } from "../src/db/schema/administrative-user";
import { auditLog } from "../src/db/schema/audit-log";
import { roleUsers, users } from "../src/db/schema/core";
import { schoolUsers } from "../src/db/schema/user";
import type { Page } from "../src/lib/pagination";
import { grantsOf } from "../src/modules";
import { countingTestApp, DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const PATH = "/api/v1/administrative-user";

type Staff = {
  id: number;
  userId: number;
  firstName: string;
  lastName: string;
  email: string | null;
  phone: string;
  status: "invited" | "active" | "inactive";
  language: string;
  position: string;
  employeeNumber: string | null;
};

const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [school]: grantsOf(role).map((p) => p.name) });
const northAdmin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");
const southAdmin = (t: TestApp) => as(t, DEMO.southAdmin.id, SOUTH, "school-admin");

let next = 0;
const newPhone = () => `+1555${8_000_000 + ++next}`;

async function add(t: TestApp, body: Record<string, unknown>, token?: string) {
  const res = await t.request(PATH, { method: "POST", token: token ?? (await northAdmin(t)), body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Staff;
}

async function list(t: TestApp, query: string, token?: string) {
  const res = await t.request(`${PATH}?${query}`, { token: token ?? (await northAdmin(t)) });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Page<Staff>;
}

describe("administrative staff", () => {
  it("creates by phone with position and employee number, lists, filters and reads in one D1 call", async () => {
    const { t, measure } = countingTestApp();
    const token = await northAdmin(t);
    const phone = newPhone();
    const created = await add(
      t,
      { phone, firstName: "Rita", lastName: "Registro", position: "Registrar", employeeNumber: "A-1" },
      token,
    );
    expect(created).toMatchObject({
      phone,
      firstName: "Rita",
      lastName: "Registro",
      status: "invited",
      language: "es",
      position: "Registrar",
      employeeNumber: "A-1",
    });
    await add(t, { phone: newPhone(), firstName: "Rita", lastName: "Chofer", position: "Transport" }, token);
    const listed = await measure(() => t.request(`${PATH}?name=Rita&position=regis&status=invited`, { token }));
    expect(listed.calls).toBe(1);
    const page = (await listed.res.json()) as Page<Staff>;
    expect(page.data.map((s) => s.id)).toEqual([created.id]);
    expect(page.total).toBe(1);
    const got = await measure(() => t.request(`${PATH}/${created.id}`, { token }));
    expect(got.calls).toBe(1);
    expect(await got.res.json()).toEqual(created);
    const roles = await t.db.select().from(roleUsers).where(eq(roleUsers.userId, created.userId));
    expect(roles.map((r) => [r.schoolId, r.roleId])).toEqual([[NORTH, 3]]);
  });

  it("one person, one user: a known number (here the school's teacher, and another school's person) is the same user", async () => {
    const t = makeTestApp();
    const teacher = await add(t, { phone: DEMO.northTeacher.phone, firstName: "Ignored", position: "Coordinator" });
    expect(teacher).toMatchObject({ userId: DEMO.northTeacher.id, firstName: "Tomas", position: "Coordinator" });
    const phone = newPhone();
    const south = await add(t, { phone, firstName: "Ambas" }, await southAdmin(t));
    const north = await add(t, { phone, firstName: "Ambas" });
    expect(north.userId).toBe(south.userId);
    expect(await t.db.select().from(users).where(eq(users.phone, phone))).toHaveLength(1);
    const byId = await add(t, { userId: DEMO.northParent.id, position: "Volunteer" });
    expect(byId.userId).toBe(DEMO.northParent.id);
    for (const userId of [DEMO.southAdmin.id, 987654]) {
      const res = await t.request(PATH, { method: "POST", token: await northAdmin(t), body: { userId } });
      expect(res.status).toBe(404);
    }
    const again = await t.request(PATH, { method: "POST", token: await northAdmin(t), body: { userId: north.userId } });
    expect(again.status).toBe(409);
    expect((await problem(again)).detail).toBe("This person is already administrative staff of this school");
  });

  it("20 concurrent creates of the same number: exactly one 201", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const phone = newPhone();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.request(PATH, { method: "POST", token, body: { phone, firstName: "Carrera", position: "Clerk" } }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const [user] = await t.db.select().from(users).where(eq(users.phone, phone));
    expect(
      await t.db
        .select()
        .from(administrativeUsers)
        .where(eq(administrativeUsers.userId, user?.id ?? 0)),
    ).toHaveLength(1);
  });

  it("refuses bad input (400) and a taken employee number (409)", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    for (const body of [
      { phone: "12", firstName: "A" },
      { phone: newPhone() },
      { phone: newPhone(), firstName: "A", position: "x".repeat(101) },
      { phone: newPhone(), firstName: "A", createdBy: 1 },
    ]) {
      const res = await t.request(PATH, { method: "POST", token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    await add(t, { phone: newPhone(), firstName: "Num", employeeNumber: "A-DUP" }, token);
    const dup = await t.request(PATH, {
      method: "POST",
      token,
      body: { phone: newPhone(), firstName: "Num", employeeNumber: "A-DUP" },
    });
    expect(dup.status).toBe(409);
    expect((await problem(dup)).detail).toBe("Employee number A-DUP is already used in this school");
  });

  it("staff read but only a school admin writes; teachers and parents get 403", async () => {
    const t = makeTestApp();
    const created = await add(t, { phone: newPhone(), firstName: "Permiso" });
    const staff = await as(t, DEMO.northAdmin.id, NORTH, "staff");
    expect((await t.request(`${PATH}/${created.id}`, { token: staff })).status).toBe(200);
    expect((await t.request(`${PATH}/export`, { token: staff })).status).toBe(200);
    const put = await t.request(`${PATH}/${created.id}`, { method: "PUT", token: staff, body: { position: "X" } });
    expect(put.status).toBe(403);
    for (const token of [
      await as(t, DEMO.northTeacher.id, NORTH, "teacher"),
      await as(t, DEMO.northParent.id, NORTH, "parent"),
    ]) {
      expect((await t.request(PATH, { token })).status).toBe(403);
      expect((await t.request(`${PATH}/${created.id}`, { token })).status).toBe(403);
    }
    expect((await t.request(`${PATH}/${created.id}`, { token: await southAdmin(t) })).status).toBe(404);
  });

  it("PUT edits the person and the profile; DELETE removes the role only; removed people are not listed", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const created = await add(t, { phone: newPhone(), firstName: "Cambia", employeeNumber: "A-10" }, token);
    await add(t, { phone: newPhone(), firstName: "Cambia", employeeNumber: "A-11" }, token);
    const put = await t.request(`${PATH}/${created.id}`, {
      method: "PUT",
      token,
      body: { lastName: "Nuevo", position: "Principal's assistant" },
    });
    expect(put.status).toBe(204);
    expect((await list(t, "name=Nuevo")).data).toMatchObject([
      { id: created.id, lastName: "Nuevo", position: "Principal's assistant", employeeNumber: "A-10" },
    ]);
    const taken = await t.request(`${PATH}/${created.id}`, { method: "PUT", token, body: { employeeNumber: "A-11" } });
    expect(taken.status).toBe(409);

    const del = await t.request(`${PATH}/${created.id}`, { method: "DELETE", token });
    expect(del.status).toBe(204);
    expect((await t.request(`${PATH}/${created.id}`, { token })).status).toBe(404);
    expect(await t.db.select().from(users).where(eq(users.id, created.userId))).toHaveLength(1);
    const trail = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "administrative-user"), eq(auditLog.recordId, created.id)));
    expect(trail.map((a) => a.action)).toEqual(["create", "update", "delete"]);

    const gone = await add(t, { phone: newPhone(), firstName: "Borrada" }, token);
    await t.db
      .update(schoolUsers)
      .set({ deletedAt: "2026-11-23T15:00:00.000Z" })
      .where(and(eq(schoolUsers.userId, gone.userId), eq(schoolUsers.schoolId, NORTH)));
    expect((await list(t, "name=Borrada")).total).toBe(0);
  });

  it("exports the filtered staff to .xlsx", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    await add(t, { phone: newPhone(), firstName: "Hoja", lastName: "Uno", position: "Nurse" }, token);
    await add(t, { phone: newPhone(), firstName: "Hoja", lastName: "Dos", position: "Librarian" }, token);
    const res = await t.request(`${PATH}/export?name=Hoja&position=nurse`, { token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    const sheet = new TextDecoder().decode(
      unzipSync(new Uint8Array(await res.arrayBuffer()))["xl/worksheets/sheet1.xml"],
    );
    expect(sheet).toContain("<t>Position</t>");
    expect(sheet).toContain("<t>Nurse</t>");
    expect(sheet).not.toContain("<t>Librarian</t>");
    expect(sheet.match(/<row /g)).toHaveLength(2);
  });
});
