/**
 * Lists at their declared maximum over records that exist: D1 binds at most 100 parameters per
 * statement, so a list from a request reaches SQL as one JSON parameter (`inList`, `jsonValues` in
 * src/db/write.ts) and bulk inserts read their rows from JSON (`json_each`). The generated check in
 * test/conformance-suite.ts sends every declared maximum with made-up values (the lookups run, then
 * a 404); here the records exist, so every statement of the operation runs: lookups, writes, audit.
 */
import { and, count, eq, isNotNull, isNull, type SQLWrapper, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { rolePermissions, roleUsers, users } from "../src/db/schema/core";
import { families } from "../src/db/schema/family";
import { groupStudents, groupTeachers } from "../src/db/schema/group";
import { students } from "../src/db/schema/student";
import { taskRecipients } from "../src/db/schema/task";
import { teachers } from "../src/db/schema/teacher";
import { schoolUsers } from "../src/db/schema/user";
import { jsonValues } from "../src/db/write";
import { fold } from "../src/lib/fold";
import { DEMO, makeTestApp } from "./helpers";

const t = makeTestApp();
/** The test's own `IN`: a list as one JSON parameter. */
const within = (column: SQLWrapper, list: readonly (number | string)[]) => sql`${column} IN ${jsonValues(list)}`;
const NORTH = 1;
const AT = "2026-09-01T12:00:00.000Z";
const TEACHER = 4;

let admin: string;
beforeAll(async () => {
  admin = await t.token(DEMO.northAdmin.id, { [NORTH]: "all" });
});

const post = (path: string, body: unknown, method = "POST") =>
  t.request(path, { method, token: admin, school: NORTH, body });

let made = 0;
/** `n` values unique in this file: `prefix` and a number. */
const fresh = (n: number, prefix: string) => {
  const run = ++made;
  return Array.from({ length: n }, (_, i) => `${prefix}${String(run * 1000 + i).padStart(7, "0")}`);
};

/**
 * `n` new people of the first school: given `role` (the membership and the profile follow by
 * trigger), or members with no role. Written as JSON (`json_each`): the test itself binds few
 * parameters too.
 */
async function people(n: number, role?: number): Promise<number[]> {
  const phones = fresh(n, "+1556");
  await t.db.run(
    sql`INSERT INTO user (created_at, updated_at, phone, first_name, last_name, first_name_search, last_name_search, language, status)
      SELECT ${AT}, ${AT}, value, 'Max', 'Imum', 'max', 'imum', 'es', 'invited' FROM json_each(${JSON.stringify(phones)})`,
  );
  const ids = (await t.db.select({ id: users.id }).from(users).where(within(users.phone, phones))).map((r) => r.id);
  const json = JSON.stringify(ids);
  await t.db.run(
    role === undefined
      ? sql`INSERT INTO school_user (created_at, updated_at, school_id, user_id)
          SELECT ${AT}, ${AT}, ${NORTH}, value FROM json_each(${json})`
      : sql`INSERT INTO role_user (created_at, updated_at, school_id, user_id, role_id)
          SELECT ${AT}, ${AT}, ${NORTH}, value, ${role} FROM json_each(${json})`,
  );
  expect(ids).toHaveLength(n);
  return ids;
}

/** `n` new students of the first school. */
async function newStudents(n: number): Promise<number[]> {
  const names = fresh(n, "Maximum ");
  await t.db.run(
    sql`INSERT INTO student (created_at, updated_at, school_id, first_name, last_name, first_name_search, last_name_search, status)
      SELECT ${AT}, ${AT}, ${NORTH}, 'Max', value->>0, 'max', value->>1, 'active'
      FROM json_each(${JSON.stringify(names.map((n) => [n, fold(n)]))})`,
  );
  const rows = await t.db
    .select({ id: students.id })
    .from(students)
    .where(and(eq(students.schoolId, NORTH), within(students.lastName, names)));
  expect(rows).toHaveLength(n);
  return rows.map((r) => r.id);
}

describe("POST and DELETE /api/v1/student/delete-multiple", () => {
  it("deletes 100 students at once, by either method", { timeout: 30_000 }, async () => {
    for (const method of ["POST", "DELETE"]) {
      const ids = await newStudents(100);
      const res = await post("/api/v1/student/delete-multiple", { ids }, method);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(((await res.json()) as { deleted: number[] }).deleted.sort()).toEqual([...ids].sort());
      const [deleted] = await t.db
        .select({ n: count() })
        .from(students)
        .where(and(within(students.id, ids), isNotNull(students.deletedAt)));
      expect(deleted?.n, method).toBe(100);
    }
  });
});

describe("the school's people, 100 at once", () => {
  it("POST /api/v1/user/delete-multiple removes 100 members (their roles too)", { timeout: 30_000 }, async () => {
    const ids = await people(100, TEACHER);
    const res = await post("/api/v1/user/delete-multiple", { ids });
    expect(res.status, await res.clone().text()).toBe(200);
    const [left] = await t.db
      .select({ n: count() })
      .from(schoolUsers)
      .where(and(within(schoolUsers.userId, ids), isNull(schoolUsers.deletedAt)));
    expect(left?.n).toBe(0);
    const [roles] = await t.db.select({ n: count() }).from(roleUsers).where(within(roleUsers.userId, ids));
    expect(roles?.n).toBe(0);
  });

  it("POST /api/v1/user/invite/users texts 100 members", { timeout: 30_000 }, async () => {
    const ids = await people(100, TEACHER);
    const res = await post("/api/v1/user/invite/users", { userIds: ids });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ sent: 100, skipped: [] });
  });

  it("POST /api/v1/user/invite/school makes 100 new people members and texts them", { timeout: 30_000 }, async () => {
    const phones = fresh(100, "+1557");
    const res = await post("/api/v1/user/invite/school", { phones });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ sent: 100, skipped: [] });
    const [members] = await t.db
      .select({ n: count() })
      .from(schoolUsers)
      .innerJoin(users, eq(users.id, schoolUsers.userId))
      .where(and(eq(schoolUsers.schoolId, NORTH), within(users.phone, phones)));
    expect(members?.n).toBe(100);
  });

  it("POST /api/v1/user/assign-pending-to-parents makes 100 named members parents", { timeout: 30_000 }, async () => {
    const ids = await people(100);
    const res = await post("/api/v1/user/assign-pending-to-parents", { userIds: ids });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { assigned: number[] }).assigned.sort()).toEqual([...ids].sort());
  });
});

