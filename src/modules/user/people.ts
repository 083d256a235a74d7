/**
 * One person, one user: the shared way every people resource (teachers, parents, administrative
 * staff, delegates, school administrators, imports) finds or invites a person by phone and gives
 * them a role in the current school.
 *
 * `enrol` reads once (is the number known?), then returns the statements for the caller's own
 * batch: the invited user with its audit row when the number is new, and the role membership with
 * its audit row (`INSERT OR IGNORE`: a role already held is kept, not duplicated). Holding a role
 * makes the person one of the school's people: migration 0016's trigger writes (or restores) their
 * `school_user` row. A known number keeps the user row as it is: what the school sent becomes its
 * own copy of the person (./identity.ts), so adding a phone never reveals nor changes what another
 * school holds.
 */
import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { auditAction, auditCreate, auditDelete } from "../../db/audit";
import { administrativeUsers } from "../../db/schema/administrative-user";
import { roleUsers, users } from "../../db/schema/core";
import { delegates } from "../../db/schema/delegate";
import { groupTeachers } from "../../db/schema/group";
import { parents } from "../../db/schema/parent";
import { guardians } from "../../db/schema/student";
import { teachers } from "../../db/schema/teacher";
import { withSearch } from "../../db/search";
import { insertedId, type Statement } from "../../db/write";
import { BUILTIN_ROLES, type BuiltinRole } from "../../lib/access";
import type { Ctx } from "../../lib/context";
import { text } from "../../lib/text";
import { copyOnAdd, userAudit } from "./identity";

/** A person's names as every people route takes them (users, staff, teachers, parents, delegates, administrators). */
export const FirstName = text({ max: 100 }).openapi({ example: "Ana" });
export const LastName = text({ max: 100, min: 0 }).openapi({ example: "García" });

export interface Person {
  /** E.164 (the `Phone` schema of src/lib/phone.ts normalises it). */
  phone: string;
  firstName?: string;
  lastName?: string;
  email?: string | null;
  language?: "es" | "en";
}

export { userAudit };
export const roleUserAudit = { entity: "role-user", table: roleUsers };

export interface Enrolment {
  /** The user's id, or (for a new user) an expression that reads it inside the same batch. */
  userId: number | SQL<number>;
  /** True when the number was unknown: the statements invite a new user. */
  invited: boolean;
  statements: Statement[];
}

/** The user with this phone (not deleted), or undefined. */
export async function userByPhone(ctx: Ctx, phone: string) {
  const [user] = await ctx.deps.db
    .select({ id: users.id, status: users.status })
    .from(users)
    .where(and(eq(users.phone, phone), isNull(users.deletedAt)))
    .limit(1);
  return user;
}

/**
 * Finds or invites the person and gives them `role` (a built-in key or a role id) in the current
 * school. Put `statements` first in the batch, then the profile row that names `userId`.
 */
export async function enrol(ctx: Ctx, person: Person, role: BuiltinRole | number): Promise<Enrolment> {
  const found = await findOrInvite(ctx, person);
  found.statements.push(...giveRole(ctx, found.userId, role));
  return found;
}

/**
 * Finds or invites the person, giving them no role (a delegate acts for a parent without one of
 * their own). Put `statements` first in the batch.
 */
export async function findOrInvite(ctx: Ctx, person: Person): Promise<Enrolment> {
  const { db, clock } = ctx.deps;
  const at = clock.now().toISOString();
  const known = await userByPhone(ctx, person.phone);
  const statements: Statement[] = [];
  let userId: number | SQL<number>;
  if (known) {
    userId = known.id;
    statements.push(...copyOnAdd(ctx, known.id, person));
  } else {
    const invited = {
      phone: person.phone,
      firstName: person.firstName ?? "",
      lastName: person.lastName ?? "",
      email: person.email ?? null,
      language: person.language ?? "es",
      status: "invited" as const,
      createdAt: at,
      updatedAt: at,
    };
    statements.push(
      db.insert(users).values(withSearch(users, invited)),
      auditCreate(ctx, userAudit, invited, ctx.schoolId),
    );
    userId = insertedId(users);
  }
  return { userId, invited: !known, statements };
}

/**
 * Gives a user a role in the current school, unless they hold it already (then nothing is written,
 * the audit row included: it is inserted only when the membership row was).
 */
export function giveRole(ctx: Ctx, userId: number | SQL<number>, role: BuiltinRole | number): Statement[] {
  const { db, clock } = ctx.deps;
  const at = clock.now().toISOString();
  const roleId = typeof role === "number" ? role : BUILTIN_ROLES[role].id;
  const schoolId = ctx.schoolId ?? 0;
  return [
    db
      .insert(roleUsers)
      .values({ schoolId, userId: userId as number, roleId, createdAt: at, updatedAt: at })
      .onConflictDoNothing(),
    // Audited only when the row was written: changes() is the INSERT's count (0 when ignored).
    auditAction(
      ctx,
      roleUserAudit,
      and(eq(roleUsers.id, insertedId(roleUsers)), sql`changes() = 1`),
      "create",
      sql`json_object('userId', json_object('old', NULL, 'new', ${roleUsers.userId}), 'roleId', json_object('old', NULL, 'new', ${roleUsers.roleId}))`,
    ),
  ];
}

/**
 * The audit rows of what taking the memberships matching `taken` (a condition on `role_user`) removes
 * with them: the staff, teacher and parent profiles the trigger of migration 0017 deletes (0032 when
 * the role is changed in place), a teacher profile's group rows and the parent profiles' delegates
 * and guardianships (foreign key cascades). Place them before the DELETE (or role UPDATE) in the same batch.
 */
export function takenRoleAudits(ctx: Ctx, taken: SQL | undefined): Statement[] {
  const held = (roleId: number, profile: typeof teachers | typeof administrativeUsers | typeof parents) =>
    sql`EXISTS (SELECT 1 FROM ${roleUsers} WHERE ${taken} AND ${roleUsers.roleId} = ${roleId} AND ${roleUsers.schoolId} = ${profile.schoolId} AND ${roleUsers.userId} = ${profile.userId})`;
  const parentIds = sql`(SELECT ${parents.id} FROM ${parents} WHERE ${held(BUILTIN_ROLES.parent.id, parents)})`;
  const teacherIds = sql`(SELECT ${teachers.id} FROM ${teachers} WHERE ${held(BUILTIN_ROLES.teacher.id, teachers)})`;
  return [
    auditDelete(
      ctx,
      { entity: "administrative-user", table: administrativeUsers },
      held(BUILTIN_ROLES.staff.id, administrativeUsers),
    ),
    auditDelete(
      ctx,
      { entity: "group-teacher", table: groupTeachers },
      sql`${groupTeachers.teacherId} IN ${teacherIds}`,
    ),
    auditDelete(ctx, { entity: "teacher", table: teachers }, held(BUILTIN_ROLES.teacher.id, teachers)),
    auditDelete(ctx, { entity: "delegate", table: delegates }, sql`${delegates.parentId} IN ${parentIds}`),
    auditDelete(ctx, { entity: "guardian", table: guardians }, sql`${guardians.parentId} IN ${parentIds}`),
    auditDelete(ctx, { entity: "parent", table: parents }, held(BUILTIN_ROLES.parent.id, parents)),
  ];
}
