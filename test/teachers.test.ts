/**
 * Teachers: the teacher role's people in the current school with their profile. Creating
 * one by phone (an invited user, or the same user when the number is known, also from another
 * school) or by userId; 409 for a second time (also when 20 requests race) and for a taken employee
 * number; editing the person and the profile; removing the role but never the user; the list's
 * filters, one D1 call per read, people removed from the school left out; the .xlsx export.
 */
import { and, eq, sql } from "drizzle-orm";
import { unzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { roleUsers, users } from "../src/db/schema/core";
import { teachers } from "../src/db/schema/teacher";
import { schoolUsers } from "../src/db/schema/user";
import type { Page } from "../src/lib/pagination";
import { readXlsx } from "../src/lib/xlsx";
import { grantsOf } from "../src/modules";
import { countingTestApp, DEMO, makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const SOUTH = 2;
const PATH = "/api/v1/teacher";

type Teacher = {
  id: number;
  createdAt: string;
  updatedAt: string;
  userId: number;
  firstName: string;
  lastName: string;
  email: string | null;
  phone: string;
  status: "invited" | "active" | "inactive";
  language: string;
  subjects: string[];
  employeeNumber: string | null;
};

const as = (t: TestApp, userId: number, school: number, role: Parameters<typeof grantsOf>[0]) =>
  t.token(userId, { [school]: grantsOf(role).map((p) => p.name) });
const northAdmin = (t: TestApp) => as(t, DEMO.northAdmin.id, NORTH, "school-admin");
const southAdmin = (t: TestApp) => as(t, DEMO.southAdmin.id, SOUTH, "school-admin");

let next = 0;
const newPhone = () => `+1555${7_000_000 + ++next}`;

async function add(t: TestApp, body: Record<string, unknown>, token?: string) {
  const res = await t.request(PATH, { method: "POST", token: token ?? (await northAdmin(t)), body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Teacher;
}

async function list(t: TestApp, query: string, token?: string) {
  const res = await t.request(`${PATH}?${query}`, { token: token ?? (await northAdmin(t)) });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Page<Teacher>;
}

describe("teachers: reading", () => {
  it("lists the demo school's teacher with the person's fields and the profile's", async () => {
    const t = makeTestApp();
    const page = await list(t, "name=Tomas");
    expect(page.data).toEqual([
      {
        id: expect.any(Number),
        createdAt: "2026-08-01T12:00:00.000Z",
        updatedAt: "2026-08-01T12:00:00.000Z",
        userId: DEMO.northTeacher.id,
        firstName: "Tomas",
        lastName: "Teacher",
        email: "teacher.north@example.test",
        phone: DEMO.northTeacher.phone,
        status: "active",
        language: "en",
        subjects: [],
        employeeNumber: null,
      },
    ]);
    const one = await t.request(`${PATH}/${page.data[0]?.id}`, { token: await northAdmin(t) });
    expect(await one.json()).toEqual(page.data[0]);
  });

  it("reads a page, and one teacher, in one D1 call each", async () => {
    const { t, measure } = countingTestApp();
    const token = await northAdmin(t);
    const created = await add(t, { phone: newPhone(), firstName: "Counted", subjects: ["Art"] }, token);
    const listed = await measure(() => t.request(`${PATH}?name=Counted&subject=art&status=invited`, { token }));
    expect(listed.res.status).toBe(200);
    expect(listed.calls).toBe(1);
    const got = await measure(() => t.request(`${PATH}/${created.id}`, { token }));
    expect(got.res.status).toBe(200);
    expect(got.calls).toBe(1);
  });

  it("filters by name, subject (exact, any case) and the user's status", async () => {
    const t = makeTestApp();
    const a = await add(t, { phone: newPhone(), firstName: "Filtra", lastName: "Uno", subjects: ["Math", "Physics"] });
    const b = await add(t, { phone: newPhone(), firstName: "Filtra", lastName: "Dos", subjects: ["Mathematics"] });
    await t.db.update(users).set({ status: "active" }).where(eq(users.id, b.userId));
    expect((await list(t, "name=filtra")).data.map((x) => x.id)).toEqual([a.id, b.id]);
    expect((await list(t, "name=Filtra&subject=math")).data.map((x) => x.id)).toEqual([a.id]);
    expect((await list(t, "name=Filtra&subject=Mathematics")).data.map((x) => x.id)).toEqual([b.id]);
    expect((await list(t, "name=Filtra&status=active")).data.map((x) => x.id)).toEqual([b.id]);
    const page = await list(t, "name=Filtra&status=invited");
    expect(page.total).toBe(1);
    const long = await t.request(`${PATH}?name=${"x".repeat(49)}`, { token: await northAdmin(t) });
    expect(long.status).toBe(400);
    const longSubject = await t.request(`${PATH}?subject=${"x".repeat(47)}`, { token: await northAdmin(t) });
    expect(longSubject.status).toBe(400);
    const unknown = await t.request(`${PATH}?nope=1`, { token: await northAdmin(t) });
    expect(unknown.status).toBe(400);
  });

  it("leaves out people removed from the school (list, count and read)", async () => {
    const t = makeTestApp();
    const gone = await add(t, { phone: newPhone(), firstName: "Removida" });
    await t.db
      .update(schoolUsers)
      .set({ deletedAt: "2026-11-23T15:00:00.000Z" })
      .where(and(eq(schoolUsers.userId, gone.userId), eq(schoolUsers.schoolId, NORTH)));
    const page = await list(t, "name=Removida");
    expect(page.data).toEqual([]);
    expect(page.total).toBe(0);
    const res = await t.request(`${PATH}/${gone.id}`, { token: await northAdmin(t) });
    expect(res.status).toBe(404);
  });

  it("is for the school's staff: a teacher or a parent gets 403, another school's admin a 404", async () => {
    const t = makeTestApp();
    const created = await add(t, { phone: newPhone(), firstName: "Visible" });
    for (const token of [
      await as(t, DEMO.northTeacher.id, NORTH, "teacher"),
      await as(t, DEMO.northParent.id, NORTH, "parent"),
    ]) {
      expect((await t.request(PATH, { token })).status).toBe(403);
      expect((await t.request(`${PATH}/${created.id}`, { token })).status).toBe(403);
      expect((await t.request(`${PATH}/export`, { token })).status).toBe(403);
      const post = await t.request(PATH, { method: "POST", token, body: { phone: newPhone(), firstName: "X" } });
      expect(post.status).toBe(403);
    }
    const staff = await as(t, DEMO.northAdmin.id, NORTH, "staff");
    expect((await t.request(`${PATH}/${created.id}`, { token: staff })).status).toBe(200);
    const south = await southAdmin(t);
    expect((await t.request(`${PATH}/${created.id}`, { token: south })).status).toBe(404);
    expect((await list(t, "name=Visible", south)).data).toEqual([]);
  });
});

describe("teachers: creating", () => {
  it("invites an unknown number with the teacher's subjects and employee number, audited", async () => {
    const t = makeTestApp();
    const phone = newPhone();
    const created = await add(t, {
      phone: phone.replace("+1555", "+1 555 "),
      firstName: " Nueva ",
      lastName: "Maestra",
      email: "nueva@example.test",
      language: "en",
      subjects: ["Math", "Biology"],
      employeeNumber: "T-100",
    });
    expect(created).toMatchObject({
      phone,
      firstName: "Nueva",
      lastName: "Maestra",
      email: "nueva@example.test",
      status: "invited",
      language: "en",
      subjects: ["Math", "Biology"],
      employeeNumber: "T-100",
    });
    const [profile] = await t.db.select().from(teachers).where(eq(teachers.id, created.id));
    expect(profile).toMatchObject({ schoolId: NORTH, userId: created.userId });
    const roles = await t.db.select().from(roleUsers).where(eq(roleUsers.userId, created.userId));
    expect(roles.map((r) => [r.schoolId, r.roleId])).toEqual([[NORTH, 4]]);
    const trail = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "teacher"), eq(auditLog.recordId, created.id)));
    expect(trail.map((a) => a.action)).toEqual(["create"]);
    expect(JSON.parse(trail[0]?.changes ?? "{}")).toMatchObject({ employeeNumber: { old: null, new: "T-100" } });
  });

  it("one person, one user: a number known in another school becomes the same user; each school sees the name it gave", async () => {
    const t = makeTestApp();
    const phone = newPhone();
    const south = await add(t, { phone, firstName: "Compartida", subjects: ["Art"] }, await southAdmin(t));
    const north = await add(t, { phone, firstName: "Otro nombre", subjects: ["Music"] });
    expect(north.userId).toBe(south.userId);
    expect(north.firstName).toBe("Otro nombre");
    expect(north.subjects).toEqual(["Music"]);
    expect(await t.db.select().from(users).where(eq(users.phone, phone))).toMatchObject([{ firstName: "Compartida" }]);
    // Each school sees its own profile only.
    const southToken = await southAdmin(t);
    expect((await t.request(`${PATH}/${north.id}`, { token: southToken })).status).toBe(404);
  });

  it("makes one of the school's people a teacher by userId; another school's user or an unknown id is a 404", async () => {
    const t = makeTestApp();
    const parent = await add(t, { userId: DEMO.northParent.id, subjects: ["History"] });
    expect(parent).toMatchObject({ userId: DEMO.northParent.id, firstName: "Paula", subjects: ["History"] });
    for (const userId of [DEMO.southAdmin.id, 987654]) {
      const res = await t.request(PATH, { method: "POST", token: await northAdmin(t), body: { userId } });
      expect(res.status).toBe(404);
      expect((await problem(res)).detail).toBe(`User ${userId} not found`);
    }
    await t.request(`${PATH}/${parent.id}`, { method: "DELETE", token: await northAdmin(t) });
  });

  it("409 for someone who already teaches here, by userId or by phone", async () => {
    const t = makeTestApp();
    for (const body of [{ userId: DEMO.northTeacher.id }, { phone: DEMO.northTeacher.phone, firstName: "Tomas" }]) {
      const res = await t.request(PATH, { method: "POST", token: await northAdmin(t), body });
      expect(res.status).toBe(409);
      expect((await problem(res)).detail).toBe("This person is already a teacher of this school");
    }
  });

  it("20 concurrent creates of the same new number: exactly one 201, one user, one teacher", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const phone = newPhone();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.request(PATH, { method: "POST", token, body: { phone, firstName: "Carrera", subjects: ["Math"] } }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const found = await t.db.select().from(users).where(eq(users.phone, phone));
    expect(found).toHaveLength(1);
    expect(
      await t.db
        .select()
        .from(teachers)
        .where(eq(teachers.userId, found[0]?.id ?? 0)),
    ).toHaveLength(1);
  });

  it("refuses bad input: phone, missing name, subjects, unknown fields, a taken employee number", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const bad: [Record<string, unknown>, string][] = [
      [{ phone: "555-0100", firstName: "A" }, "phone"],
      [{ phone: newPhone() }, "firstName"],
      [{}, "userId"],
      [{ userId: DEMO.northParent.id, firstName: "A" }, "firstName"],
      [{ phone: newPhone(), firstName: "A", subjects: Array.from({ length: 21 }, (_, i) => `S${i}`) }, "subjects"],
      [{ phone: newPhone(), firstName: "A", subjects: ["x".repeat(51)] }, "subjects.0"],
      [{ phone: newPhone(), firstName: "A", subjects: ["Math", "Math"] }, "subjects"],
      [{ phone: newPhone(), firstName: "A", schoolId: SOUTH }, ""],
    ];
    for (const [body, path] of bad) {
      const res = await t.request(PATH, { method: "POST", token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      const paths = (await problem(res)).errors?.map((e) => e.path) ?? [];
      if (path) expect(paths, JSON.stringify(body)).toContain(path);
    }
    await add(t, { phone: newPhone(), firstName: "Numero", employeeNumber: "T-DUP" }, token);
    const phone = newPhone();
    const dup = await t.request(PATH, {
      method: "POST",
      token,
      body: { phone, firstName: "Numero", employeeNumber: "T-DUP" },
    });
    expect(dup.status).toBe(409);
    expect((await problem(dup)).detail).toBe("Employee number T-DUP is already used in this school");
    // Nothing of the refused create stays in the school: no membership, no role. The user the
    // platform step made first stays, a member of no school, and is reused by the next attempt
    // (docs/scaling.md "Shards", group B).
    const made = await t.db.select({ id: users.id }).from(users).where(eq(users.phone, phone));
    expect(made).toHaveLength(1);
    const [{ n } = { n: -1 }] = await t.db
      .select({ n: sql<number>`count(*)` })
      .from(roleUsers)
      .where(eq(roleUsers.userId, made[0]?.id ?? 0));
    expect(n).toBe(0);
    const again = await t.request(PATH, {
      method: "POST",
      token,
      body: { phone, firstName: "Numero", employeeNumber: "T-NEW" },
    });
    expect(again.status, await again.clone().text()).toBe(201);
    expect(((await again.json()) as { userId: number }).userId).toBe(made[0]?.id);
  });
});

describe("teachers: editing and removing", () => {
  it("PUT edits the person and the profile (204), audited; a taken employee number is a 409", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const created = await add(t, { phone: newPhone(), firstName: "Antes", employeeNumber: "T-200" }, token);
    await add(t, { phone: newPhone(), firstName: "Otra", employeeNumber: "T-201" }, token);
    const res = await t.request(`${PATH}/${created.id}`, {
      method: "PUT",
      token,
      body: { firstName: "Despues", email: "d@example.test", subjects: ["Chemistry"], employeeNumber: "T-202" },
    });
    expect(res.status).toBe(204);
    const after = (await (await t.request(`${PATH}/${created.id}`, { token })).json()) as Teacher;
    expect(after).toMatchObject({
      firstName: "Despues",
      email: "d@example.test",
      subjects: ["Chemistry"],
      employeeNumber: "T-202",
    });
    const trail = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "teacher"), eq(auditLog.recordId, created.id), eq(auditLog.action, "update")));
    expect(trail).toHaveLength(1);
    const taken = await t.request(`${PATH}/${created.id}`, { method: "PUT", token, body: { employeeNumber: "T-201" } });
    expect(taken.status).toBe(409);
    expect((await problem(taken)).detail).toBe("Employee number T-201 is already used in this school");
    const cleared = await t.request(`${PATH}/${created.id}`, { method: "PUT", token, body: { employeeNumber: null } });
    expect(cleared.status).toBe(204);
    for (const body of [{}, { phone: newPhone() }, { subjects: ["x".repeat(51)] }]) {
      const bad = await t.request(`${PATH}/${created.id}`, { method: "PUT", token, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    const south = await t.request(`${PATH}/${created.id}`, {
      method: "PUT",
      token: await southAdmin(t),
      body: { firstName: "Nope" },
    });
    expect(south.status).toBe(404);
  });

  it("DELETE removes the teacher role here, never the user nor their other roles", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const phone = newPhone();
    const created = await add(t, { phone, firstName: "Sale" }, token);
    await add(t, { phone, firstName: "Sale" }, await southAdmin(t));
    expect((await t.request(`${PATH}/${created.id}`, { method: "DELETE", token: await southAdmin(t) })).status).toBe(
      404,
    );
    // They teach a group: the group row goes with the profile, and the trail says so.
    const group = await t.request("/api/v1/group", {
      method: "POST",
      token,
      body: { name: `Sale ${phone}`, level: "elementary", schoolYear: "2026-2027" },
    });
    const { id: groupId } = (await group.json()) as { id: number };
    const link = await t.request("/api/v1/group-teacher", {
      method: "POST",
      token,
      body: { groupId, teacherId: created.id },
    });
    expect(link.status, await link.clone().text()).toBe(201);
    const { id: linkId } = (await link.json()) as { id: number };
    const res = await t.request(`${PATH}/${created.id}`, { method: "DELETE", token });
    expect(res.status).toBe(204);
    expect((await t.request(`${PATH}/${created.id}`, { token })).status).toBe(404);
    expect((await t.request(`${PATH}/${created.id}`, { method: "DELETE", token })).status).toBe(404);
    expect(await t.db.select().from(users).where(eq(users.id, created.userId))).toHaveLength(1);
    // Each school's memberships where that school's rows are (school 2's in its shard).
    const roles = [];
    for (const school of [NORTH, SOUTH]) {
      const db = await t.schoolDb(school);
      roles.push(
        ...(await db
          .select()
          .from(roleUsers)
          .where(and(eq(roleUsers.userId, created.userId), eq(roleUsers.schoolId, school)))),
      );
    }
    expect(roles.map((r) => [r.schoolId, r.roleId])).toEqual([[SOUTH, 4]]);
    // Still one of the school's people (the membership stays), and a teacher again on request.
    const again = await add(t, { userId: created.userId }, token);
    expect(again.userId).toBe(created.userId);
    const trail = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "teacher"), eq(auditLog.recordId, created.id), eq(auditLog.action, "delete")));
    expect(trail).toHaveLength(1);
    const groupTrail = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, "group-teacher"), eq(auditLog.recordId, linkId), eq(auditLog.action, "delete")));
    expect(groupTrail).toHaveLength(1);
  });
});

