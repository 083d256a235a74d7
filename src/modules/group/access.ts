/**
 * Who sees which groups. Holders of `group.read-all` (the school's staff) see every group of the
 * school; anyone else holding `group.read` (a teacher) sees the groups they teach: a
 * `group_teacher` row whose teacher profile is theirs. Writes need `group.write` and reach every
 * group of the school.
 */
import { GroupTeachers } from "../../db/schema/group";
import { Teachers } from "../../db/schema/teacher";
import { eq, type SQL, type SQLWrapper, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { permissions } from "./permissions";

// Under names of their own: the outer query may read group_teacher itself (the group-teacher rows).
const teaching = GroupTeachers.alias("teaching");
const profile = Teachers.alias("teaching_profile");

/**
 * The caller teaches the group whose id is `groupId` (a column of the outer query). Served by
 * group_teacher_uq (group_id, teacher_id), then the profile's primary key.
 */
export const teaches = (ctx: SchoolCtx, groupId: SQLWrapper): SQL =>
  sql`EXISTS ${teaching
    .select(ctx, { one: sql`1` })
    .join(profile, eq(profile.table.id, teaching.table.teacherId))
    .where(eq(teaching.table.groupId, groupId), eq(profile.table.userId, ctx.userId ?? 0))}`;

/** The read condition on a row of group `groupId` for this caller (none for `group.read-all`). */
export const groupVisible = (ctx: SchoolCtx, groupId: SQLWrapper, access: "read" | "write"): SQL | undefined =>
  access === "write" || ctx.can(permissions.readAll) ? undefined : teaches(ctx, groupId);
