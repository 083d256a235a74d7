/**
 * What the people routes share besides adding a person (./person.ts): the names every body takes,
 * the audit targets, one role given to one user, and the audit rows of taking roles away.
 */
import { AdministrativeUsers, administrativeUsers } from "../../db/schema/administrative-user";
import { RoleUsers, roleUsers, users } from "../../db/schema/core";
import { Delegates, delegates } from "../../db/schema/delegate";
import { GroupTeachers, groupTeachers } from "../../db/schema/group";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians } from "../../db/schema/student";
import { Teachers, teachers } from "../../db/schema/teacher";
import { eq, type SQL, sql } from "../../db/sql";
import type { Statement } from "../../db/write";
import { BUILTIN_ROLES, type BuiltinRole } from "../../lib/access";
import type { Ctx, SchoolCtx } from "../../lib/context";
import { text } from "../../lib/text";
import { userAudit } from "./identity";
import { type Added, addPeople, giveRoles, idOf, knownPeople, type Person } from "./person";

/** A person's names as every people route takes them (users, staff, teachers, parents, delegates, administrators). */
export const FirstName = text({ max: 100 }).openapi({ example: "Ana" });
export const LastName = text({ max: 100, min: 0 }).openapi({ example: "García" });

export { userAudit };
export const roleUserAudit = { entity: "role-user", table: roleUsers };

/**
 * Finds or invites the person and gives them `role` in the current school, with no escalation
 * check (the caller checked): `addPeople` of ./person.ts for one person.
 */
export async function enrol(ctx: SchoolCtx, person: Person, role: BuiltinRole | number): Promise<Added> {
  const known = await knownPeople(ctx, [person.phone]);
  const k = known.get(person.phone);
  const added = await addPeople(ctx, [person], known, { roles: [role] });
  return { userId: added.ids.get(person.phone) ?? idOf(person, known), invited: !k || k.deleted, ...added };
}

/**
 * Gives a user a role in the current school, unless they hold it already (then nothing is written,
 * the audit row included): `giveRoles` of ./person.ts for one user.
 */
export function giveRole(ctx: SchoolCtx, userId: number | SQL<number>, role: BuiltinRole | number): Statement[] {
  return giveRoles(ctx, eq(users.id, userId), [role]);
}

/**
 * The audit rows of what taking the memberships matching `taken` (a condition on `role_user`) removes
 * with them: the staff, teacher and parent profiles the trigger of migration 0017 deletes (0032 when
 * the role is changed in place), a teacher profile's group rows and the parent profiles' delegates
 * and guardianships (foreign key cascades). Place them before the DELETE (or role UPDATE) in the same batch.
 */
export function takenRoleAudits(ctx: Ctx, taken: SQL | undefined): Statement[] {
  const held = (roleId: number, profile: typeof teachers | typeof administrativeUsers | typeof parents) =>
    sql`EXISTS (SELECT 1 FROM ${roleUsers} WHERE ${taken} AND ${roleUsers.roleId} = ${roleId} AND ${RoleUsers.ofSchool(profile.schoolId)} AND ${roleUsers.userId} = ${profile.userId})`;
  const parentIds = sql`(SELECT ${parents.id} FROM ${parents} WHERE ${held(BUILTIN_ROLES.parent.id, parents)})`;
  const teacherIds = sql`(SELECT ${teachers.id} FROM ${teachers} WHERE ${held(BUILTIN_ROLES.teacher.id, teachers)})`;
  return [
    AdministrativeUsers.removedEverySchool(ctx, held(BUILTIN_ROLES.staff.id, administrativeUsers)),
    GroupTeachers.removedEverySchool(ctx, sql`${groupTeachers.teacherId} IN ${teacherIds}`),
    Teachers.removedEverySchool(ctx, held(BUILTIN_ROLES.teacher.id, teachers)),
    Delegates.removedEverySchool(ctx, sql`${delegates.parentId} IN ${parentIds}`),
    Guardians.removedEverySchool(ctx, sql`${guardians.parentId} IN ${parentIds}`),
    Parents.removedEverySchool(ctx, held(BUILTIN_ROLES.parent.id, parents)),
  ];
}
