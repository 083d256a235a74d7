/**
 * The escalation rules of src/modules/role/grants.ts, through every route that reaches them:
 *
 * 1. Giving, changing or taking a role needs every permission the role grants (`mayAssign`); a
 *    delegation counts as the parent role (a delegate acts with its permissions). `GIVES_OR_TAKES`
 *    holds one attempt per operation: a caller whose custom role holds the route's own permission
 *    but not the role's gets a 403 naming a permission they lack, and nothing is written; the same
 *    call by a caller who also holds the role's permissions succeeds.
 * 2. Nobody changes or removes a member who holds more than they do in the school (`mayActOn`).
 *    `ACTS_ON` holds one attempt per operation: staff (with the route's permission) acting on a
 *    school admin get a 403 naming what the admin holds that they do not; someone who holds it
 *    all may.
 *
 * Both tables are proven complete: every mutating operation of the OpenAPI document runs once with
 * its fixture (test/fixtures.ts), and one that writes `role_user` or `delegate` rows, or changes or
 * removes another person (their user row, their membership, their roles), must be in them. The
 * imports give roles from the queue consumer, after the request: their upload operations are in
 * the table explicitly (the right to give the role is checked when the import is started).
 */
import { createMessageBatch } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { administrativeUsers } from "../src/db/schema/administrative-user";
import { auditLog } from "../src/db/schema/audit-log";
import { bulkProcesses } from "../src/db/schema/bulk-process";
import { roleUsers, users } from "../src/db/schema/core";
import { delegates } from "../src/db/schema/delegate";
import { parents } from "../src/db/schema/parent";
import { teachers } from "../src/db/schema/teacher";
import { schoolUsers } from "../src/db/schema/user";
import { handleQueue } from "../src/jobs/queue";
import type { BuiltinRole } from "../src/lib/access";
import { grantsOf } from "../src/modules";
import { FIXTURES, fixtureFor, operationRequest } from "./fixtures";
import { makeTestApp, problem, type TestApp } from "./helpers";

const NORTH = 1;
const t = makeTestApp();

type Operation = {
  operationId: string;
  "x-access": string;
  "x-audit"?: string;
  "x-read-only"?: boolean;
  "x-destructive"?: boolean;
  requestBody?: unknown;
};
const doc = (await (await t.request("/api/openapi.json")).json()) as {
  paths: Record<string, Record<string, Operation>>;
};
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);
const byId = new Map(operations.map((o) => [o.op.operationId, o]));

const ROLE_KEYS: Record<number, Exclude<BuiltinRole, "super-admin">> = {
  2: "school-admin",
  3: "staff",
  4: "teacher",
  5: "parent",
};
const permissionsOf = (roles: readonly number[]) => [
  ...new Set(
    roles.flatMap((r) => {
      const key = ROLE_KEYS[r];
      if (!key) throw new Error(`role ${r} is not a built-in school role`);
      return grantsOf(key).map((p) => p.name);
    }),
  ),
];

let superAdmin: string;
beforeAll(async () => {
  superAdmin = await t.token(1, {}, true);
});

// ---------------------------------------------------------------------------------------------
// Making what the attempts need, as a super-admin

let phones = 0;
const phone = () => `+1555${7_000_000 + ++phones}`;

async function send(method: string, path: string, token: string, body?: unknown) {
  return t.request(path, { method, token, school: NORTH, body });
}

async function made<T = { id: number }>(res: Response): Promise<T> {
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return (await res.json()) as T;
}

/** A new member of the school holding `roleIds`; their user id. */
async function person(roleIds: number[] = []) {
  const body = { phone: phone(), firstName: "Esca", lastName: "Lation", roleIds };
  return (await made(await send("POST", "/api/v1/user", superAdmin, body))).id;
}

async function membership(userId: number, roleId: number) {
  const [row] = await t.db
    .select({ id: roleUsers.id })
    .from(roleUsers)
    .where(and(eq(roleUsers.userId, userId), eq(roleUsers.schoolId, NORTH), eq(roleUsers.roleId, roleId)));
  if (!row) throw new Error(`user ${userId} does not hold role ${roleId}`);
  return row.id;
}

async function profile(table: typeof teachers | typeof administrativeUsers | typeof parents, userId: number) {
  const [row] = await t.db
    .select({ id: table.id })
    .from(table)
    .where(and(eq(table.schoolId, NORTH), eq(table.userId, userId)));
  if (!row) throw new Error(`user ${userId} has no profile in ${NORTH}`);
  return row.id;
}

