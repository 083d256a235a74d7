/**
 * Access control: the permission catalogue of src/lib/access.ts agrees with the database (the
 * migrations insert it), the bitmap tokens carry round-trips, and the permission resource keeps
 * built-ins intact while custom permissions come and go.
 */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { permissions, rolePermissions, roles, schools } from "../src/db/schema/core";
import { BUILTIN_ROLES, type BuiltinRole, PermissionSet } from "../src/lib/access";
import { grantsOf, permissionCatalogue } from "../src/modules";
import { FIRST_CUSTOM_PERMISSION_ID } from "../src/modules/permission/resource";
import { DEMO, makeTestApp, PERMISSION_NAMES, permissionId, problem } from "./helpers";

const t = makeTestApp();
const MAX_BUILTIN = FIRST_CUSTOM_PERMISSION_ID - 1;

let superAdmin: string;
let schoolAdmin: string;
let teacher: string;

beforeAll(async () => {
  superAdmin = (await t.signIn(DEMO.superAdmin.phone)).accessToken;
  schoolAdmin = (await t.signIn(DEMO.northAdmin.phone)).accessToken;
  teacher = (await t.signIn(DEMO.northTeacher.phone)).accessToken;
});

type Perm = { id: number; name: string; description: string; builtIn: boolean; createdAt: string; updatedAt: string };
type Page = { data: Perm[]; total: number };

const create = (body: unknown, token = superAdmin) => t.request("/api/v1/permission", { method: "POST", token, body });
const update = (id: number, body: unknown, token = superAdmin) =>
  t.request(`/api/v1/permission/${id}`, { method: "PUT", token, body });
const remove = (id: number, token = superAdmin) => t.request(`/api/v1/permission/${id}`, { method: "DELETE", token });
const get = (id: number, token = superAdmin) => t.request(`/api/v1/permission/${id}`, { token });
async function search(term: string) {
  const res = await t.request(`/api/v1/permission?pageSize=100&name=${encodeURIComponent(term)}`, {
    token: schoolAdmin,
  });
  expect(res.status, term).toBe(200);
  return (await res.json()) as Page;
}

describe("the catalogue and the database agree", () => {
  it("every permission exists with its id, name and description", async () => {
    const rows = await t.db.select().from(permissions);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const catalogue = permissionCatalogue();
    for (const p of catalogue) {
      const row = byId.get(p.id);
      expect(row?.name, `permission ${p.id}`).toBe(p.name);
      expect(row?.description).toBe(p.description);
    }
    // No row in the built-in id range is unknown to the code.
    const builtinRows = rows.filter((r) => r.id <= MAX_BUILTIN);
    expect(builtinRows).toHaveLength(catalogue.length);
    // Ids and names are unique in the code too.
    expect(new Set(catalogue.map((p) => p.id)).size).toBe(catalogue.length);
    expect(new Set(catalogue.map((p) => p.name)).size).toBe(catalogue.length);
  });

  it("every built-in role exists with exactly its grants", async () => {
    for (const [key, role] of Object.entries(BUILTIN_ROLES) as [BuiltinRole, (typeof BUILTIN_ROLES)[BuiltinRole]][]) {
      const [row] = await t.db.select().from(roles).where(eq(roles.id, role.id));
      expect(row, key).toMatchObject({ key, name: role.name, schoolId: null });
      const grants = await t.db
        .select({ id: rolePermissions.permissionId })
        .from(rolePermissions)
        .where(eq(rolePermissions.roleId, role.id));
      const expected = grantsOf(key)
        .map((p) => p.id)
        .sort((a, b) => a - b);
      expect(
        grants.map((g) => g.id).sort((a, b) => a - b),
        key,
      ).toEqual(expected);
    }
  });

  it("built-in and seeded rows carry fixed timestamps, not the moment the database was made", async () => {
    const builtins = [...(await t.db.select().from(permissions)), ...(await t.db.select().from(roles))].filter(
      (r) => r.id <= MAX_BUILTIN && ("key" in r ? r.key !== null : true),
    );
    expect(builtins.length).toBeGreaterThan(20);
    for (const row of builtins)
      expect([row.createdAt, row.updatedAt]).toEqual(["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"]);
    const [school] = await t.db.select().from(schools).where(eq(schools.id, 1));
    expect(school?.createdAt).toBe("2026-08-01T12:00:00.000Z");
  });

  it("platform-only permissions are granted to the super-admin role alone", async () => {
    for (const name of ["permission.manage", "school.write"] as const) {
      const holders = await t.db
        .select({ roleId: rolePermissions.roleId })
        .from(rolePermissions)
        .where(eq(rolePermissions.permissionId, permissionId(name)));
      expect(holders.map((h) => h.roleId)).toEqual([BUILTIN_ROLES["super-admin"].id]);
    }
  });
});