describe("roles", () => {
  /** Every permission a school's role may grant: the built-in roles' and `extra` custom ones. */
  async function grantable(extra: number) {
    const names = fresh(extra, "custom.maximum-");
    await t.db.run(
      sql`INSERT INTO permission (id, created_at, updated_at, name, description)
        SELECT 5000 + ${made} * 1000 + key, ${AT}, ${AT}, value, 'Made by the test' FROM json_each(${JSON.stringify(names)})`,
    );
    const builtIn = await t.db
      .selectDistinct({ id: rolePermissions.permissionId })
      .from(rolePermissions)
      .where(sql`${rolePermissions.roleId} BETWEEN 2 AND 5`);
    return [...builtIn.map((p) => p.id), ...names];
  }

  it("POST /api/v1/role and PUT /api/v1/role/{id} take 200 permissions (by id and by name)", {
    timeout: 30_000,
  }, async () => {
    const all = await grantable(200);
    const first = all.slice(0, 200);
    expect(first.length).toBe(200);
    const res = await post("/api/v1/role", { name: "Maximum", permissions: first });
    expect(res.status, await res.clone().text()).toBe(201);
    const role = (await res.json()) as { id: number; permissions: unknown[] };
    expect(role.permissions).toHaveLength(200);
    const second = all.slice(-200);
    const put = await post(`/api/v1/role/${role.id}`, { permissions: second }, "PUT");
    expect(put.status, await put.clone().text()).toBe(204);
    const [held] = await t.db.select({ n: count() }).from(rolePermissions).where(eq(rolePermissions.roleId, role.id));
    expect(held?.n).toBe(200);
  });

  it("POST /api/v1/role-user/assign-multiple and POST /api/v1/user/{id}/roles take 20 roles", {
    timeout: 30_000,
  }, async () => {
    const names = fresh(20, "Maximum role ");
    await t.db.run(
      sql`INSERT INTO role (created_at, updated_at, key, name, name_search, school_id)
        SELECT ${AT}, ${AT}, NULL, value->>0, value->>1, ${NORTH}
        FROM json_each(${JSON.stringify(names.map((n) => [n, fold(n)]))})`,
    );
    const roleIds = (
      await t.db.run(
        sql`SELECT id FROM role WHERE school_id = ${NORTH} AND name IN (SELECT value FROM json_each(${JSON.stringify(names)}))`,
      )
    ).results.map((r) => (r as { id: number }).id);
    expect(roleIds).toHaveLength(20);
    const [userId] = await people(1, TEACHER);
    const assigned = await post("/api/v1/role-user/assign-multiple", { userId, roleIds });
    expect(assigned.status, await assigned.clone().text()).toBe(200);
    expect(((await assigned.json()) as { added: number[] }).added).toHaveLength(20);
    const [other] = await people(1, TEACHER);
    const set = await post(`/api/v1/user/${other}/roles`, { roleIds });
    expect(set.status, await set.clone().text()).toBe(200);
    expect(((await set.json()) as { roles: unknown[] }).roles).toHaveLength(20);
  });
});