async function delegateOf(parentUserId: number) {
  const parentId = await profile(parents, parentUserId);
  const body = { parentId, phone: phone(), firstName: "Dele", validFrom: "2026-11-01", validUntil: "2026-12-31" };
  return (await made(await send("POST", "/api/v1/delegate", superAdmin, body))).id;
}

let uploads = 0;
const document = async () => {
  const body = { name: "Import", slug: `${NORTH}/documents/escalation-${++uploads}.xlsx` };
  return (await made(await send("POST", "/api/v1/documents", superAdmin, body))).id;
};

/** A failed import of `entity` (its file was never uploaded), which PUT may queue again. */
async function failedImport(entity: string) {
  const body = { entity, documentId: await document() };
  const { id } = await made(await send("POST", "/api/v1/bulk-process", superAdmin, body));
  const message = {
    id: `escalation-${id}`,
    timestamp: new Date(),
    attempts: 1,
    body: { bulkProcessId: id, schoolId: NORTH },
  };
  await handleQueue(t.deps, createMessageBatch("school-bulk", [message]));
  return id;
}

/** A caller holding exactly `permissions` here through a custom role of their own; their token and id. */
async function callerWith(permissions: string[], builtIn: number[] = []) {
  const role = await made(
    await send("POST", "/api/v1/role", superAdmin, { name: `Custom ${phones + 1}`, permissions }),
  );
  const id = await person([role.id, ...builtIn]);
  return { id, token: await t.token(id, { [NORTH]: permissions }) };
}

/** The rows the rules protect: memberships, delegations, people, school memberships, imports. */
async function snapshot() {
  const { db } = t;
  const [memberships, delegations, people, schoolMembers, processes] = await db.batch([
    db.select().from(roleUsers),
    db.select().from(delegates),
    db.select().from(users),
    // Who is a member, not when the school last texted them (an invitation changes no one).
    db.select({ id: schoolUsers.id, userId: schoolUsers.userId, deletedAt: schoolUsers.deletedAt }).from(schoolUsers),
    db.select({ id: bulkProcesses.id, status: bulkProcesses.status }).from(bulkProcesses),
  ]);
  const keyed = <T extends { id: number }>(rows: T[]) => new Map(rows.map((r) => [r.id, JSON.stringify(r)]));
  return {
    memberships: keyed(memberships),
    delegations: keyed(delegations),
    people: keyed(people),
    schoolMembers: keyed(schoolMembers),
    processes: keyed(processes),
  };
}
type Snapshot = Awaited<ReturnType<typeof snapshot>>;

const auditOf = (res: Response) =>
  t.db
    .select()
    .from(auditLog)
    .where(eq(auditLog.requestId, res.headers.get("x-request-id") ?? "none"));

/** Expects a 403 from a rule (naming one of `lacking`) that wrote nothing at all. */
async function refused(res: Response, before: Snapshot, lacking: string[]) {
  expect(res.status, await res.clone().text()).toBe(403);
  const { detail } = await problem(res);
  expect(detail).toMatch(/which you do not/);
  const named = lacking.filter((p) => new RegExp(`\\b${p.replaceAll(".", "\\.")}\\b`).test(detail));
  expect(named, `${detail} names a permission the caller lacks: ${lacking.join(", ")}`).not.toHaveLength(0);
  expect(await auditOf(res)).toEqual([]);
  expect(await snapshot()).toEqual(before);
}

// ---------------------------------------------------------------------------------------------
// Rule 1: giving, changing or taking a role

/** A request ready to send as a caller (what it refers to is already made). */
type Send = (token: string) => Promise<Response>;

interface Attempt {
  /** The roles the call gives or takes (a delegation: the parent role). */
  roles: number[];
  /** Permissions the route needs besides its own (x-access) to reach the rule. */
  also?: string[];
  /** Makes what the call refers to, for the caller `me`, and answers the call. */
  prepare: (me: number) => Promise<Send>;
}

const dates = { validFrom: "2026-11-01", validUntil: "2026-12-31" };
const ready =
  (method: string, path: string, body?: unknown): Send =>
  (token) =>
    send(method, path, token, body);

