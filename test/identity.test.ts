/**
 * One person is one user across schools, but a school never sees nor changes what another school
 * holds of them. School 2 knows a person as "Secreta Sur" <secret@south.test>; school 1 adds the
 * same phone as "Ana Uno" <ana@north.test> through every people route: every answer and every read
 * of school 1 (lists, records, details, exports) shows school 1's values and never school 2's, and
 * school 1's edits leave school 2's view as it was. The person's own edits (PUT /user/me) and the
 * super-admin's change the shared identity, which every school then sees.
 */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { users } from "../src/db/schema/core";
import { readXlsx } from "../src/lib/xlsx";
import { fixturePhone } from "./fixture-kit";
import { makeTestApp } from "./helpers";

const t = makeTestApp();
const NORTH = 1;
const SOUTH = 2;
const north = () => t.token(2, { [NORTH]: "all" });
const south = () => t.token(5, { [SOUTH]: "all" });
const superAdmin = () => t.token(1, {}, true);

const SECRET = ["Secreta", "Sur", "secret@south.test"];

async function call(method: string, path: string, token: string, school: number, body?: unknown) {
  return t.request(path, { method, token, school, body });
}
async function ok<T>(res: Response, status = 200): Promise<T> {
  expect(res.status, `${res.url}: ${await res.clone().text()}`).toBe(status);
  return (await res.json()) as T;
}

/** What a GET answers, as text (an export's cells too). */
async function text(path: string, token: string, school: number) {
  const res = await call("GET", path, token, school);
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
  if ((res.headers.get("content-type") ?? "").includes("spreadsheet")) {
    return JSON.stringify(readXlsx(new Uint8Array(await res.arrayBuffer())));
  }
  return res.text();
}

/** A person school 2 knows (a teacher there), with the phone school 1 then uses. */
async function knownInSouth() {
  const phone = fixturePhone();
  const teacher = await ok<{ userId: number }>(
    await call("POST", "/api/v1/teacher", await south(), SOUTH, {
      phone,
      firstName: SECRET[0],
      lastName: SECRET[1],
      email: SECRET[2],
    }),
    201,
  );
  return { phone, userId: teacher.userId };
}

const ANA = { firstName: "Ana", lastName: "Uno", email: "ana@north.test" };

describe("adding a person another school knows, by phone", () => {
  it("every people route answers with what this school sent, never the other school's name or email", async () => {
    const bodies: [string, Record<string, unknown>][] = [
      ["/api/v1/user", {}],
      ["/api/v1/teacher", {}],
      ["/api/v1/administrative-user", {}],
      ["/api/v1/parent", { relationship: "mother" }],
      ["/api/v1/school-administrator", {}],
      ["/api/v1/delegate", { parentId: 1, validFrom: "2026-11-01", validUntil: "2026-12-31" }],
    ];
    for (const [path, extra] of bodies) {
      const { phone } = await knownInSouth();
      // A delegate is named without an email.
      const sent = path === "/api/v1/delegate" ? { firstName: ANA.firstName, lastName: ANA.lastName } : ANA;
      const res = await call("POST", path, await north(), NORTH, { phone, ...sent, ...extra });
      const body = await res.text();
      expect(res.status, `${path}: ${body}`).toBe(201);
      for (const secret of SECRET) expect(body, path).not.toContain(secret);
      expect(body, path).toContain('"firstName":"Ana"');
    }
  });

  it("the school-2 administrator added as a teacher by school 1: school 1 sees its own values", async () => {
    const res = await call("POST", "/api/v1/teacher", await north(), NORTH, {
      phone: "+15550000012",
      firstName: "Otra",
      lastName: "Persona",
    });
    const teacher = await ok<{ userId: number; firstName: string; lastName: string; email: string | null }>(res, 201);
    expect(teacher).toMatchObject({ userId: 5, firstName: "Otra", lastName: "Persona", email: null });
    const own = await ok<{ firstName: string; email: string }>(
      await call("GET", "/api/v1/user/5", await south(), SOUTH),
    );
    expect(own).toMatchObject({ firstName: "Sofia", email: "admin.south@example.test" });
  });
});

