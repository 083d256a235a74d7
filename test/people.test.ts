/**
 * One person, one user (src/modules/user/people.ts): finding or inviting a person by phone and
 * giving them a role in a school, with the membership that follows from the role (migration 0016's
 * trigger) and one audit row per thing actually written.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { administrativeUsers } from "../src/db/schema/administrative-user";
import { auditLog } from "../src/db/schema/audit-log";
import { roleUsers, users } from "../src/db/schema/core";
import { parents } from "../src/db/schema/parent";
import { teachers } from "../src/db/schema/teacher";
import { schoolUsers } from "../src/db/schema/user";
import { commit } from "../src/db/write";
import { importCtx } from "../src/lib/context";
import { normalizePhone } from "../src/lib/phone";
import { enrol } from "../src/modules/user/people";
import { makeTestApp } from "./helpers";

const t = makeTestApp();
const NORTH = 1;
const SOUTH = 2;

async function enrolIn(school: number, phone: string, role: "teacher" | "parent") {
  const ctx = importCtx(t.deps, 990_000 + school, school, null);
  const { statements } = await enrol(
    ctx,
    { phone: normalizePhone(phone) ?? "invalid", firstName: "Ana", lastName: "Ruiz" },
    role,
  );
  const [first, ...rest] = statements;
  if (first) await commit(ctx, [first, ...rest]);
}

/** The user's memberships, each school's read where that school's rows are (school 2's in its shard). */
async function membershipsOf(userId: number) {
  const rows = [];
  for (const school of [NORTH, SOUTH]) {
    const db = await t.schoolDb(school);
    rows.push(
      ...(await db
        .select()
        .from(schoolUsers)
        .where(and(eq(schoolUsers.userId, userId), eq(schoolUsers.schoolId, school)))),
    );
  }
  return rows;
}

describe("enrol: one person, one user", () => {
  it("invites an unknown number, gives the role, makes them one of the school's people, and audits both", async () => {
    await enrolIn(NORTH, "+15557770001", "teacher");
    const [user] = await t.db.select().from(users).where(eq(users.phone, "+15557770001"));
    expect(user).toMatchObject({ status: "invited", firstName: "Ana", lastName: "Ruiz" });
    const id = user?.id ?? 0;
    expect(await membershipsOf(id)).toMatchObject([{ schoolId: NORTH, userId: id, deletedAt: null }]);
    const roles = await t.db.select().from(roleUsers).where(eq(roleUsers.userId, id));
    expect(roles.map((r) => [r.schoolId, r.roleId])).toEqual([[NORTH, 4]]);
    const trail = await t.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.actorId, 990_000 + NORTH));
    expect(trail.map((a) => [a.entity, a.action, a.recordId])).toEqual([
      ["user", "create", id],
      ["role-user", "create", roles[0]?.id],
    ]);
    expect(JSON.parse(trail[1]?.changes ?? "{}")).toEqual({
      userId: { old: null, new: id },
      roleId: { old: null, new: 4 },
    });
  });

  it("attaches a known number's roles to the same user, in another school too, and writes nothing for a role held", async () => {
    await enrolIn(NORTH, "+15557770002", "teacher");
    await enrolIn(SOUTH, "+1 555 777 0002", "parent");
    await enrolIn(SOUTH, "15557770002", "parent");
    const found = await t.db.select().from(users).where(eq(users.phone, "+15557770002"));
    expect(found).toHaveLength(1);
    const id = found[0]?.id ?? 0;
    expect((await membershipsOf(id)).map((m) => m.schoolId)).toEqual([NORTH, SOUTH]);
    const trail = await (await t.schoolDb(SOUTH))
      .select()
      .from(auditLog)
      .where(eq(auditLog.actorId, 990_000 + SOUTH));
    expect(trail.filter((a) => a.entity === "role-user" && a.changes.includes(`"new":${id}`))).toHaveLength(1);
  });

  it("restores a removed person's membership when they are given a role again", async () => {
    await enrolIn(NORTH, "+15557770003", "teacher");
    const [user] = await t.db.select().from(users).where(eq(users.phone, "+15557770003"));
    const id = user?.id ?? 0;
    await t.db.batch([
      t.db.update(schoolUsers).set({ deletedAt: "2026-11-23T15:00:00.000Z" }).where(eq(schoolUsers.userId, id)),
      t.db.delete(roleUsers).where(and(eq(roleUsers.userId, id), eq(roleUsers.schoolId, NORTH))),
    ]);
    await enrolIn(NORTH, "+15557770003", "parent");
    expect(await membershipsOf(id)).toMatchObject([{ schoolId: NORTH, deletedAt: null }]);
  });
});

describe("a built-in role's profile follows the role (migration 0017)", () => {
  it("giving the teacher, staff or parent role creates the profile; taking it away removes it", async () => {
    await enrolIn(NORTH, "+15557770004", "teacher");
    await enrolIn(NORTH, "+15557770004", "parent");
    const [user] = await t.db.select().from(users).where(eq(users.phone, "+15557770004"));
    const id = user?.id ?? 0;
    expect(await t.db.select().from(teachers).where(eq(teachers.userId, id))).toMatchObject([
      { schoolId: NORTH, subjects: [] },
    ]);
    expect(await t.db.select().from(parents).where(eq(parents.userId, id))).toHaveLength(1);
    await t.db.delete(roleUsers).where(and(eq(roleUsers.userId, id), eq(roleUsers.roleId, 4)));
    expect(await t.db.select().from(teachers).where(eq(teachers.userId, id))).toHaveLength(0);
    expect(await t.db.select().from(parents).where(eq(parents.userId, id))).toHaveLength(1);
    expect(await t.db.select().from(administrativeUsers).where(eq(administrativeUsers.userId, id))).toHaveLength(0);
  });

  it("the demo school's teacher and parent have their profiles", async () => {
    expect(await t.db.select().from(teachers).where(eq(teachers.userId, 3))).toHaveLength(1);
    expect(await t.db.select().from(parents).where(eq(parents.userId, 4))).toHaveLength(1);
  });
});

describe("one shape for a person across the people resources", () => {
  it("every create takes email: null as 'no email' (as POST /api/v1/user and every update do)", async () => {
    const token = await t.token(2, { [NORTH]: "all" });
    let n = 0;
    const phone = () => `+1555777${String(8000 + ++n)}`;
    const bodies: [string, Record<string, unknown>][] = [
      ["/api/v1/user", { phone: phone(), firstName: "Ana", email: null }],
      ["/api/v1/teacher", { phone: phone(), firstName: "Ana", email: null }],
      ["/api/v1/administrative-user", { phone: phone(), firstName: "Ana", email: null }],
      ["/api/v1/parent", { phone: phone(), firstName: "Ana", email: null, relationship: "mother" }],
      ["/api/v1/school-administrator", { phone: phone(), firstName: "Ana", email: null }],
    ];
    for (const [path, body] of bodies) {
      const res = await t.request(path, { method: "POST", token, school: NORTH, body });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(201);
      expect(((await res.json()) as { email: string | null }).email, path).toBeNull();
    }
  });
});
