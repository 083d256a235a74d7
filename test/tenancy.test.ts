/**
 * Tenancy: the current school comes from `X-School-Id`, checked against the caller's
 * roles; a caller with one school may omit it; a super-admin may act in any school.
 *
 * School-scoped behaviour is checked on two probe routes made with `defineRoute`, exactly as every
 * resource's routes are, so these tests do not depend on which resources are mounted.
 */
import { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { mountOperation } from "../src/app";
import { roleUsers, users } from "../src/db/schema/core";
import { defineRoute, json, operation } from "../src/lib/route";
import { permissions as userPermissions } from "../src/modules/user/permissions";
import { DEMO, makeTestApp, problem } from "./helpers";

const t = makeTestApp();

const Probe = z.object({ userId: z.number().nullable(), schoolId: z.number().nullable() });
const probe = (path: string, access: "member" | typeof userPermissions.read) =>
  defineRoute({
    method: "get",
    path,
    tag: "Operations",
    operationId: `probe${path}`,
    summary: "Tenancy probe (test only)",
    access,
    responses: { 200: json(Probe, "Who and where") },
  });
for (const [path, access] of [
  ["/test/member", "member"],
  ["/test/user-read", userPermissions.read],
] as const) {
  mountOperation(
    t.app,
    operation(probe(path, access), (ctx) => ({ userId: ctx.userId, schoolId: ctx.schoolId })),
  );
}

beforeEach(() => {
  t.clock.advance(2 * 3600); // past every per-number code limit
});

/** A user with the given roles: [schoolId, roleId] (2 school-admin, 5 parent). */
async function userWithRoles(phone: string, roles: [number, number][]) {
  const [user] = await t.db.insert(users).values({ phone, status: "active" }).returning({ id: users.id });
  if (!user) throw new Error("user not inserted");
  for (const [schoolId, roleId] of roles) await t.db.insert(roleUsers).values({ schoolId, userId: user.id, roleId });
  return user.id;
}

describe("X-School-Id", () => {
  it("may be omitted by a caller with one school", async () => {
    const { accessToken } = await t.signIn(DEMO.northAdmin.phone);
    const res = await t.request("/test/user-read", { token: accessToken });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ userId: DEMO.northAdmin.id, schoolId: 1 });
    const south = await t.signIn(DEMO.southAdmin.phone);
    expect(await (await t.request("/test/member", { token: south.accessToken })).json()).toEqual({
      userId: DEMO.southAdmin.id,
      schoolId: 2,
    });
  });

  it("is required on school routes from a caller with roles in two schools, not on user routes", async () => {
    const phone = "+15550200001";
    const id = await userWithRoles(phone, [[1, 2]]);
    const before = await t.signIn(phone);
    expect((await t.request("/test/member", { token: before.accessToken })).status).toBe(200);

    // A role in a second school: it counts from the next sign-in or refresh.
    await t.db.insert(roleUsers).values({ schoolId: 2, userId: id, roleId: 5 });
    const refreshed = await t.request("/api/v1/auth/refresh-token", {
      method: "POST",
      body: { refreshToken: before.refreshToken },
    });
    expect(refreshed.status).toBe(200);
    const { accessToken } = (await refreshed.json()) as { accessToken: string };

    for (const path of ["/test/member", "/test/user-read", "/api/v1/permission"]) {
      const res = await t.request(path, { token: accessToken });
      expect(res.status, path).toBe(400);
      const body = await problem(res);
      expect(body.detail).toMatch(/X-School-Id/);
      expect(body.errors?.[0]?.path).toBe("X-School-Id");
    }
    // A user route needs no school.
    expect((await t.request("/api/v1/user/me", { token: accessToken })).status).toBe(200);

    // With the header, the roles of that school apply: admin in school 1, parent in school 2.
    const inNorth = await t.request("/test/user-read", { token: accessToken, school: 1 });
    expect(inNorth.status).toBe(200);
    expect(await inNorth.json()).toEqual({ userId: id, schoolId: 1 });
    const inSouth = await t.request("/test/user-read", { token: accessToken, school: 2 });
    expect(inSouth.status).toBe(403);
    expect((await problem(inSouth)).detail).toMatch(/user\.read in school 2/);
    expect(await (await t.request("/test/member", { token: accessToken, school: 2 })).json()).toEqual({
      userId: id,
      schoolId: 2,
    });
    expect((await t.request("/api/v1/permission", { token: accessToken, school: 1 })).status).toBe(200);
    expect((await t.request("/api/v1/permission", { token: accessToken, school: 2 })).status).toBe(403);
  });

  it("naming a school the caller has no role in is a 403", async () => {
    const { accessToken } = await t.signIn(DEMO.northAdmin.phone);
    for (const path of ["/test/member", "/test/user-read", "/api/v1/permission"]) {
      const res = await t.request(path, { token: accessToken, school: 2 });
      expect(res.status, path).toBe(403);
      expect((await problem(res)).detail).toMatch(/school 2/);
    }
    // A school that does not exist is a 404, for members of other schools too (test/hardening.test.ts).
    expect((await t.request("/test/member", { token: accessToken, school: 999 })).status).toBe(404);
  });

  it("must be a positive integer", async () => {
    const { accessToken } = await t.signIn(DEMO.northAdmin.phone);
    for (const value of ["abc", "0", "-1", "1.5", "01", "1e3", "12345678901", "1,2"]) {
      const res = await t.request("/test/member", { token: accessToken, headers: { "x-school-id": value } });
      expect(res.status, value).toBe(400);
      expect((await problem(res)).errors?.[0]?.path).toBe("X-School-Id");
    }
  });

  it("is not read on user routes", async () => {
    const { accessToken } = await t.signIn(DEMO.northAdmin.phone);
    const res = await t.request("/api/v1/user/me", { token: accessToken, headers: { "x-school-id": "abc" } });
    expect(res.status).toBe(200);
  });

  it("lets a super-admin act in any school, and requires it of them on school routes", async () => {
    const { accessToken } = await t.signIn(DEMO.superAdmin.phone);
    for (const school of [1, 2]) {
      const res = await t.request("/test/user-read", { token: accessToken, school });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ userId: DEMO.superAdmin.id, schoolId: school });
    }
    const none = await t.request("/test/member", { token: accessToken });
    expect(none.status).toBe(400);
    expect((await problem(none)).errors?.[0]?.path).toBe("X-School-Id");
    // Platform data (the permission catalogue) needs no school.
    expect((await t.request("/api/v1/permission", { token: accessToken })).status).toBe(200);
  });

  it("a signed-in user with no role anywhere is refused school routes but may read their own data", async () => {
    const phone = "+15550200002";
    await userWithRoles(phone, []);
    const { accessToken } = await t.signIn(phone);
    const res = await t.request("/test/member", { token: accessToken });
    expect(res.status).toBe(403);
    await problem(res);
    expect((await t.request("/test/member", { token: accessToken, school: 1 })).status).toBe(403);
    const me = await t.request("/api/v1/user/me", { token: accessToken });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { schools: unknown[] }).schools).toEqual([]);
  });

  it("a removed role stops counting at the next refresh", async () => {
    const phone = "+15550200003";
    const id = await userWithRoles(phone, [[1, 2]]);
    const session = await t.signIn(phone);
    await t.db.delete(roleUsers).where(and(eq(roleUsers.userId, id), eq(roleUsers.schoolId, 1)));
    const res = await t.request("/api/v1/auth/refresh-token", {
      method: "POST",
      body: { refreshToken: session.refreshToken },
    });
    const { accessToken } = (await res.json()) as { accessToken: string };
    expect((await t.request("/test/member", { token: accessToken, school: 1 })).status).toBe(403);
  });
});

