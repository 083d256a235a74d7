/**
 * Roles and role memberships: built-in roles are read-only, custom roles belong to one school,
 * memberships obey the escalation rules and never leave a school without a school admin, and a
 * change reaches the user's next access token.
 */

import { and, eq } from "drizzle-orm";
import { unzipSync } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import { administrativeUsers } from "../src/db/schema/administrative-user";
import { auditLog } from "../src/db/schema/audit-log";
import { roleUsers } from "../src/db/schema/core";
import { parents } from "../src/db/schema/parent";
import { teachers } from "../src/db/schema/teacher";
import { readXlsx } from "../src/lib/xlsx";
import { allPages, DEMO, makeTestApp, problem } from "./helpers";

const t = makeTestApp();
const NORTH = 1;
const SOUTH = 2;

type Role = {
  id: number;
  name: string;
  key: string | null;
  builtIn: boolean;
  permissions: { id: number; name: string }[];
};
type Membership = { id: number; userId: number; roleId: number; roleName: string };

let admin: string; // north's school admin (every school permission, no platform one)
let superAdmin: string;
let phoneSeq = 0;
const phone = () => `+1555${4_000_000 + ++phoneSeq}`;

beforeAll(async () => {
  admin = await t.token(DEMO.northAdmin.id, { [NORTH]: schoolAdminPermissions() });
  superAdmin = await t.token(DEMO.superAdmin.id, {}, true);
});

function schoolAdminPermissions() {
  // What the built-in school-admin role grants: everything but the platform permissions.
  const platform = [
    "school.write",
    "permission.manage",
    "application-module.manage",
    "application-module.toggle",
    "legal-document.write",
  ];
  return (PERMISSION_NAMES as string[]).filter((p) => !platform.includes(p));
}

import { PERMISSION_NAMES } from "./helpers";

const req = (path: string, init: { method?: string; token?: string; school?: number; body?: unknown } = {}) =>
  t.request(path, { school: NORTH, token: admin, ...init });

async function createRole(body: unknown, token = admin, school = NORTH) {
  return req("/api/v1/role", { method: "POST", token, school, body });
}

async function newRole(permissions: (string | number)[] = ["user.read"], school = NORTH) {
  const res = await createRole(
    { name: `Role ${Math.random().toString(36).slice(2, 8)}`, permissions },
    superAdmin,
    school,
  );
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Role;
}

/** A new person of the school (invited as an administrator there); their user id. */
async function person(school = NORTH) {
  const res = await req("/api/v1/school-administrator", {
    method: "POST",
    token: superAdmin,
    school,
    body: { phone: phone(), firstName: "Pat" },
  });
  expect(res.status).toBe(201);
  return {
    userId: ((await res.json()) as { userId: number; id: number }).userId,
    phone: `+1555${4_000_000 + phoneSeq}`,
  };
}

