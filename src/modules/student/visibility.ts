/**
 * Who sees which students. Holders of `student.read` (school admins, staff) see the school's
 * students; anyone else sees the children they are a guardian of or whose family they belong to,
 * also as a valid delegate of such a parent today (`actingFor`), and, as a teacher, the students of
 * their groups. Soft-deleted students are nobody's to read or write, except in two places: holders
 * of `student.read` list them with `deleted=true` (`listVisibility`), and restore reads and writes
 * its one student itself (./resource.ts).
 *
 * The delegate part needs the school's "today" (its time zone), which SQL cannot compute: for a
 * caller without `student.read` the read routes' context loader (`readerContext`) first reads
 * `actingFor` (one D1 call); staff reads are one D1 call.
 */
import { GroupStudents, GroupTeachers, groupStudents, groupTeachers } from "../../db/schema/group";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, students } from "../../db/schema/student";
import { Teachers, teachers } from "../../db/schema/teacher";
import { and, eq, isNotNull, isNull, type SQL, sql } from "../../db/sql";
import { inList } from "../../db/write";
import { actedUsers, type SchoolCtx } from "../../lib/context";
import { actingLoader } from "../delegate/api";
import { permissions } from "./permissions";

/** The context of a read: with the users the caller acts for when it needs them (not for staff). */
export const readerContext = actingLoader(permissions.read);

const actorsOf = actedUsers;

/** Students one of `userIds` is a guardian of. */
const guardedBy = (ctx: SchoolCtx, userIds: readonly number[]): SQL =>
  sql`EXISTS ${Guardians.select(ctx, { one: sql`1` })
    .join(Parents, eq(parents.id, guardians.parentId))
    .where(eq(guardians.studentId, students.id), inList(parents.userId, userIds))}`;

/** Students of the family of one of `userIds` (a parent profile in this school). */
const inFamilyOf = (ctx: SchoolCtx, userIds: readonly number[]): SQL =>
  inList(
    students.familyId,
    Parents.pick(ctx, parents.familyId, inList(parents.userId, userIds), isNotNull(parents.familyId)),
  );

/** Students of a group `userId` teaches in this school. */
const taughtBy = (ctx: SchoolCtx, userId: number): SQL =>
  sql`EXISTS ${GroupStudents.select(ctx, { one: sql`1` })
    .join(GroupTeachers, eq(groupTeachers.groupId, groupStudents.groupId))
    .join(Teachers, eq(teachers.id, groupTeachers.teacherId))
    .where(eq(groupStudents.studentId, students.id), eq(teachers.userId, userId))}`;

/** 1 when the student of the outer query is the caller's own child: a guardian of, or in the family of, someone they act for. */
export function ownChildField(ctx: SchoolCtx): SQL<number> {
  const ids = actorsOf(ctx);
  return sql<number>`CASE WHEN ${guardedBy(ctx, ids)} OR ${inFamilyOf(ctx, ids)} THEN 1 ELSE 0 END`;
}

export function visibleTo(ctx: SchoolCtx, access: "read" | "write"): SQL | undefined {
  const present = isNull(students.deletedAt);
  // Writes need student.write (the routes say so): the school's students, not deleted.
  if (access === "write" || ctx.can(permissions.read)) return present;
  const ids = actorsOf(ctx);
  if (ids.length === 0 || ctx.userId === null) return sql`0`;
  return and(present, sql`(${guardedBy(ctx, ids)} OR ${inFamilyOf(ctx, ids)} OR ${taughtBy(ctx, ctx.userId)})`);
}

/**
 * The list's and the export's visibility: with `deleted=true` from a holder of `student.read`, they
 * reach the school's deleted students too (the filter then keeps only them). Anyone else's
 * `deleted=true` finds nobody: their reads still exclude deleted students.
 */
export function listVisibility(ctx: SchoolCtx, query: object): SQL | undefined {
  if (Reflect.get(query, "deleted") === "true" && ctx.can(permissions.read)) return undefined;
  return visibleTo(ctx, "read");
}
