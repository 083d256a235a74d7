/**
 * Who a notification reaches: its audience resolved to users of the school, in SQL, when it is
 * sent (the count) and when it fans out (the copies). Every part reads through the accessors, so
 * another school's group, role, student or user resolves to nobody.
 *
 * - users, roles, the whole school: members (a role in the school); parts given together add up;
 * - groups, levels: the guardians of their active students; guardiansOf: of these students;
 *   a guardianship the school set not to receive notifications is left out;
 * - a user who is inactive or deleted their account is left out, and so is each user of `except`;
 * - each user once, however many ways they are reached: a guardian of three children addressed
 *   by `guardiansOf`, or of two children in one group, gets one notification.
 */
import { RoleUsers, roleUsers, users } from "../../db/schema/core";
import { GroupStudents, groupStudents } from "../../db/schema/group";
import type { Audience } from "../../db/schema/notification";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { and, eq, isNull, ne, not, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";

/** The users an audience names in the current school, possibly more than once (SELECTs of `userId`). */
function named(ctx: SchoolCtx, audience: Audience): SQL[] {
  const members = RoleUsers.select(ctx, { userId: roleUsers.userId });
  // Guardians of students: their parent rows name the users.
  const guardiansOf = (...conditions: SQL[]) =>
    Guardians.select(ctx, { userId: parents.userId })
      .join(Parents, eq(parents.id, guardians.parentId))
      .join(Students, eq(students.id, guardians.studentId))
      .where(eq(guardians.receivesNotifications, true), isNull(students.deletedAt), ...conditions);
  const parts: SQL[] = [];
  if (audience.school) parts.push(members.getSQL());
  else {
    if (audience.users?.length) parts.push(members.where(inList(roleUsers.userId, audience.users)).getSQL());
    if (audience.roles?.length) parts.push(members.where(inList(roleUsers.roleId, audience.roles)).getSQL());
  }
  if (audience.guardiansOf?.length) parts.push(guardiansOf(inList(guardians.studentId, audience.guardiansOf)).getSQL());
  if (audience.levels?.length) {
    parts.push(guardiansOf(inList(students.level, audience.levels), eq(students.status, "active")).getSQL());
  }
  if (audience.groups?.length) {
    const inGroups = GroupStudents.pick(ctx, groupStudents.studentId, inList(groupStudents.groupId, audience.groups));
    parts.push(guardiansOf(eq(students.status, "active"), inList(students.id, inGroups)).getSQL());
  }
  return parts;
}

/** `SELECT DISTINCT user_id`: each user the audience reaches once, active or invited, ascending. */
export function recipientsOf(ctx: SchoolCtx, audience: Audience): SQL {
  const parts = named(ctx, audience);
  // An audience naming nobody (an empty list) reaches nobody.
  const union = parts.length > 0 ? sql.join(parts, sql` UNION ALL `) : sql`SELECT NULL AS "userId" WHERE 0`;
  const left = audience.except?.length ? not(inList(sql`a."userId"`, audience.except)) : undefined;
  return sql`SELECT DISTINCT a."userId" AS user_id FROM (${union}) a INNER JOIN ${users} ON ${users.id} = a."userId" WHERE ${and(ne(users.status, "inactive"), isNull(users.deletedAt), left)}`;
}

/** How many users the audience reaches (a scalar subquery). */
export function countOf(ctx: SchoolCtx, audience: Audience): SQL<number> {
  return sql<number>`(SELECT count(*) FROM (${recipientsOf(ctx, audience)}))`;
}