describe("groups and families", () => {
  it("PUT and DELETE /api/v1/group/{id}/participants take 100 teachers and 100 students", {
    timeout: 30_000,
  }, async () => {
    const group = await post("/api/v1/group", { name: "Maximum", level: "elementary", schoolYear: "2026-2027" });
    expect(group.status, await group.clone().text()).toBe(201);
    const { id } = (await group.json()) as { id: number };
    const userIds = await people(100, TEACHER);
    const teacherIds = (
      await t.db
        .select({ id: teachers.id })
        .from(teachers)
        .where(and(eq(teachers.schoolId, NORTH), within(teachers.userId, userIds)))
    ).map((r) => r.id);
    const studentIds = await newStudents(100);
    const add = await post(`/api/v1/group/${id}/participants`, { teacherIds, studentIds }, "PUT");
    expect(add.status, await add.clone().text()).toBeLessThan(300);
    const inGroup = async () => [
      (await t.db.select({ n: count() }).from(groupTeachers).where(eq(groupTeachers.groupId, id)))[0]?.n,
      (await t.db.select({ n: count() }).from(groupStudents).where(eq(groupStudents.groupId, id)))[0]?.n,
    ];
    expect(await inGroup()).toEqual([100, 100]);
    const remove = await post(`/api/v1/group/${id}/participants`, { teacherIds, studentIds }, "DELETE");
    expect(remove.status, await remove.clone().text()).toBeLessThan(300);
    expect(await inGroup()).toEqual([0, 0]);
  });

  it("POST /api/v1/family takes 50 students; POST /api/v1/family/validate takes 100 families", {
    timeout: 30_000,
  }, async () => {
    const studentIds = await newStudents(50);
    const res = await post("/api/v1/family", { familyNumber: "MAX-1", name: "Maximum", studentIds });
    expect(res.status, await res.clone().text()).toBe(201);
    const numbers = fresh(100, "MAX-");
    await t.db.run(
      sql`INSERT INTO family (created_at, updated_at, school_id, family_number, name, family_number_search, name_search)
        SELECT ${AT}, ${AT}, ${NORTH}, value->>0, 'Maximum', value->>1, 'maximum'
        FROM json_each(${JSON.stringify(numbers.map((n) => [n, fold(n)]))})`,
    );
    const ids = (
      await t.db
        .select({ id: families.id })
        .from(families)
        .where(and(eq(families.schoolId, NORTH), within(families.familyNumber, numbers)))
    ).map((r) => r.id);
    const valid = await post("/api/v1/family/validate", { ids });
    expect(valid.status, await valid.clone().text()).toBe(200);
  });
});

describe("tasks", () => {
  it("POST /api/v1/pending sends to 500 students and 500 people at once, each a recipient", {
    timeout: 60_000,
  }, async () => {
    const studentIds = await newStudents(500);
    const userIds = await people(500, TEACHER);
    const res = await post("/api/v1/pending", { title: "Maximum audience", studentIds, userIds });
    expect(res.status, await res.clone().text()).toBe(201);
    const { id, counts } = (await res.json()) as { id: number; counts: { recipients: number } };
    expect(counts.recipients).toBe(1000);
    const [rows] = await t.db.select({ n: count() }).from(taskRecipients).where(eq(taskRecipients.taskId, id));
    expect(rows?.n).toBe(1000);
    // A reminder to all of them (none completed) goes through the same lists.
    const remind = await post(`/api/v1/pending/${id}/remind`, undefined);
    expect(await remind.json()).toEqual({ taskId: id, reminded: 1000 });
  });
});