const GIVES_OR_TAKES: Record<string, Attempt> = {
  createRoleUser: {
    roles: [2],
    prepare: async () => ready("POST", "/api/v1/role-user", { userId: await person(), roleId: 2 }),
  },
  updateRoleUser: {
    roles: [2, 4],
    prepare: async () => ready("PUT", `/api/v1/role-user/${await membership(await person([2]), 2)}`, { roleId: 4 }),
  },
  deleteRoleUser: {
    roles: [2],
    prepare: async () => ready("DELETE", `/api/v1/role-user/${await membership(await person([2]), 2)}`),
  },
  removeRoleFromUser: {
    roles: [2],
    prepare: async () => ready("DELETE", `/api/v1/role-user/remove?userId=${await person([2])}&roleId=2`),
  },
  assignMultipleRolesToUser: {
    roles: [2],
    prepare: async () => ready("POST", "/api/v1/role-user/assign-multiple", { userId: await person(), roleIds: [2] }),
  },
  assignUserRoles: {
    roles: [2],
    prepare: async () => ready("POST", `/api/v1/user/${await person()}/roles`, { roleIds: [2] }),
  },
  createUser: {
    roles: [2],
    prepare: async () => ready("POST", "/api/v1/user", { phone: phone(), firstName: "Sneaky", roleIds: [2] }),
  },
  deleteUser: {
    roles: [4],
    prepare: async () => ready("DELETE", `/api/v1/user/${await person([4])}`),
  },
  deleteUsers: {
    roles: [4],
    prepare: async () => ready("POST", "/api/v1/user/delete-multiple", { ids: [await person([4])] }),
  },
  assignPendingUsersToParents: {
    roles: [5],
    prepare: async () => ready("POST", "/api/v1/user/assign-pending-to-parents", { userIds: [await person()] }),
  },
  createSchoolAdministrator: {
    roles: [2],
    // Oneself: the attack this rule stops.
    prepare: async (me) => ready("POST", "/api/v1/school-administrator", { userId: me }),
  },
  deleteSchoolAdministrator: {
    roles: [2],
    prepare: async () => ready("DELETE", `/api/v1/school-administrator/${await membership(await person([2]), 2)}`),
  },
  createTeacher: {
    roles: [4],
    prepare: async () => ready("POST", "/api/v1/teacher", { phone: phone(), firstName: "Tea" }),
  },
  deleteTeacher: {
    roles: [4],
    prepare: async () => ready("DELETE", `/api/v1/teacher/${await profile(teachers, await person([4]))}`),
  },
  createAdministrativeUser: {
    roles: [3],
    prepare: async () => ready("POST", "/api/v1/administrative-user", { phone: phone(), firstName: "Sta" }),
  },
  deleteAdministrativeUser: {
    roles: [3],
    prepare: async () =>
      ready("DELETE", `/api/v1/administrative-user/${await profile(administrativeUsers, await person([3]))}`),
  },
  createParent: {
    roles: [5],
    prepare: async () => ready("POST", "/api/v1/parent", { phone: phone(), firstName: "Par", relationship: "mother" }),
  },
  deleteParent: {
    roles: [5],
    prepare: async () => ready("DELETE", `/api/v1/parent/${await profile(parents, await person([5]))}`),
  },
  createDelegate: {
    roles: [5],
    also: ["parent.write"],
    prepare: async () => {
      const parentId = await profile(parents, await person([5]));
      return ready("POST", "/api/v1/delegate", { parentId, phone: phone(), firstName: "Del", ...dates });
    },
  },
  updateDelegate: {
    roles: [5],
    also: ["parent.read", "parent.write"],
    prepare: async () =>
      ready("PUT", `/api/v1/delegate/${await delegateOf(await person([5]))}`, { validUntil: "2027-01-31" }),
  },
  deleteDelegate: {
    roles: [5],
    also: ["parent.write"],
    prepare: async () => ready("DELETE", `/api/v1/delegate/${await delegateOf(await person([5]))}`),
  },
  uploadTeachersFile: {
    roles: [4],
    also: ["teacher.write"],
    prepare: async () => ready("POST", "/api/v1/teacher/upload-file", { documentId: await document() }),
  },
  uploadAdministrativeUsersFile: {
    roles: [3],
    also: ["administrative-user.write"],
    prepare: async () => ready("POST", "/api/v1/administrative-user/upload-file", { documentId: await document() }),
  },
  uploadFamiliesFile: {
    roles: [5],
    prepare: async () => ready("POST", "/api/v1/family/upload-file", { documentId: await document() }),
  },
  createBulkProcess: {
    roles: [5],
    prepare: async () => ready("POST", "/api/v1/bulk-process", { entity: "families", documentId: await document() }),
  },
  updateBulkProcess: {
    roles: [4],
    also: ["teacher.write"],
    prepare: async () => ready("PUT", `/api/v1/bulk-process/${await failedImport("teachers")}`, { status: "queued" }),
  },
};

