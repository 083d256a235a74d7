/**
 * A group as the API answers it: the group with its teachers (JSON sub-select) and its count of
 * students, in one D1 call. Staff see every group; a teacher the groups they teach (./access.ts).
 */
import { z } from "@hono/zod-openapi";
import { jsonOf } from "../../db/query";
import { Groups, GroupTeachers, groups } from "../../db/schema/group";
import { sql } from "../../db/sql";
import { m } from "../../lib/message";
import { defineResource, RecordBase, type RowOf, timestamps } from "../../lib/resource";
import { LEVELS } from "../school/api";
import { columnsAs, copyJoin, identity } from "../user/api";
import { groupVisible } from "./access";

export const GroupTeacher = z
  .object({
    id: z.number().int().openapi({ description: "The group-teacher row's id" }),
    teacherId: z.number().int().openapi({ description: "The teacher profile's id", example: 1 }),
    userId: z.number().int().openapi({ example: 3 }),
    firstName: z.string(),
    lastName: z.string(),
    subject: z.string().nullable().openapi({ example: "Math", description: "Null: the homeroom teacher" }),
  })
  .openapi("GroupTeacherSummary");

export const GroupRecord = RecordBase.extend({
  name: z.string().openapi({ example: "3rd A", description: "The group's name, unique in its school year" }),
  level: z.enum(LEVELS),
  schoolYear: z.string().openapi({ example: "2026-2027" }),
  grade: z
    .number()
    .int()
    .nullable()
    .openapi({ example: 3, description: "Grade within the level, 1 to 12; null if none" }),
  image: z
    .string()
    .nullable()
    .openapi({ description: "The image's object key, or null", example: "1/groups/7/image-2f1c.png" }),
  teacherCount: z.number().int().min(0).openapi({ description: "How many teachers the group has" }),
  teachers: z.array(GroupTeacher).openapi({ description: "The group's teachers" }),
  studentCount: z
    .number()
    .int()
    .min(0)
    .openapi({ description: "Students in the group (deleted students not counted)" }),
});

const gt = GroupTeachers.alias("gt");
const teacherName = identity(columnsAs("tu"), columnsAs("tc"));
export const fields = {
  id: groups.id,
  createdAt: groups.createdAt,
  updatedAt: groups.updatedAt,
  name: groups.name,
  level: groups.level,
  schoolYear: groups.schoolYear,
  grade: groups.grade,
  image: groups.image,
  // group_teacher_uq (group_id, teacher_id): in teacher order.
  // Teachers' names as this school knows them (src/modules/user/identity.ts).
  teachers: jsonOf(
    sql`(SELECT json_group_array(json_object('id', "gt"."id", 'teacherId', "gt"."teacher_id", 'userId', "tp"."user_id", 'firstName', ${teacherName.firstName}, 'lastName', ${teacherName.lastName}, 'subject', "gt"."subject")) FROM "group_teacher" "gt" INNER JOIN "teacher" "tp" ON "tp"."id" = "gt"."teacher_id" INNER JOIN "user" "tu" ON "tu"."id" = "tp"."user_id" ${copyJoin("tc", sql.raw('"tp"."user_id"'), gt.schoolOf())} WHERE "gt"."group_id" = ${groups.id})`,
    z.array(GroupTeacher),
    "[]",
  ),
  studentCount: sql<number>`(SELECT count(*) FROM "group_student" "gs" INNER JOIN "student" "st" ON "st"."id" = "gs"."student_id" WHERE "gs"."group_id" = ${groups.id} AND "st"."deleted_at" IS NULL)`,
};

export function toGroup(row: RowOf<typeof fields>): z.infer<typeof GroupRecord> {
  const list = row.teachers;
  return {
    ...timestamps(row),
    name: row.name,
    level: row.level,
    schoolYear: row.schoolYear,
    grade: row.grade,
    image: row.image,
    teacherCount: list.length,
    teachers: list,
    studentCount: Number(row.studentCount),
  };
}

export const groupResource = defineResource({
  name: "group",
  plural: "groups",
  label: m`Group`,
  path: "/api/v1/group",
  tag: "Groups",
  scope: "school",
  data: Groups,
  record: GroupRecord,
  view: { fields },
  toRecord: (_ctx, row) => toGroup(row),
  visibleTo: (ctx, access) => groupVisible(ctx, groups.id, access),
  conflictMessage: m`A group with this name already exists in this school year (names that differ only in case or accents are the same)`,
});
