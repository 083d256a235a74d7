/**
 * Who sees which groups. Holders of `group.read-all` (the school's staff) see every group of the
 * school; anyone else holding `group.read` (a teacher) sees the groups they teach: a
 * `group_teacher` row whose teacher profile is theirs. Writes need `group.write` and reach every
 * group of the school.
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import { alias, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../../lib/context";
import { teachers } from "../teacher/schema";
import { permissions } from "./permissions";
import { groupTeachers } from "./schema";

// Aliases: the visibility condition also filters group_teacher's own list.
const teaching = alias(groupTeachers, "teaching");
const teachingProfile = alias(teachers, "teaching_profile");

/** The caller teaches the group `groupId` (a column of the outer query): group_teacher_uq, then the profile's key. */
export const teaches = (ctx: Ctx, groupId: SQLiteColumn | SQL): SQL =>
  sql`EXISTS (SELECT 1 FROM ${teaching} INNER JOIN ${teachingProfile} ON ${teachingProfile.id} = ${teaching.teacherId} WHERE ${and(
    eq(teaching.groupId, groupId as SQLiteColumn),
    eq(teachingProfile.userId, ctx.userId ?? 0),
  )})`;

/** The read condition on a row of group `groupId` for this caller (none for `group.read-all`). */
export const groupVisible = (ctx: Ctx, groupId: SQLiteColumn, access: "read" | "write"): SQL | undefined =>
  access === "write" || ctx.can(permissions.readAll) ? undefined : teaches(ctx, groupId);