describe("GET /api/v1/user/me", () => {
  const SCHOOL_ADMIN = { id: 2, key: "school-admin", name: "School admin" };
  const expected = [
    [DEMO.superAdmin, true, []],
    [DEMO.northAdmin, false, [{ id: 1, name: "Northside Demo School", roles: [SCHOOL_ADMIN] }]],
    [
      DEMO.northTeacher,
      false,
      [{ id: 1, name: "Northside Demo School", roles: [{ id: 4, key: "teacher", name: "Teacher" }] }],
    ],
    [
      DEMO.northParent,
      false,
      [{ id: 1, name: "Northside Demo School", roles: [{ id: 5, key: "parent", name: "Parent" }] }],
    ],
    [DEMO.southAdmin, false, [{ id: 2, name: "Southside Demo School", roles: [SCHOOL_ADMIN] }]],
  ] as const;

  it.each(expected)("answers user $id with their schools and roles", async (user, isSuperAdmin, schools) => {
    const { accessToken } = await t.signIn(user.phone);
    const res = await t.request("/api/v1/user/me", { token: accessToken });
    expect(res.status).toBe(200);
    const me = (await res.json()) as Record<string, unknown>;
    expect(me).toMatchObject({ id: user.id, phone: user.phone, status: "active", isSuperAdmin, schools });
    expect(me.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("lists every school and role of a user with several", async () => {
    const phone = "+15550200004";
    const id = await userWithRoles(phone, [
      [2, 5],
      [1, 5],
      [1, 2],
    ]);
    const { accessToken } = await t.signIn(phone);
    const me = (await (await t.request("/api/v1/user/me", { token: accessToken })).json()) as Record<string, unknown>;
    expect(me.id).toBe(id);
    expect(me.schools).toEqual([
      {
        id: 1,
        name: "Northside Demo School",
        roles: [SCHOOL_ADMIN, { id: 5, key: "parent", name: "Parent" }],
        actsFor: [],
      },
      { id: 2, name: "Southside Demo School", roles: [{ id: 5, key: "parent", name: "Parent" }], actsFor: [] },
    ]);
  });

  it("needs a token", async () => {
    const res = await t.request("/api/v1/user/me");
    expect(res.status).toBe(401);
    await problem(res);
  });
});