describe("every read of a school shows its own copy", () => {
  const ids: Record<string, number | string> = {};

  beforeAll(async () => {
    const token = await north();
    const { phone, userId } = await knownInSouth();
    ids.user = userId;
    const made = async (path: string, body: Record<string, unknown>) =>
      (await ok<{ id: number }>(await call("POST", path, token, NORTH, body), 201)).id;
    ids.teacher = await made("/api/v1/teacher", { phone, ...ANA });
    ids.staff = await made("/api/v1/administrative-user", { userId });
    ids.administrator = await made("/api/v1/school-administrator", { userId });
    ids.parent = await made("/api/v1/parent", { phone, firstName: "Ignorado", relationship: "mother" });
    ids.delegate = await made("/api/v1/delegate", {
      parentId: 1,
      phone,
      firstName: "Ignorado",
      validFrom: "2026-11-01",
      validUntil: "2026-12-31",
    });
    ids.student = await made("/api/v1/student", { firstName: "Hijo", lastName: "Cero" });
    ids.familyNumber = `F-ID-${userId}`;
    ids.family = await made("/api/v1/family", {
      familyNumber: ids.familyNumber,
      name: "Cero",
      parentIds: [ids.parent],
      studentIds: [ids.student],
    });
    await made(`/api/v1/student/${ids.student}/guardian`, { parentId: ids.parent });
    ids.group = await made("/api/v1/group", { name: `Grupo ${userId}`, level: "elementary", schoolYear: "2026-2027" });
    ids.groupTeacher = await made("/api/v1/group-teacher", { groupId: ids.group, teacherId: ids.teacher });
    const roles = await ok<{ data: { id: number }[] }>(
      await call("GET", `/api/v1/role-user?userId=${userId}`, token, NORTH),
    );
    ids.roleUser = roles.data[0]?.id ?? 0;
  });

  it("lists, records, details and exports of school 1 name the person as school 1 does", async () => {
    const token = await north();
    const paths = [
      `/api/v1/user?name=ana%20uno`,
      `/api/v1/user/${ids.user}`,
      `/api/v1/user/${ids.user}/profile`,
      `/api/v1/user/by-role?role=teacher&name=ana`,
      `/api/v1/teacher?name=ana%20uno`,
      `/api/v1/teacher/${ids.teacher}`,
      `/api/v1/teacher/export?name=ana%20uno`,
      `/api/v1/administrative-user/${ids.staff}`,
      `/api/v1/administrative-user/export?name=ana%20uno`,
      `/api/v1/school-administrator/${ids.administrator}`,
      `/api/v1/school-administrator?name=ana%20uno`,
      `/api/v1/parent/${ids.parent}`,
      `/api/v1/parent?name=ana%20uno`,
      `/api/v1/parent/export?name=ana%20uno`,
      `/api/v1/delegate/${ids.delegate}`,
      `/api/v1/delegate?name=ana%20uno`,
      `/api/v1/family/${ids.family}`,
      `/api/v1/family/members?familyNumber=${encodeURIComponent(String(ids.familyNumber))}`,
      `/api/v1/student/${ids.student}/detail`,
      `/api/v1/group/${ids.group}`,
      `/api/v1/group/${ids.group}/participants`,
      `/api/v1/group-teacher/${ids.groupTeacher}`,
      `/api/v1/role-user/${ids.roleUser}`,
      `/api/v1/role-user?userId=${ids.user}`,
    ];
    for (const path of paths) {
      const body = await text(path, token, NORTH);
      for (const secret of SECRET) expect(body, path).not.toContain(secret);
      expect(body, path).toContain("Uno");
    }
    // School 2's name finds nobody in school 1; school 1's finds nobody in school 2.
    const found = async (path: string, token: string, school: number) =>
      (await ok<{ data: unknown[] }>(await call("GET", path, token, school))).data.length;
    expect(await found("/api/v1/user?name=secreta%20sur", token, NORTH)).toBe(0);
    expect(await found("/api/v1/teacher?name=secreta", token, NORTH)).toBe(0);
    expect(await found("/api/v1/user?name=ana%20uno", await south(), SOUTH)).toBe(0);
  });

  it("school 1's edits (on every people route) change its copy, never school 2's view nor the user row", async () => {
    const token = await north();
    const edits: [string, Record<string, unknown>][] = [
      [`/api/v1/user/${ids.user}`, { lastName: "Dos" }],
      [`/api/v1/teacher/${ids.teacher}`, { firstName: "Anita" }],
      [`/api/v1/administrative-user/${ids.staff}`, { email: "anita@north.test" }],
      [`/api/v1/parent/${ids.parent}`, { lastName: "Tres" }],
      [`/api/v1/school-administrator/${ids.administrator}`, { firstName: "Ana María" }],
    ];
    for (const [path, body] of edits) {
      expect((await call("PUT", path, token, NORTH, body)).status, path).toBe(204);
    }
    const here = await ok<Record<string, unknown>>(await call("GET", `/api/v1/user/${ids.user}`, token, NORTH));
    expect(here).toMatchObject({ firstName: "Ana María", lastName: "Tres", email: "anita@north.test" });
    const there = await ok<Record<string, unknown>>(
      await call("GET", `/api/v1/user/${ids.user}`, await south(), SOUTH),
    );
    expect(there).toMatchObject({ firstName: "Secreta", lastName: "Sur", email: "secret@south.test" });
    const [row] = await t.db
      .select()
      .from(users)
      .where(eq(users.id, Number(ids.user)));
    expect(row).toMatchObject({ firstName: "Secreta", lastName: "Sur", email: "secret@south.test" });
    // School 1 finds them by its own name only.
    const listed = await ok<{ data: { id: number }[] }>(
      await call("GET", "/api/v1/user?name=ana%20maria%20tres", token, NORTH),
    );
    expect(listed.data.map((u) => u.id)).toEqual([ids.user]);
  });

  it("the person's own edit changes the shared identity: every school sees it", async () => {
    const me = await t.token(Number(ids.user), { [NORTH]: ["user.read"], [SOUTH]: ["user.read"] });
    const res = await t.request("/api/v1/user/me", { method: "PUT", token: me, body: { lastName: "Propia" } });
    expect(res.status, await res.clone().text()).toBe(204);
    for (const [token, school] of [
      [await north(), NORTH],
      [await south(), SOUTH],
    ] as const) {
      const person = await ok<Record<string, unknown>>(await call("GET", `/api/v1/user/${ids.user}`, token, school));
      expect(person, `school ${school}`).toMatchObject({ lastName: "Propia" });
    }
    const mine = await ok<Record<string, unknown>>(await t.request("/api/v1/user/me", { token: me }));
    expect(mine).toMatchObject({ firstName: "Secreta", lastName: "Propia" });
  });

  it("the super-admin's edit changes the shared identity too", async () => {
    // School 1 names them again (its own copy), then the super-admin edits the person.
    expect((await call("PUT", `/api/v1/user/${ids.user}`, await north(), NORTH, { firstName: "Local" })).status).toBe(
      204,
    );
    const res = await call("PUT", `/api/v1/user/${ids.user}`, await superAdmin(), NORTH, { firstName: "Oficial" });
    expect(res.status, await res.clone().text()).toBe(204);
    for (const [token, school] of [
      [await north(), NORTH],
      [await south(), SOUTH],
    ] as const) {
      const person = await ok<Record<string, unknown>>(await call("GET", `/api/v1/user/${ids.user}`, token, school));
      expect(person, `school ${school}`).toMatchObject({ firstName: "Oficial", lastName: "Propia" });
    }
  });
});

describe("a person only this school knows", () => {
  it("is edited on the user row itself, as before", async () => {
    const token = await north();
    const created = await ok<{ id: number }>(
      await call("POST", "/api/v1/user", token, NORTH, { phone: fixturePhone(), firstName: "Solo", lastName: "Norte" }),
      201,
    );
    expect((await call("PUT", `/api/v1/user/${created.id}`, token, NORTH, { lastName: "Cambiado" })).status).toBe(204);
    const [row] = await t.db.select().from(users).where(eq(users.id, created.id));
    expect(row).toMatchObject({ firstName: "Solo", lastName: "Cambiado" });
  });
});