/** A new person holding only the teacher role. */
async function teacherPerson(school = NORTH) {
  const p = await person(school);
  const res = await req(`/api/v1/user/${p.userId}/roles`, {
    method: "POST",
    token: superAdmin,
    school,
    body: { roleIds: [4] },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return p;
}

describe("roles", () => {
  it("lists the built-in roles and the school's own, never another school's", async () => {
    const ours = await newRole();
    const theirs = await newRole(["user.read"], SOUTH);
    const res = await req("/api/v1/role?pageSize=100");
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: Role[] };
    const ids = page.data.map((r) => r.id);
    expect(ids.slice(0, 5)).toEqual([1, 2, 3, 4, 5]);
    expect(ids).toContain(ours.id);
    expect(ids).not.toContain(theirs.id);
    const builtIn = (await (await req("/api/v1/role?builtIn=true&pageSize=100")).json()) as { data: Role[] };
    expect(builtIn.data.map((r) => r.key)).toEqual([
      "super-admin",
      "school-admin",
      "staff",
      "teacher",
      "parent",
      "driver",
      "gate",
    ]);
    const custom = (await (await req("/api/v1/role?builtIn=false&pageSize=100")).json()) as { data: Role[] };
    expect(custom.data.every((r) => !r.builtIn)).toBe(true);
    const named = (await (await req(`/api/v1/role?name=${encodeURIComponent(ours.name)}`)).json()) as { data: Role[] };
    expect(named.data.map((r) => r.id)).toEqual([ours.id]);
    const all = (await (await req("/api/v1/role/all")).json()) as Role[];
    expect((await req("/api/v1/role/all?page=2")).status).toBe(400);
    expect(all.map((r) => r.id)).toContain(ours.id);
    expect(all.map((r) => r.id)).not.toContain(theirs.id);
    // Pickers offer what may be given: never the super-admin role.
    expect(all.filter((r) => r.builtIn).map((r) => r.key)).toEqual([
      "school-admin",
      "staff",
      "teacher",
      "parent",
      "driver",
      "gate",
    ]);
    expect((await req(`/api/v1/role/${theirs.id}`)).status).toBe(404);
  });

  it("creates a custom role with permissions by name or id, and reads it back", async () => {
    const res = await createRole({ name: "Librarian", permissions: ["user.read", 5] });
    expect(res.status, await res.clone().text()).toBe(201);
    const role = (await res.json()) as Role;
    expect(role).toMatchObject({ name: "Librarian", key: null, builtIn: false });
    expect(role.permissions.map((p) => p.name)).toEqual(["role.read", "user.read"]);
    const got = (await (await req(`/api/v1/role/${role.id}`)).json()) as Role;
    expect(got.permissions).toEqual(role.permissions);
    // Unique per school, and not a built-in role's name.
    expect((await createRole({ name: "Librarian", permissions: [] })).status).toBe(409);
    expect((await createRole({ name: "LIBRARIAN", permissions: [] })).status).toBe(409); // whatever its case
    // Accented capitals too: a Spanish name in capitals is the same name.
    expect((await createRole({ name: "Coordinación", permissions: [] })).status).toBe(201);
    expect((await createRole({ name: "COORDINACIÓN", permissions: [] })).status).toBe(409);
    expect((await createRole({ name: "Señal Ü", permissions: [] })).status).toBe(201);
    expect((await createRole({ name: "SEÑAL ü", permissions: [] })).status).toBe(409);
    // Accents themselves still matter: another spelling is another name.
    expect((await createRole({ name: "Coordinacion", permissions: [] })).status).toBe(201);
    expect((await createRole({ name: "Teacher", permissions: [] })).status).toBe(409);
    // Another school may use the name.
    expect((await createRole({ name: "Librarian", permissions: [] }, superAdmin, SOUTH)).status).toBe(201);
  });

  it("refuses unknown permissions (422) and bad input (400)", async () => {
    const res = await createRole({ name: "Ghost", permissions: ["no.such", 999999] });
    expect(res.status).toBe(422);
    expect((await problem(res)).detail).toMatch(/no\.such, 999999/);
    expect((await createRole({ name: "", permissions: [] })).status).toBe(400);
    expect((await createRole({ name: "X", permissions: [true] })).status).toBe(400);
  });

  it("updates a custom role (204) and replaces its permissions", async () => {
    const role = await newRole(["user.read"]);
    const res = await req(`/api/v1/role/${role.id}`, {
      method: "PUT",
      body: { name: `${role.name} 2`, permissions: ["role.read", "student.read"].filter((p) => p !== "student.read") },
    });
    expect(res.status, await res.clone().text()).toBe(204);
    const got = (await (await req(`/api/v1/role/${role.id}`)).json()) as Role;
    expect(got.name).toBe(`${role.name} 2`);
    expect(got.permissions.map((p) => p.name)).toEqual(["role.read"]);
  });

  it("keeps built-in roles read-only (422) and another school's roles out of reach (404)", async () => {
    expect((await req("/api/v1/role/4", { method: "PUT", body: { name: "Tutor" } })).status).toBe(422);
    expect((await req("/api/v1/role/4", { method: "DELETE" })).status).toBe(422);
    const theirs = await newRole(["user.read"], SOUTH);
    expect((await req(`/api/v1/role/${theirs.id}`, { method: "PUT", body: { name: "Mine" } })).status).toBe(404);
    expect((await req(`/api/v1/role/${theirs.id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("deletes a role no one holds; a held one is a 409 naming how many", async () => {
    const role = await newRole();
    const p = await person();
    expect(
      (await req("/api/v1/role-user", { method: "POST", body: { userId: p.userId, roleId: role.id } })).status,
    ).toBe(201);
    const refused = await req(`/api/v1/role/${role.id}`, { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect((await problem(refused)).detail).toMatch(/held by 1 user/);
    expect(
      (await req(`/api/v1/role-user/remove?userId=${p.userId}&roleId=${role.id}`, { method: "DELETE" })).status,
    ).toBe(204);
    expect((await req(`/api/v1/role/${role.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await req(`/api/v1/role/${role.id}`)).status).toBe(404);
  });

  it("exports the roles to Excel", async () => {
    const role = await newRole(["user.read", "role.read"]);
    const res = await req("/api/v1/role/export");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const sheet = new TextDecoder().decode(files["xl/worksheets/sheet1.xml"]);
    expect(sheet).toContain("School admin");
    expect(sheet).toContain(role.name);
    expect(sheet).toContain("role.read, user.read");
    expect((await req("/api/v1/role/export", { token: await t.token(3, { [NORTH]: ["user.read"] }) })).status).toBe(
      403,
    );
  });

  it("the export applies the list's filters (name, builtIn), ignores paging and refuses unknown parameters", async () => {
    const role = await newRole(["user.read"]);
    const rowsOf = async (query: string) => {
      const res = await req(`/api/v1/role/export${query}`);
      expect(res.status, await res.clone().text()).toBe(200);
      return readXlsx(new Uint8Array(await res.arrayBuffer()));
    };
    const custom = await rowsOf("?builtIn=false");
    expect(custom[0]).toEqual(["Id", "Name", "Built-in", "Permissions", "Users"]);
    expect(custom.slice(1).every((r) => r[2] === "No")).toBe(true);
    expect(custom.slice(1).map((r) => r[1])).toContain(role.name);
    const named = await rowsOf(`?name=${encodeURIComponent(role.name)}`);
    expect(named.slice(1).map((r) => r[1])).toEqual([role.name]);
    expect((await rowsOf("?builtIn=true")).slice(1).map((r) => r[2])).toEqual([
      "Yes",
      "Yes",
      "Yes",
      "Yes",
      "Yes",
      "Yes",
      "Yes",
    ]);
    expect((await req("/api/v1/role/export?bogus=1")).status).toBe(400);
    // Paging is accepted and ignored: the file is every role, in the list's order.
    const all = (await rowsOf("")).slice(1).map((r) => r[0]);
    expect((await rowsOf("?page=2&pageSize=1")).slice(1).map((r) => r[0])).toEqual(all);
    expect(all).toEqual((await allPages(t, "/api/v1/role", { token: admin, school: NORTH })).data.map((r) => r.id));
    expect((await req("/api/v1/role/export?sort=name")).status).toBe(400);
  });
});

describe("escalation rules", () => {
  it("a school admin cannot put platform permissions in a role (422), nor can a super-admin", async () => {
    for (const token of [admin, superAdmin]) {
      for (const p of ["school.write", "permission.manage", "application-module.manage", "application-module.toggle"]) {
        const res = await createRole({ name: `Platform ${p}`, permissions: [p] }, token);
        expect(res.status, p).toBe(422);
        expect((await problem(res)).detail).toContain(p);
      }
    }
  });

  it("staff with role.write but not X cannot grant X (403 naming it)", async () => {
    const staff = await t.token(3, { [NORTH]: ["role.read", "role.write", "user.read"] });
    const refused = await createRole({ name: "Sneaky", permissions: ["user.read", "user.write"] }, staff);
    expect(refused.status).toBe(403);
    expect((await problem(refused)).detail).toContain("user.write");
    expect((await createRole({ name: "Allowed", permissions: ["user.read"] }, staff)).status).toBe(201);
    // Nor put it in an existing role, nor give a role that grants it.
    const strong = await newRole(["user.write"]);
    const mine = await newRole(["user.read"]);
    expect(
      (await req(`/api/v1/role/${mine.id}`, { method: "PUT", token: staff, body: { permissions: ["user.write"] } }))
        .status,
    ).toBe(403);
    const p = await person();
    const give = await req("/api/v1/role-user", {
      method: "POST",
      token: staff,
      body: { userId: p.userId, roleId: strong.id },
    });
    expect(give.status).toBe(403);
    expect((await problem(give)).detail).toContain("user.write");
    expect(
      (await req("/api/v1/role-user", { method: "POST", token: staff, body: { userId: p.userId, roleId: 2 } })).status,
    ).toBe(403);
    expect(
      (await req("/api/v1/role-user", { method: "POST", token: staff, body: { userId: p.userId, roleId: mine.id } }))
        .status,
    ).toBe(201);
  });

  it("nobody assigns the super-admin role, super-admins included", async () => {
    const p = await person();
    for (const token of [admin, superAdmin]) {
      expect(
        (await req("/api/v1/role-user", { method: "POST", token, body: { userId: p.userId, roleId: 1 } })).status,
      ).toBe(403);
      expect(
        (
          await req("/api/v1/role-user/assign-multiple", {
            method: "POST",
            token,
            body: { userId: p.userId, roleIds: [4, 1] },
          })
        ).status,
      ).toBe(403);
      expect(
        (await req(`/api/v1/user/${p.userId}/roles`, { method: "POST", token, body: { roleIds: [1] } })).status,
      ).toBe(403);
    }
  });
});

describe("role memberships", () => {
  it("gives, reads, changes and takes a role", async () => {
    const p = await teacherPerson();
    const role = await newRole();
    const res = await req("/api/v1/role-user", { method: "POST", body: { userId: p.userId, roleId: role.id } });
    expect(res.status, await res.clone().text()).toBe(201);
    const m = (await res.json()) as Membership;
    expect(m).toMatchObject({ userId: p.userId, roleId: role.id, roleName: role.name });
    expect(((await (await req(`/api/v1/role-user/${m.id}`)).json()) as Membership).roleId).toBe(role.id);
    const list = (await (await req(`/api/v1/role-user?userId=${p.userId}`)).json()) as { data: Membership[] };
    expect(list.data.map((x) => x.roleId).sort()).toEqual([4, role.id].sort());
    const byRole = (await (await req(`/api/v1/role-user?roleId=${role.id}`)).json()) as { data: Membership[] };
    expect(byRole.data.map((x) => x.userId)).toEqual([p.userId]);
    expect((await req(`/api/v1/role-user/${m.id}`, { method: "PUT", body: { roleId: 3 } })).status).toBe(204);
    expect(((await (await req(`/api/v1/role-user/${m.id}`)).json()) as Membership).roleId).toBe(3);
    // Changing to a role already held is a 409.
    expect((await req(`/api/v1/role-user/${m.id}`, { method: "PUT", body: { roleId: 4 } })).status).toBe(409);
    expect((await req(`/api/v1/role-user/${m.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await req(`/api/v1/role-user/${m.id}`)).status).toBe(404);
  });

  it("changing a membership's role moves the profile with it: the old role's profile goes, the new one's comes", async () => {
    const p = await teacherPerson();
    const [membership] = await t.db
      .select()
      .from(roleUsers)
      .where(and(eq(roleUsers.userId, p.userId), eq(roleUsers.roleId, 4)));
    const profiles = async () => {
      const mine = (table: typeof teachers | typeof administrativeUsers | typeof parents) =>
        t.db
          .select({ id: table.id })
          .from(table)
          .where(and(eq(table.schoolId, NORTH), eq(table.userId, p.userId)));
      return {
        teacher: (await mine(teachers)).length,
        staff: (await mine(administrativeUsers)).length,
        parent: (await mine(parents)).length,
      };
    };
    expect(await profiles()).toEqual({ teacher: 1, staff: 0, parent: 0 });
    const change = (roleId: number) =>
      req(`/api/v1/role-user/${membership?.id}`, { method: "PUT", body: { roleId } }).then((r) => r.status);
    expect(await change(3)).toBe(204);
    expect(await profiles()).toEqual({ teacher: 0, staff: 1, parent: 0 });
    expect(await change(5)).toBe(204);
    expect(await profiles()).toEqual({ teacher: 0, staff: 0, parent: 1 });
    const custom = await newRole();
    expect(await change(custom.id)).toBe(204);
    expect(await profiles()).toEqual({ teacher: 0, staff: 0, parent: 0 });
    expect(await change(4)).toBe(204);
    expect(await profiles()).toEqual({ teacher: 1, staff: 0, parent: 0 });
  });

  it("taking the parent role audits what goes with it: the profile, its delegates and its guardianships", async () => {
    const made = await req("/api/v1/parent", {
      method: "POST",
      body: { phone: phone(), firstName: "Madre", relationship: "mother" },
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const parent = (await made.json()) as { id: number; userId: number };
    const delegate = await req("/api/v1/delegate", {
      method: "POST",
      body: {
        parentId: parent.id,
        phone: phone(),
        firstName: "Tía",
        validFrom: "2026-11-01",
        validUntil: "2026-12-31",
      },
    });
    expect(delegate.status, await delegate.clone().text()).toBe(201);
    const student = await req("/api/v1/student", {
      method: "POST",
      body: { firstName: "Hija", lastName: "Audit", level: "elementary" },
    });
    expect(student.status, await student.clone().text()).toBe(201);
    const studentId = ((await student.json()) as { id: number }).id;
    const guardian = await req(`/api/v1/student/${studentId}/guardian`, {
      method: "POST",
      body: { parentId: parent.id },
    });
    expect(guardian.status, await guardian.clone().text()).toBe(201);
    const guardianId = ((await guardian.json()) as { id: number }).id;
    const delegateId = ((await delegate.json()) as { id: number }).id;

    const res = await req(`/api/v1/role-user/remove?userId=${parent.userId}&roleId=5`, { method: "DELETE" });
    expect(res.status).toBe(204);
    const requestId = res.headers.get("x-request-id") ?? "";
    const trail = await t.db.select().from(auditLog).where(eq(auditLog.requestId, requestId));
    expect(trail.map((a) => `${a.entity}:${a.recordId}:${a.action}`).sort()).toEqual([
      `delegate:${delegateId}:delete`,
      `guardian:${guardianId}:delete`,
      `parent:${parent.id}:delete`,
      expect.stringMatching(/^role-user:\d+:delete$/),
    ]);
    const parentRow = trail.find((a) => a.entity === "parent");
    expect(JSON.parse(parentRow?.changes ?? "{}")).toMatchObject({ relationship: { old: "mother", new: null } });
  });

  it("refuses duplicates (409), unknown roles and users, and another school's (404)", async () => {
    const p = await teacherPerson();
    expect((await req("/api/v1/role-user", { method: "POST", body: { userId: p.userId, roleId: 4 } })).status).toBe(
      409,
    );
    expect(
      (await req("/api/v1/role-user", { method: "POST", body: { userId: p.userId, roleId: 999999 } })).status,
    ).toBe(404);
    expect((await req("/api/v1/role-user", { method: "POST", body: { userId: 999999, roleId: 4 } })).status).toBe(404);
    const southPerson = await person(SOUTH);
    expect(
      (await req("/api/v1/role-user", { method: "POST", body: { userId: southPerson.userId, roleId: 4 } })).status,
    ).toBe(404);
    const southRole = await newRole(["user.read"], SOUTH);
    expect(
      (await req("/api/v1/role-user", { method: "POST", body: { userId: p.userId, roleId: southRole.id } })).status,
    ).toBe(404);
    const [southMembership] = await (await t.schoolDb(SOUTH))
      .select()
      .from(roleUsers)
      .where(eq(roleUsers.userId, southPerson.userId));
    expect((await req(`/api/v1/role-user/${southMembership?.id}`)).status).toBe(404);
    expect((await req(`/api/v1/role-user/${southMembership?.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await req(`/api/v1/role-user/remove?userId=${p.userId}&roleId=3`, { method: "DELETE" })).status).toBe(404);
    expect((await req("/api/v1/role-user/remove?userId=abc&roleId=3", { method: "DELETE" })).status).toBe(400);
  });

  it("concurrent duplicate assignments: one 201, the rest 409", async () => {
    const p = await teacherPerson();
    const role = await newRole();
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        req("/api/v1/role-user", { method: "POST", body: { userId: p.userId, roleId: role.id } }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    const rows = await t.db
      .select()
      .from(roleUsers)
      .where(and(eq(roleUsers.userId, p.userId), eq(roleUsers.roleId, role.id)));
    expect(rows).toHaveLength(1);
  });

  it("assign-multiple gives several roles in one batch and says which were new", async () => {
    const p = await teacherPerson();
    const role = await newRole();
    const res = await req("/api/v1/role-user/assign-multiple", {
      method: "POST",
      body: { userId: p.userId, roleIds: [4, role.id, 3] },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toEqual({ userId: p.userId, added: [role.id, 3], kept: [4] });
  });

  it("POST /user/{id}/roles sets exactly the listed roles", async () => {
    const p = await teacherPerson();
    const role = await newRole();
    const res = await req(`/api/v1/user/${p.userId}/roles`, { method: "POST", body: { roleIds: [role.id, 3] } });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { roles: { id: number }[]; added: number[]; removed: number[] };
    expect(body.roles.map((r) => r.id)).toEqual([3, role.id]);
    expect(body.added.sort()).toEqual([3, role.id].sort());
    expect(body.removed).toEqual([4]);
    const southPerson = await person(SOUTH);
    expect(
      (await req(`/api/v1/user/${southPerson.userId}/roles`, { method: "POST", body: { roleIds: [4] } })).status,
    ).toBe(404);
  });

  it("never takes the school's last school admin (422)", async () => {
    // South has one administrator; a new school-admin there, then try to remove both at once.
    const southAdminToken = await t.token(DEMO.southAdmin.id, { [SOUTH]: schoolAdminPermissions() });
    const other = await person(SOUTH);
    const admins = await (await t.schoolDb(SOUTH))
      .select()
      .from(roleUsers)
      .where(and(eq(roleUsers.schoolId, SOUTH), eq(roleUsers.roleId, 2)));
    expect(admins.length).toBeGreaterThanOrEqual(2);
    // Leave exactly two: the demo admin and the new one.
    for (const a of admins) {
      if (a.userId !== DEMO.southAdmin.id && a.userId !== other.userId) {
        expect(
          (await req(`/api/v1/role-user/${a.id}`, { method: "DELETE", token: southAdminToken, school: SOUTH })).status,
        ).toBe(204);
      }
    }
    const two = admins.filter((a) => a.userId === DEMO.southAdmin.id || a.userId === other.userId);
    const answers = await Promise.all(
      two.map((a) => req(`/api/v1/role-user/${a.id}`, { method: "DELETE", token: southAdminToken, school: SOUTH })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([204, 422]);
    const left = await (await t.schoolDb(SOUTH))
      .select()
      .from(roleUsers)
      .where(and(eq(roleUsers.schoolId, SOUTH), eq(roleUsers.roleId, 2)));
    expect(left).toHaveLength(1);
    const last = left[0];
    if (!last) throw new Error("no admin left");
    // Every other way of taking it is refused too.
    const token = southAdminToken;
    expect(
      (await req(`/api/v1/role-user/${last.id}`, { method: "PUT", token, school: SOUTH, body: { roleId: 3 } })).status,
    ).toBe(422);
    expect(
      (await req(`/api/v1/role-user/remove?userId=${last.userId}&roleId=2`, { method: "DELETE", token, school: SOUTH }))
        .status,
    ).toBe(422);
    expect(
      (await req(`/api/v1/user/${last.userId}/roles`, { method: "POST", token, school: SOUTH, body: { roleIds: [3] } }))
        .status,
    ).toBe(422);
    expect(await (await t.schoolDb(SOUTH)).select().from(roleUsers).where(eq(roleUsers.id, last.id))).toHaveLength(1);
  });
});

describe("token propagation", () => {
  it("a role given or taken reaches the user's next access token (refresh)", async () => {
    const p = await teacherPerson();
    const signed = await t.signIn(p.phone);
    const read = (token: string) => req("/api/v1/role-user?pageSize=1", { token });
    expect((await read(signed.accessToken)).status).toBe(403);
    const role = await newRole(["role.read"]);
    const given = await req("/api/v1/role-user", { method: "POST", body: { userId: p.userId, roleId: role.id } });
    expect(given.status).toBe(201);
    // The old token still says what it said: the change waits for the refresh (<= 10 minutes).
    expect((await read(signed.accessToken)).status).toBe(403);
    const refresh = async (refreshToken: string) => {
      const res = await t.request("/api/v1/auth/refresh-token", { method: "POST", body: { refreshToken } });
      expect(res.status).toBe(200);
      return (await res.json()) as { accessToken: string; refreshToken: string };
    };
    const next = await refresh(signed.refreshToken);
    expect((await read(next.accessToken)).status).toBe(200);
    const m = (await given.json()) as Membership;
    expect((await req(`/api/v1/role-user/${m.id}`, { method: "DELETE" })).status).toBe(204);
    const after = await refresh(next.refreshToken);
    expect((await read(after.accessToken)).status).toBe(403);
  });
});