/** The permission of the route (x-access) and those it needs besides. */
function ownPermissions(operationId: string, also: string[] = []) {
  const operation = byId.get(operationId);
  expect(operation, `${operationId} is an operation of the document`).toBeDefined();
  return [...new Set([operation?.op["x-access"] ?? "", ...also])];
}

describe("giving, changing or taking a role needs every permission the role grants", () => {
  for (const [operationId, attempt] of Object.entries(GIVES_OR_TAKES)) {
    it(`${operationId}: 403 naming a permission of the role the caller lacks, nothing written`, async () => {
      const own = ownPermissions(operationId, attempt.also);
      const lacking = permissionsOf(attempt.roles).filter((p) => !own.includes(p));
      expect(lacking.length, "the role grants something the route's permission does not").toBeGreaterThan(0);

      const weak = await callerWith(own);
      const call = await attempt.prepare(weak.id);
      const before = await snapshot();
      await refused(await call(weak.token), before, lacking);

      // The same call by a caller who also holds the role's permissions goes through.
      const strong = await callerWith([...new Set([...own, ...permissionsOf(attempt.roles)])]);
      const ok = await (await attempt.prepare(strong.id))(strong.token);
      expect(ok.status, await ok.clone().text()).toBeLessThan(300);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Rule 2: changing or removing a member who holds more than the caller

interface Act {
  /** The built-in roles the school admin acted on also holds (a profile the route edits or takes). */
  holds: number[];
  /** Permissions the route needs besides its own (x-access) to reach the rule. */
  also?: string[];
  /** Makes what the call refers to for the target (their user id), and answers the call. */
  prepare: (target: number) => Promise<Send>;
}

const ACTS_ON: Record<string, Act> = {
  updateUser: {
    holds: [],
    prepare: async (target) => ready("PUT", `/api/v1/user/${target}`, { status: "inactive" }),
  },
  deleteUser: { holds: [], prepare: async (target) => ready("DELETE", `/api/v1/user/${target}`) },
  deleteUsers: {
    holds: [],
    prepare: async (target) => ready("POST", "/api/v1/user/delete-multiple", { ids: [target] }),
  },
  assignUserRoles: {
    // Takes their teacher role (which the caller could give), leaving them an admin.
    holds: [4],
    prepare: async (target) => ready("POST", `/api/v1/user/${target}/roles`, { roleIds: [2] }),
  },
  updateRoleUser: {
    holds: [4],
    prepare: async (target) => ready("PUT", `/api/v1/role-user/${await membership(target, 4)}`, { roleId: 3 }),
  },
  deleteRoleUser: {
    holds: [4],
    prepare: async (target) => ready("DELETE", `/api/v1/role-user/${await membership(target, 4)}`),
  },
  removeRoleFromUser: {
    holds: [4],
    prepare: async (target) => ready("DELETE", `/api/v1/role-user/remove?userId=${target}&roleId=4`),
  },
  updateSchoolAdministrator: {
    holds: [],
    prepare: async (target) =>
      ready("PUT", `/api/v1/school-administrator/${await membership(target, 2)}`, { lastName: "Locked" }),
  },
  deleteSchoolAdministrator: {
    holds: [],
    prepare: async (target) => ready("DELETE", `/api/v1/school-administrator/${await membership(target, 2)}`),
  },
  updateTeacher: {
    holds: [4],
    prepare: async (target) => ready("PUT", `/api/v1/teacher/${await profile(teachers, target)}`, { lastName: "X" }),
  },
  deleteTeacher: {
    holds: [4],
    prepare: async (target) => ready("DELETE", `/api/v1/teacher/${await profile(teachers, target)}`),
  },
  updateAdministrativeUser: {
    holds: [3],
    prepare: async (target) =>
      ready("PUT", `/api/v1/administrative-user/${await profile(administrativeUsers, target)}`, { lastName: "X" }),
  },
  deleteAdministrativeUser: {
    holds: [3],
    prepare: async (target) =>
      ready("DELETE", `/api/v1/administrative-user/${await profile(administrativeUsers, target)}`),
  },
  updateParent: {
    holds: [5],
    prepare: async (target) => ready("PUT", `/api/v1/parent/${await profile(parents, target)}`, { lastName: "X" }),
  },
  deleteParent: {
    holds: [5],
    prepare: async (target) => ready("DELETE", `/api/v1/parent/${await profile(parents, target)}`),
  },
};

const STAFF = permissionsOf([3]);

describe("nobody changes or removes a member who holds more than they do", () => {
  for (const [operationId, act] of Object.entries(ACTS_ON)) {
    it(`${operationId}: staff acting on a school admin get a 403 naming what the admin holds, nothing written`, async () => {
      const own = [...new Set([...STAFF, ...ownPermissions(operationId, act.also)])];
      const lacking = permissionsOf([2, ...act.holds]).filter((p) => !own.includes(p));
      expect(lacking.length, "a school admin holds something staff do not").toBeGreaterThan(0);

      const staff = await callerWith(own, [3]);
      const call = await act.prepare(await person([2, ...act.holds]));
      const before = await snapshot();
      await refused(await call(staff.token), before, lacking);

      // Someone who holds everything the admin holds may.
      const peer = await callerWith([...new Set([...own, ...lacking])]);
      const ok = await (await act.prepare(await person([2, ...act.holds])))(peer.token);
      expect(ok.status, await ok.clone().text()).toBeLessThan(300);
    });
  }

  it("the same staff member changes a colleague who holds no more than they do", async () => {
    const staff = await callerWith([...STAFF], [3]);
    const colleague = await person([3, 4]);
    expect((await send("PUT", `/api/v1/user/${colleague}`, staff.token, { firstName: "Colega" })).status).toBe(204);
    expect((await send("DELETE", `/api/v1/user/${colleague}`, staff.token)).status).toBe(204);
  });

  it("a user may act on themselves, even holding more than their token says", async () => {
    // Made an administrator after their token was issued: their own name is still theirs to edit.
    const me = await callerWith([...STAFF], [2]);
    const res = await send("PUT", `/api/v1/user/${me.id}`, me.token, { firstName: "Myself" });
    expect(res.status, await res.clone().text()).toBe(204);
  });

  it("a super-admin may act on anyone", async () => {
    const admin = await person([2, 4]);
    expect((await send("PUT", `/api/v1/user/${admin}`, superAdmin, { status: "inactive" })).status).toBe(204);
    expect((await send("DELETE", `/api/v1/role-user/${await membership(admin, 4)}`, superAdmin)).status).toBe(204);
  });

  it("editing only a profile's own fields is not acting on the person (a teacher's subjects)", async () => {
    const staff = await callerWith([...STAFF], [3]);
    const admin = await person([2, 4]);
    const res = await send("PUT", `/api/v1/teacher/${await profile(teachers, admin)}`, staff.token, {
      subjects: ["Art"],
    });
    expect(res.status, await res.clone().text()).toBe(204);
  });
});

describe("the attack, end to end", () => {
  it("a custom role with role.write cannot make its holder a school admin, nor remove one", async () => {
    const role = await made(
      await send("POST", "/api/v1/role", superAdmin, { name: "Role keeper", permissions: ["role.write", "role.read"] }),
    );
    const number = phone();
    const me = (
      await made(
        await send("POST", "/api/v1/user", superAdmin, { phone: number, firstName: "Eve", roleIds: [role.id] }),
      )
    ).id;
    const signed = await t.signIn(number);
    const mine = await send("POST", "/api/v1/school-administrator", signed.accessToken, { userId: me });
    expect(mine.status).toBe(403);
    expect((await problem(mine)).detail).toMatch(/school admin/i);
    const admin = await membership(await person([2]), 2);
    expect((await send("DELETE", `/api/v1/school-administrator/${admin}`, signed.accessToken)).status).toBe(403);
    // The next token holds what the role grants, and no more.
    const refreshed = await t.request("/api/v1/auth/refresh-token", {
      method: "POST",
      body: { refreshToken: signed.refreshToken },
    });
    const { accessToken } = (await made(refreshed)) as unknown as { accessToken: string };
    const perms = await made<{ permissions: string[] }>(await send("GET", "/api/v1/user/me/permissions", accessToken));
    expect(perms.permissions.sort()).toEqual(["role.read", "role.write"]);
  });
});

// ---------------------------------------------------------------------------------------------
// The tables are complete

/** Operations that change another person's user row or membership for reasons these rules do not govern. */
const NOT_ACTING_ON: Record<string, string> = {};

/** Mutating operations the sweep does not run (no fixture request), and why no rule concerns them. */
const NOT_SWEPT: Record<string, string> = {
  deleteCurrentUser: "the caller's own account: everyone may act on themselves",
  deleteAllNotifications: "the caller's own inbox copies: no role, no other person",
  deleteMultipleSchools: "school.write is a platform permission: super-admins only, who may do anything",
  deleteStudents: "students are records, not users: no role, no person",
  deleteMultipleStudents: "students are records, not users: no role, no person",
  endDismissalReunification: "ends the school's emergency (school admins): no role, no other person",
};

describe("the tables are complete", () => {
  it("name operations of the document", () => {
    for (const id of [GIVES_OR_TAKES, ACTS_ON, NOT_ACTING_ON, NOT_SWEPT].flatMap((table) => Object.keys(table))) {
      expect(byId.has(id), id).toBe(true);
    }
  });

  it("hold every operation audited as a role membership or a school administrator", () => {
    const audited = operations
      .filter(
        ({ method, op }) => method !== "GET" && ["role-user", "school-administrator"].includes(op["x-audit"] ?? ""),
      )
      .map(({ op }) => op.operationId);
    expect(audited.length).toBeGreaterThan(5);
    for (const id of audited) expect(id in GIVES_OR_TAKES || id in ACTS_ON, id).toBe(true);
  });

  it("hold every operation that gives or takes a role or a delegation, or changes or removes another person", async () => {
    const admin = await t.token(2, { [NORTH]: "all" });
    // The data reset (`x-destructive`) would empty the database the sweep runs on: test/reset-data.test.ts.
    const exempt = (path: string, op: Operation) =>
      /^\/api\/v1\/(auth|dev)\//.test(path) || op["x-read-only"] === true || op["x-destructive"] === true;
    const found: { gives: string[]; acts: string[]; skipped: string[] } = { gives: [], acts: [], skipped: [] };
    for (const { path, method, op } of operations) {
      if (method === "GET" || exempt(path, op)) continue;
      const fixture = fixtureFor(path);
      let observed: { before: Snapshot; after: Snapshot } | undefined;
      const observe = async (send: () => Promise<Response>) => {
        const before = await snapshot();
        const res = await send();
        expect(res.status, `${op.operationId}: ${await res.clone().text()}`).toBeLessThan(300);
        observed = { before, after: await snapshot() };
        return res;
      };
      if ((path.includes("{id}") && fixture) || fixture?.bodies?.[op.operationId] !== undefined) {
        const id = path.includes("{id}") ? await fixture?.create(t, NORTH) : undefined;
        const { url, body } = await operationRequest(t, path, op, { id });
        await observe(() => t.request(url, { method, token: admin, school: NORTH, body }));
      } else if (method === "POST" && fixture && FIXTURES[path] === fixture) {
        // The collection's create, which the fixture makes its record through (after what the
        // record refers to): only that request is observed.
        const watching: TestApp = {
          ...t,
          request: (url, init = {}) =>
            url === path && init.method === "POST" ? observe(() => t.request(url, init)) : t.request(url, init),
        };
        await fixture.create(watching, NORTH);
      }
      if (!observed) {
        found.skipped.push(op.operationId);
        continue;
      }
      const { before, after } = observed;
      const changed = (was: Map<number, string>, is: Map<number, string>) => ({
        added: [...is.keys()].some((id) => !was.has(id)),
        removedOrChanged: [...was].some(([id, row]) => is.get(id) !== row),
      });
      const memberships = changed(before.memberships, after.memberships);
      const delegations = changed(before.delegations, after.delegations);
      const others = (m: Map<number, string>) => new Map([...m].filter(([id]) => id !== 2));
      const people = changed(others(before.people), others(after.people));
      const schoolMembers = changed(before.schoolMembers, after.schoolMembers);
      if (memberships.added || memberships.removedOrChanged || delegations.added || delegations.removedOrChanged) {
        found.gives.push(op.operationId);
      }
      if (memberships.removedOrChanged || people.removedOrChanged || schoolMembers.removedOrChanged) {
        found.acts.push(op.operationId);
      }
    }
    expect(
      found.gives.filter((id) => !(id in GIVES_OR_TAKES)),
      "give or take roles: add them to GIVES_OR_TAKES",
    ).toEqual([]);
    expect(
      found.acts.filter((id) => !(id in ACTS_ON) && !(id in GIVES_OR_TAKES) && !(id in NOT_ACTING_ON)),
      "change or remove people: add them to ACTS_ON",
    ).toEqual([]);
    expect(
      found.skipped.filter((id) => !(id in GIVES_OR_TAKES) && !(id in ACTS_ON) && !(id in NOT_SWEPT)),
      "not run by the sweep: add a fixture request, or say in NOT_SWEPT why no rule concerns it",
    ).toEqual([]);
  }, 120_000);
});