describe("PermissionSet", () => {
  // A small deterministic generator, so a failure can be replayed.
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };

  it("encode, has and decode round-trip for ids 1..200", () => {
    for (let round = 0; round < 300; round++) {
      const density = random();
      const ids = Array.from({ length: 200 }, (_, i) => i + 1).filter(() => random() < density);
      const encoded = PermissionSet.encode(ids);
      expect(encoded).toMatch(/^[A-Za-z0-9_-]*$/);
      expect(PermissionSet.decode(encoded)).toEqual(ids);
      const members = new Set(ids);
      for (let id = 0; id <= 210; id++)
        expect(PermissionSet.has(encoded, id), `round ${round} id ${id}`).toBe(members.has(id));
    }
  });

  it("handles the edges: empty, single ids, duplicates, unordered input", () => {
    expect(PermissionSet.encode([])).toBe("");
    expect(PermissionSet.decode("")).toEqual([]);
    expect(PermissionSet.has("", 1)).toBe(false);
    for (const id of [1, 7, 8, 23, 24, 25, 200]) {
      const one = PermissionSet.encode([id]);
      expect(PermissionSet.decode(one)).toEqual([id]);
      expect(PermissionSet.has(one, id)).toBe(true);
      expect(PermissionSet.has(one, id + 1)).toBe(false);
    }
    expect(PermissionSet.decode(PermissionSet.encode([9, 3, 9, 1]))).toEqual([1, 3, 9]);
  });

  it("treats a garbled bitmap as granting nothing, without throwing", () => {
    for (const garbage of ["!!!!", "a", "@@@@@@@@", "====", "\u00ff\u00ff"]) {
      for (let id = 1; id <= 30; id++) expect(PermissionSet.has(garbage, id)).toBe(false);
      expect(() => PermissionSet.decode(garbage)).not.toThrow();
    }
  });

  it("the school-admin bitmap fits a short token claim", () => {
    const ids = grantsOf("school-admin").map((p) => p.id);
    // Ids up to ~170 (the catalogue grows by module): 22 bytes of bitmap, 30 characters.
    expect(PermissionSet.encode(ids).length).toBeLessThanOrEqual(30);
  });
});

