/**
 * Who sees which groups. Holders of `group.read-all` (the school's staff) see every group of the
 * school; anyone else holding `group.read` (a teacher) sees the groups they teach: a
 * `group_teacher` row whose teacher profile is theirs. Writes need `group.write` and reach every
 * group of the school.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Ctx } from "../../lib/context";
import { permissions } from "./permissions";

/**
 * The caller teaches the group whose id is `groupId`: a column of the outer query written out
 * (`"school_group"."id"`), since drizzle leaves columns of a one-table select unqualified.
 * Served by group_teacher_uq (group_id, teacher_id), then the profile's primary key.
 */
export const teaches = (ctx: Ctx, groupId: string): SQL =>
  sql`EXISTS (SELECT 1 FROM "group_teacher" "teaching" INNER JOIN "teacher" "teaching_profile" ON "teaching_profile"."id" = "teaching"."teacher_id" WHERE "teaching"."group_id" = ${sql.raw(groupId)} AND "teaching_profile"."user_id" = ${ctx.userId ?? 0})`;

/** The read condition on a row of group `groupId` for this caller (none for `group.read-all`). */
export const groupVisible = (ctx: Ctx, groupId: string, access: "read" | "write"): SQL | undefined =>
  access === "write" || ctx.can(permissions.readAll) ? undefined : teaches(ctx, groupId);