describe("teachers: export", () => {
  it("streams an .xlsx of the school's teachers with the list's filters", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    await add(t, { phone: newPhone(), firstName: "Exporta", lastName: "Uno", subjects: ["Math", "Art"] }, token);
    await add(t, { phone: newPhone(), firstName: "Exporta", lastName: "Dos", subjects: ["Music"] }, token);
    await add(t, { phone: newPhone(), firstName: "Exporta", lastName: "Sur" }, await southAdmin(t));
    const res = await t.request(`${PATH}/export?name=Exporta&subject=math`, { token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    expect(res.headers.get("content-disposition")).toContain("teachers.xlsx");
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const sheet = new TextDecoder().decode(files["xl/worksheets/sheet1.xml"]);
    expect(sheet).toContain("<t>Subjects</t>");
    expect(sheet).toContain("<t>Uno</t>");
    expect(sheet).toContain("<t>Math, Art</t>");
    expect(sheet).not.toContain("<t>Dos</t>");
    expect(sheet).not.toContain("<t>Sur</t>");
    const all = await t.request(`${PATH}/export?name=Exporta`, { token });
    const rows = new TextDecoder().decode(
      unzipSync(new Uint8Array(await all.arrayBuffer()))["xl/worksheets/sheet1.xml"],
    );
    expect(rows.match(/<row /g)).toHaveLength(3);
  });

  it("takes the list's query: page and pageSize accepted and ignored, unknown parameters 400", async () => {
    const t = makeTestApp();
    const token = await northAdmin(t);
    const a = await add(t, { phone: newPhone(), firstName: "Paginada", lastName: "Uno" }, token);
    const b = await add(t, { phone: newPhone(), firstName: "Paginada", lastName: "Dos" }, token);
    const ids = async (query: string) => {
      const res = await t.request(`${PATH}/export?name=Paginada${query}`, { token });
      expect(res.status, await res.clone().text()).toBe(200);
      return readXlsx(new Uint8Array(await res.arrayBuffer()))
        .slice(1)
        .map((r) => r[0]);
    };
    // The list's order, oldest first, whatever the page asked for.
    expect(await ids("")).toEqual([a.id, b.id]);
    expect(await ids("&page=2&pageSize=1")).toEqual([a.id, b.id]);
    expect(await ids("&page=1")).toEqual([a.id, b.id]);
    // The teacher list offers no sort, so neither does its export; unknown parameters stay 400s.
    for (const query of ["&bogus=1", "&sort=createdAt", "&pageSize=0"]) {
      expect((await t.request(`${PATH}/export?name=Paginada${query}`, { token })).status, query).toBe(400);
    }
  });
});
