/**
 * The rows that make a group's membership: `/api/v1/group-teacher` (a teacher profile in a group,
 * with the subject they teach it) and `/api/v1/group-student` (a student in a group). The same
 * teacher or student twice in a group is a 409 (the unique index decides, so two racing requests
 * give one 201 and one 409); a group, teacher or student of another school, a removed teacher or a
 * deleted student is a 404 (and their rows are no longer listed). Staff see every row; a teacher the
 * rows of the groups they teach.
 */
import { z } from "@hono/zod-openapi";
import { Users, users } from "../../db/schema/core";
import { GroupStudents, Groups, GroupTeachers, groupStudents, groups, groupTeachers } from "../../db/schema/group";
import { Students, students } from "../../db/schema/student";
import { Teachers, teachers } from "../../db/schema/teacher";
import { SchoolPeople } from "../../db/schema/user";
import { and, eq, isNull, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { idFilter } from "../../lib/params";
import { defineResource, type Filter, RecordBase } from "../../lib/resource";
import { text } from "../../lib/text";
import { notRemoved } from "../teacher/api";
import { identity } from "../user/api";
import { groupVisible } from "./access";
import { permissions } from "./permissions";

const Id = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
/** An id filter in plain digits ("1e3", "0x10", "1.0" are 400s, as for path ids). */

/** The group is one of this school's, else 404. */
async function groupHere(ctx: SchoolCtx, groupId: number) {
  const row = await Groups.find(ctx, groupId, { id: groups.id });
  if (!row) throw notFound(m`Group ${groupId} not found`);
}

// ---- group-teacher ---------------------------------------------------------------------------

const GroupTeacherRecord = RecordBase.extend({
  groupId: z.number().int().openapi({ example: 1 }),
  teacherId: z.number().int().openapi({ example: 1, description: "The teacher profile's id" }),
  userId: z.number().int().openapi({ example: 3 }),
  firstName: z.string(),
  lastName: z.string(),
  subject: z.string().nullable().openapi({ example: "Math", description: "Null: the group's homeroom teacher" }),
}).openapi({ description: "A teacher of a group; `id` is the row's" });

/** The school's copy of the teacher's identity (src/modules/user/identity.ts), scoped to the school in the join. */
const teacherCopy = SchoolPeople.alias("group_teacher_copy");
const teacherName = identity(users, teacherCopy.table);

export const groupTeacherResource = defineResource({
  name: "groupTeacher",
  plural: "groupTeachers",
  label: m`Group teacher`,
  path: "/api/v1/group-teacher",
  tag: "Groups",
  scope: "school",
  data: GroupTeachers,
  record: GroupTeacherRecord,
  view: {
    fields: {
      id: groupTeachers.id,
      createdAt: groupTeachers.createdAt,
      updatedAt: groupTeachers.updatedAt,
      groupId: groupTeachers.groupId,
      teacherId: groupTeachers.teacherId,
      userId: teachers.userId,
      // The teacher's name as this school knows them (src/modules/user/identity.ts).
      firstName: teacherName.firstName,
      lastName: teacherName.lastName,
      subject: groupTeachers.subject,
    },
    join: (q) =>
      q
        .join(Teachers, eq(teachers.id, groupTeachers.teacherId))
        .join(Users, eq(users.id, teachers.userId))
        .leftJoin(teacherCopy, eq(teacherCopy.table.userId, teachers.userId)),
  },
  toRecord: (_ctx, row) => ({ ...row }),
  visibleTo: (ctx, access) => groupVisible(ctx, groupTeachers.groupId, access),
  conflictMessage: m`This teacher already teaches this group`,
});

const Subject = text({ max: 50 }).openapi({ example: "Math" });

export const listGroupTeachers = groupTeacherResource.list({
  access: permissions.read,
  filters: {
    groupId: {
      schema: idFilter("The group's teachers"),
      where: (_ctx, v) => eq(groupTeachers.groupId, v),
      example: "1",
    } satisfies Filter<number>,
    teacherId: {
      schema: idFilter("The groups of this teacher profile"),
      where: (_ctx, v) => eq(groupTeachers.teacherId, v),
      example: "1",
    } satisfies Filter<number>,
  },
  summary: "List the teachers of the school's groups (paginated), oldest first",
});

export const getGroupTeacher = groupTeacherResource.get({ access: permissions.read });

/** The teacher profile is this school's and not removed, else 404. */
async function teacherHere(ctx: SchoolCtx, teacherId: number) {
  const row = await Teachers.select(ctx, { id: teachers.id })
    .where(eq(teachers.id, teacherId), notRemoved(teachers))
    .first();
  if (!row) throw notFound(m`Teacher ${teacherId} not found`);
}

export const createGroupTeacher = groupTeacherResource.create({
  access: permissions.write,
  input: z.object({
    groupId: Id.openapi({ example: 1 }),
    teacherId: Id.openapi({ example: 1, description: "A teacher profile id of this school" }),
    subject: Subject.nullable().optional(),
  }),
  values: async (ctx, { body }) => {
    await Promise.all([groupHere(ctx, body.groupId), teacherHere(ctx, body.teacherId)]);
    return { groupId: body.groupId, teacherId: body.teacherId, subject: body.subject ?? null };
  },
  summary: "Add a teacher to a group",
  description: "404 for a group or teacher not of this school; 409 if the teacher already teaches the group.",
});

export const updateGroupTeacher = groupTeacherResource.update({
  access: permissions.write,
  input: z.object({ subject: Subject.nullable().optional() }),
  summary: "Change the subject a teacher teaches a group (null: homeroom)",
});

export const deleteGroupTeacher = groupTeacherResource.delete({
  access: permissions.write,
  summary: "Remove a teacher from a group",
});

// ---- group-student ---------------------------------------------------------------------------

const GroupStudentRecord = RecordBase.extend({
  groupId: z.number().int().openapi({ example: 1 }),
  studentId: z.number().int().openapi({ example: 1 }),
  firstName: z.string(),
  lastName: z.string(),
}).openapi({ description: "A student of a group; `id` is the row's" });

export const groupStudentResource = defineResource({
  name: "groupStudent",
  plural: "groupStudents",
  label: m`Group student`,
  path: "/api/v1/group-student",
  tag: "Groups",
  scope: "school",
  data: GroupStudents,
  record: GroupStudentRecord,
  view: {
    fields: {
      id: groupStudents.id,
      createdAt: groupStudents.createdAt,
      updatedAt: groupStudents.updatedAt,
      groupId: groupStudents.groupId,
      studentId: groupStudents.studentId,
      firstName: students.firstName,
      lastName: students.lastName,
    },
    join: (q) => q.join(Students, eq(students.id, groupStudents.studentId)),
  },
  toRecord: (_ctx, row) => ({ ...row }),
  // A deleted student's rows stay (records name them) but are gone from here, as from the group's
  // participants and studentCount: the student's primary key answers it.
  visibleTo: (ctx, access) =>
    and(
      groupVisible(ctx, groupStudents.groupId, access),
      sql`EXISTS (SELECT 1 FROM "student" "live" WHERE "live"."id" = "group_student"."student_id" AND "live"."deleted_at" IS NULL)`,
    ),
  conflictMessage: m`This student is already in this group`,
});

export const listGroupStudents = groupStudentResource.list({
  access: permissions.read,
  filters: {
    groupId: {
      schema: idFilter("The group's students"),
      where: (_ctx, v) => eq(groupStudents.groupId, v),
      example: "1",
    } satisfies Filter<number>,
    studentId: {
      schema: idFilter("The groups of this student"),
      where: (_ctx, v) => eq(groupStudents.studentId, v),
      example: "1",
    } satisfies Filter<number>,
  },
  defaultOrder: [{ by: groupStudents.createdAt }, { by: groupStudents.id }],
  summary: "List the students of the school's groups (paginated), oldest first",
});

export const getGroupStudent = groupStudentResource.get({ access: permissions.read });

/** The student is this school's and not deleted, else 404. */
async function studentHere(ctx: SchoolCtx, studentId: number) {
  const row = await Students.select(ctx, { id: students.id })
    .where(eq(students.id, studentId), isNull(students.deletedAt))
    .first();
  if (!row) throw notFound(m`Student ${studentId} not found`);
}

export const createGroupStudent = groupStudentResource.create({
  access: permissions.write,
  input: z.object({ groupId: Id.openapi({ example: 1 }), studentId: Id.openapi({ example: 1 }) }),
  values: async (ctx, { body }) => {
    await Promise.all([groupHere(ctx, body.groupId), studentHere(ctx, body.studentId)]);
    return body;
  },
  summary: "Add a student to a group",
  description: "404 for a group or student not of this school, or a deleted student; 409 if already in the group.",
});

export const updateGroupStudent = groupStudentResource.update({
  access: permissions.write,
  input: z.object({ groupId: Id.openapi({ example: 2, description: "Another group of this school" }) }),
  values: async (ctx, { body }) => {
    await groupHere(ctx, body.groupId);
    return body;
  },
  summary: "Move a student to another group of the school",
  description: "404 for a group not of this school; 409 if the student is already in that group.",
});

export const deleteGroupStudent = groupStudentResource.delete({
  access: permissions.write,
  summary: "Remove a student from a group",
});