describe("permission resource", () => {
  it("lets a super-admin create a custom permission", async () => {
    const res = await create({ name: "report.export", description: "Export reports" });
    expect(res.status).toBe(201);
    const created = (await res.json()) as Perm;
    expect(created).toMatchObject({ name: "report.export", description: "Export reports", builtIn: false });
    expect(created.id).toBeGreaterThan(MAX_BUILTIN);
    expect(created.createdAt).toBe(t.clock.now().toISOString());
    expect(created.updatedAt).toBe(created.createdAt);
    const fetched = await get(created.id, schoolAdmin);
    expect(fetched.status).toBe(200);
    expect(await fetched.json()).toEqual(created);
    // Description defaults to empty.
    const bare = await create({ name: "report.print" });
    expect(((await bare.json()) as Perm).description).toBe("");
  });

  it("is managed by the platform only: a school admin or teacher gets 403", async () => {
    for (const token of [schoolAdmin, teacher]) {
      const res = await create({ name: "school.hack" }, token);
      expect(res.status).toBe(403);
      expect((await problem(res)).detail).toMatch(/permission\.manage/);
      expect((await update(1, { description: "x" }, token)).status).toBe(403);
      expect((await remove(permissionId("cron-history.read"), token)).status).toBe(403);
    }
    expect((await search("school.hack")).total).toBe(0);
    // Reading needs permission.read: the admin has it, the teacher does not.
    expect((await t.request("/api/v1/permission", { token: teacher })).status).toBe(403);
    expect((await t.request("/api/v1/permission/1", { token: teacher })).status).toBe(403);
    expect((await t.request("/api/v1/permission", { token: schoolAdmin })).status).toBe(200);
    // Without a token: 401 everywhere.
    for (const res of [
      await t.request("/api/v1/permission"),
      await t.request("/api/v1/permission", { method: "POST", body: { name: "a.b" } }),
    ]) {
      expect(res.status).toBe(401);
    }
  });

  it("refuses a duplicate name with 409, built-in or custom", async () => {
    expect((await create({ name: "audit.read" })).status).toBe(201);
    for (const name of ["audit.read", "permission.read"]) {
      const res = await create({ name });
      expect(res.status, name).toBe(409);
      expect((await problem(res)).type).toBe("/problems/conflict");
    }
  });

  it("refuses a badly formed name with 400", async () => {
    for (const name of [
      "report",
      "Report.Export",
      "report.",
      ".report",
      "report..export",
      "report export",
      "report_export.x",
      "1report.x",
      "report.%",
      `a.${"b".repeat(100)}`,
      "",
      null,
      42,
    ]) {
      const res = await create({ name });
      expect(res.status, String(name)).toBe(400);
      expect((await problem(res)).errors?.[0]?.path).toBe("name");
    }
    const long = await create({ name: "report.long", description: "x".repeat(501) });
    expect(long.status).toBe(400);
    expect((await problem(long)).errors?.[0]?.path).toBe("description");
  });

  it("keeps built-ins: renaming or deleting one is a 422, describing it is allowed", async () => {
    const id = permissionId("school.read");
    const rename = await update(id, { name: "school.view" });
    expect(rename.status).toBe(422);
    expect((await problem(rename)).type).toBe("/problems/business-rule");

    const original = permissionCatalogue().find((p) => p.name === "school.read")?.description;
    t.clock.advance(5);
    const describe = await update(id, { description: "Read the school's profile" });
    expect(describe.status).toBe(204);
    expect(await describe.text()).toBe("");
    const after = (await (await get(id)).json()) as Perm;
    expect(after).toMatchObject({ name: "school.read", description: "Read the school's profile", builtIn: true });
    expect(after.updatedAt).toBe(t.clock.now().toISOString());
    expect(after.updatedAt > after.createdAt).toBe(true);

    const del = await remove(id);
    expect(del.status).toBe(422);
    await problem(del);
    expect((await get(id)).status).toBe(200);

    // Put the catalogue back as it was.
    expect((await update(id, { description: original })).status).toBe(204);
  });

  it("renames and deletes a custom permission", async () => {
    const { id } = (await (await create({ name: "visit.log" })).json()) as Perm;
    expect((await update(id, { name: "visit.record", description: "Record visits" })).status).toBe(204);
    expect(await (await get(id)).json()).toMatchObject({ name: "visit.record", description: "Record visits" });

    // Renaming onto an existing name is a conflict.
    const clash = await update(id, { name: "permission.read" });
    expect(clash.status).toBe(409);
    await problem(clash);

    const del = await remove(id);
    expect(del.status).toBe(204);
    expect(await del.text()).toBe("");
    const gone = await get(id);
    expect(gone.status).toBe(404);
    await problem(gone);
    expect((await remove(id)).status).toBe(404);
    expect((await update(id, { description: "x" })).status).toBe(404);
  });

  it("refuses fields that are not inputs", async () => {
    for (const body of [
      { name: "report.x", builtIn: true },
      { name: "report.x", id: 1 },
    ]) {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect((await problem(res)).errors?.[0]?.message).toBe("Unknown field");
    }
    const res = await update(permissionId("school.read"), { builtIn: false });
    expect(res.status).toBe(400);
  });
});

describe("name filter", () => {
  const catalogue = PERMISSION_NAMES;

  it("finds names containing the term, case-insensitively", async () => {
    for (const term of ["configuration", "holiday", ".write", "read"]) {
      const expected = catalogue.filter((n) => n.includes(term)).sort();
      expect(expected.length).toBeGreaterThan(0);
      const page = await search(term);
      expect(
        page.data
          .map((p) => p.name)
          .filter((n) => catalogue.includes(n))
          .sort(),
        term,
      ).toEqual(expected);
      expect(page.data.every((p) => p.name.includes(term))).toBe(true);
    }
    expect((await search("HOLIDAY")).data.map((p) => p.name).sort()).toEqual([
      "holiday-cycle.read",
      "holiday-cycle.write",
    ]);
  });

  it("takes % and _ literally", async () => {
    // No permission name can hold either, so an unescaped wildcard would match everything.
    for (const term of ["%", "_", "%read", "school_configuration", "s%l", "\\", "\\%"]) {
      expect((await search(term)).total, term).toBe(0);
    }
    expect((await search("school-configuration")).total).toBe(2);
  });

  it("refuses an empty or too long term", async () => {
    for (const term of ["", "x".repeat(49), "%".repeat(25)]) {
      const res = await t.request(`/api/v1/permission?name=${encodeURIComponent(term)}`, { token: schoolAdmin });
      expect(res.status, term).toBe(400);
      expect((await problem(res)).errors?.[0]?.path).toBe("name");
    }
    expect((await search("x".repeat(48))).total).toBe(0);
  });
});
