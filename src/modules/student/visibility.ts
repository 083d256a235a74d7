/**
 * Who sees which students. Holders of `student.read` (school admins, staff) see the school's
 * students; anyone else sees the children they are a guardian of or whose family they belong to,
 * also as a valid delegate of such a parent today (`actingFor`), and, as a teacher, the students of
 * their groups. Soft-deleted students are nobody's to read or write, except in two places: holders
 * of `student.read` list them with `deleted=true` (`listingDeleted`), and restore reads and writes
 * its one student itself (./resource.ts).
 *
 * The delegate part needs the school's "today" (its time zone), which SQL cannot compute: for a
 * caller without `student.read` the route first reads `actingFor` (one D1 call) and keeps it with
 * the context (`readerCtx`); staff reads are one D1 call.
 */
import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { groupStudents, groupTeachers } from "../../db/schema/group";
import { parents } from "../../db/schema/parent";
import { guardians, students } from "../../db/schema/student";
import { teachers } from "../../db/schema/teacher";
import { inList } from "../../db/write";
import { type Ctx, ctxOf, schoolOf } from "../../lib/context";
import { actingFor } from "../delegate/api";
import { permissions } from "./permissions";

const acting = new WeakMap<Ctx, number[]>();

/** The request's context, with the users the caller acts for when it needs them (not for staff). */
export async function readerCtx(c: Parameters<typeof ctxOf>[0]): Promise<Ctx> {
  const ctx = ctxOf(c);
  if (!ctx.can(permissions.read)) acting.set(ctx, await actingFor(ctx));
  return ctx;
}

const deletedListed = new WeakSet<Ctx>();

/**
 * The context of a list read: with `deleted=true` from a holder of `student.read`, its reads reach
 * the school's deleted students too (the filter then keeps only them). Anyone else's `deleted=true`
 * finds nobody: their reads still exclude deleted students.
 */
export function listingDeleted(ctx: Ctx, query: { deleted?: "true" | "false" }): Ctx {
  if (query.deleted === "true" && ctx.can(permissions.read)) deletedListed.add(ctx);
  return ctx;
}

/** The users a caller acts for: what `readerCtx` read, else themself. */
const actorsOf = (ctx: Ctx): number[] => acting.get(ctx) ?? (ctx.userId !== null ? [ctx.userId] : []);

/** Students one of `userIds` is a guardian of. */
export const guardedBy = (userIds: number[]): SQL =>
  sql`EXISTS (SELECT 1 FROM ${guardians} INNER JOIN ${parents} ON ${parents.id} = ${guardians.parentId} WHERE ${guardians.studentId} = ${students.id} AND ${inList(parents.userId, userIds)})`;

/** Students of the family of one of `userIds` (a parent profile in this school). */
const inFamilyOf = (schoolId: number, userIds: number[]): SQL =>
  sql`${students.familyId} IN (SELECT ${parents.familyId} FROM ${parents} WHERE ${parents.schoolId} = ${schoolId} AND ${inList(parents.userId, userIds)} AND ${parents.familyId} IS NOT NULL)`;

/** Students of a group `userId` teaches in this school. */
const taughtBy = (schoolId: number, userId: number): SQL =>
  sql`EXISTS (SELECT 1 FROM ${groupStudents} INNER JOIN ${groupTeachers} ON ${groupTeachers.groupId} = ${groupStudents.groupId} INNER JOIN ${teachers} ON ${teachers.id} = ${groupTeachers.teacherId} WHERE ${groupStudents.studentId} = ${students.id} AND ${teachers.userId} = ${userId} AND ${teachers.schoolId} = ${schoolId})`;

/**
 * 1 when the student of the outer query (`"student"`) is the caller's own child: a guardian of, or in
 * the family of, someone they act for. Written with its tables named, for a selected field (drizzle
 * prints a lone table's columns unqualified there).
 */
export function ownChildField(ctx: Ctx): SQL<number> {
  const ids = JSON.stringify(actorsOf(ctx));
  return sql<number>`CASE WHEN EXISTS (SELECT 1 FROM guardian og INNER JOIN parent op ON op.id = og.parent_id
      WHERE og.student_id = "student"."id" AND op.user_id IN (SELECT value FROM json_each(${ids})))
    OR "student"."family_id" IN (SELECT fp.family_id FROM parent fp WHERE fp.school_id = ${schoolOf(ctx)}
      AND fp.user_id IN (SELECT value FROM json_each(${ids})) AND fp.family_id IS NOT NULL) THEN 1 ELSE 0 END`;
}

export function visibleTo(ctx: Ctx, access: "read" | "write"): SQL | undefined {
  if (access === "read" && deletedListed.has(ctx)) return undefined;
  const present = isNull(students.deletedAt);
  // Writes need student.write (the routes say so): the school's students, not deleted.
  if (access === "write" || ctx.can(permissions.read)) return present;
  const ids = actorsOf(ctx);
  if (ids.length === 0 || ctx.userId === null) return sql`0`;
  const school = schoolOf(ctx);
  return and(present, sql`(${guardedBy(ids)} OR ${inFamilyOf(school, ids)} OR ${taughtBy(school, ctx.userId)})`);
}

/** Whether `studentId` is a student of this school (not deleted). */
export const presentStudent = (ctx: Ctx, studentId: number) =>
  and(eq(students.id, studentId), eq(students.schoolId, schoolOf(ctx)), isNull(students.deletedAt));
