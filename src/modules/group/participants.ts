/**
 * A group's participants: its teachers and students read together, and added or removed in sets
 * (one batch: the group's audit row with its lists before and after, and one per row).
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { Users, users } from "../../db/schema/core";
import { GroupStudents, Groups, GroupTeachers, groupStudents, groups, groupTeachers } from "../../db/schema/group";
import { Students, students } from "../../db/schema/student";
import { Teachers, teachers } from "../../db/schema/teacher";
import { SchoolPeople } from "../../db/schema/user";
import { and, asc, eq, getTableName, isNull, type SQL, sql } from "../../db/sql";
import type { Change, Changes } from "../../db/table";
import { guard, inList } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { notFound } from "../../lib/errors";
import { m } from "../../lib/message";
import { idList } from "../../lib/params";
import { IdParams, nonEmpty } from "../../lib/resource";
import { defineRoute, json, jsonBody, noContent, operation } from "../../lib/route";
import { notRemoved } from "../teacher/api";
import { identity } from "../user/api";
import { permissions } from "./permissions";
import { GroupTeacher, groupResource as resource } from "./record";

const groupAlias = Groups.alias("g");

const Participants = z
  .object({
    teachers: z.array(GroupTeacher).openapi({ description: "The group's teachers" }),
    students: z
      .array(
        z
          .object({
            id: z.number().int().openapi({ description: "The group-student row's id" }),
            studentId: z.number().int(),
            firstName: z.string(),
            lastName: z.string(),
          })
          .openapi("GroupStudentSummary"),
      )
      .openapi({ description: "The group's students" }),
  })
  .openapi("GroupParticipants");

/** The school's copy of the teacher's identity (src/modules/user/identity.ts), scoped to the school in the join. */
const participantCopy = SchoolPeople.alias("participant_copy");
const participantName = identity(users, participantCopy.table);

export async function participants(ctx: SchoolCtx, id: number) {
  const batch = new Batch(ctx);
  const group = batch.read(
    Groups.select(ctx, { id: groups.id })
      .where(resource.scoped(ctx, eq(groups.id, id), "read"))
      .limit(1),
  );
  const teacherRows = batch.read(
    GroupTeachers.select(ctx, {
      id: groupTeachers.id,
      teacherId: groupTeachers.teacherId,
      userId: teachers.userId,
      firstName: participantName.firstName,
      lastName: participantName.lastName,
      subject: groupTeachers.subject,
    })
      .join(Teachers, eq(teachers.id, groupTeachers.teacherId))
      .join(Users, eq(users.id, teachers.userId))
      .leftJoin(participantCopy, eq(participantCopy.table.userId, teachers.userId))
      .where(eq(groupTeachers.groupId, id))
      .orderBy(asc(groupTeachers.groupId), asc(groupTeachers.teacherId)),
  );
  const studentRows = batch.read(
    GroupStudents.select(ctx, {
      id: groupStudents.id,
      studentId: groupStudents.studentId,
      firstName: students.firstName,
      lastName: students.lastName,
    })
      .join(Students, eq(students.id, groupStudents.studentId))
      .where(eq(groupStudents.groupId, id), isNull(students.deletedAt))
      .orderBy(asc(groupStudents.groupId), asc(groupStudents.studentId)),
  );
  const results = await batch.commit();
  if (!results.get(group)[0]) throw notFound(m`Group ${id} not found`);
  return { teachers: results.get(teacherRows), students: results.get(studentRows) };
}

export const getGroupParticipants = operation(
  defineRoute({
    method: "get",
    path: "/api/v1/group/{id}/participants",
    tag: "Groups",
    operationId: "getGroupParticipants",
    summary: "The teachers and students of a group",
    description:
      "Teachers in teacher-profile order, students in student order (deleted students left out). One D1 call.",
    access: permissions.read,
    request: { params: IdParams },
    responses: { 200: json(Participants, "The group's teachers and students") },
  }),
  (ctx, { params }) => participants(ctx, params.id),
);

const ParticipantIds = idList({ min: 0 });

const ParticipantsBody = nonEmpty(
  z.strictObject({
    teacherIds: ParticipantIds.optional().openapi({ description: "Teacher profile ids", example: [1] }),
    studentIds: ParticipantIds.optional().openapi({ description: "Student ids", example: [1] }),
  }),
);
type ParticipantsInput = { teacherIds?: number[]; studentIds?: number[] };

/**
 * The group's audit pairs for adding (`add`) or removing the input's participants: each list given,
 * its ids in the group before and after, sorted. Place it before the change (it reads the rows).
 */
const changes = (id: number, input: ParticipantsInput, add: boolean): Changes => {
  const pair = (before: SQL, ids: number[]) => {
    const given = sql`SELECT value AS v FROM json_each(${JSON.stringify(ids)})`;
    const after = add ? sql`${before} UNION ${given}` : sql`${before} EXCEPT ${given}`;
    const list = (rows: SQL) => sql`(SELECT json_group_array(v) FROM (${rows} ORDER BY v))`;
    return { old: sql`json(${list(before)})`, new: sql`json(${list(after)})` };
  };
  const pairs: Record<string, Change> = {};
  if (input.teacherIds) {
    const before = sql`SELECT ${groupTeachers.teacherId} AS v FROM ${groupTeachers} WHERE ${groupTeachers.groupId} = ${id}`;
    pairs.teacherIds = pair(before, input.teacherIds);
  }
  if (input.studentIds) {
    const before = sql`SELECT ${groupStudents.studentId} AS v FROM ${groupStudents} WHERE ${groupStudents.groupId} = ${id}`;
    pairs.studentIds = pair(before, input.studentIds);
  }
  return pairs;
};

/**
 * The rows of group `id` the INSERT just before inserted: AUTOINCREMENT gives them the ids
 * (seq - changes(), seq], and rows already in the group (DO NOTHING) take none.
 */
const justInserted = (table: typeof groupTeachers | typeof groupStudents, id: number) =>
  and(
    eq(table.groupId, id),
    sql`${table.id} > (SELECT seq FROM sqlite_sequence WHERE name = ${getTableName(table)}) - changes()`,
  );

/**
 * Adds teachers and students to a group: the ids must be this school's (teachers not removed,
 * students not deleted), else 404 naming them; ones already in the group stay as they are. One
 * batch: the group's audit row (guarded: no group here, nothing happens), the new rows and theirs.
 */
export async function addParticipants(ctx: SchoolCtx, id: number, input: ParticipantsInput) {
  const teacherIds = input.teacherIds ?? [];
  const studentIds = input.studentIds ?? [];
  const reads = new Batch(ctx);
  const teachersRead = reads.read(
    Teachers.select(ctx, { id: teachers.id }).where(inList(teachers.id, teacherIds), notRemoved(teachers)),
  );
  const studentsRead = reads.read(
    Students.select(ctx, { id: students.id }).where(inList(students.id, studentIds), isNull(students.deletedAt)),
  );
  const found = await reads.commit();
  const foundTeachers = found.get(teachersRead);
  const foundStudents = found.get(studentsRead);
  const missingTeachers = teacherIds.filter((t) => !foundTeachers.some((r) => r.id === t));
  if (missingTeachers.length)
    throw notFound(
      missingTeachers.length > 1
        ? m`Teachers ${missingTeachers.join(", ")} not found`
        : m`Teacher ${missingTeachers.join(", ")} not found`,
    );
  const missingStudents = studentIds.filter((s) => !foundStudents.some((r) => r.id === s));
  if (missingStudents.length)
    throw notFound(
      missingStudents.length > 1
        ? m`Students ${missingStudents.join(", ")} not found`
        : m`Student ${missingStudents.join(", ")} not found`,
    );

  const { db } = ctx.deps;
  const now = ctx.deps.clock.now().toISOString();
  // The new rows take the school of the group they join (the group of this school, by its scope).
  const g = groupAlias.table;
  const ofGroup = (ids: number[]) =>
    sql`FROM ${groupAlias.from} JOIN json_each(${JSON.stringify(ids)}) WHERE ${groupAlias.where(ctx, sql`${g.id} = ${id}`)}`;
  const batch = new Batch(ctx).add(
    // No group here: the audit statement inserted nothing, and the guard aborts the batch.
    ...Groups.action(
      ctx,
      eq(groups.id, id),
      { action: "add-participants", changes: changes(id, input, true) },
      guard(db),
    ),
  );
  if (teacherIds.length) {
    batch.add(
      ...GroupTeachers.insertMany(
        ctx,
        db
          .insert(groupTeachers)
          .select(
            sql`SELECT NULL, ${now}, ${now}, ${groupAlias.schoolOf()}, ${g.id}, value, NULL ${ofGroup(teacherIds)}`,
          )
          .onConflictDoNothing(),
        justInserted(groupTeachers, id),
        ["groupId", "teacherId"],
      ),
    );
  }
  if (studentIds.length) {
    batch.add(
      ...GroupStudents.insertMany(
        ctx,
        db
          .insert(groupStudents)
          .select(sql`SELECT NULL, ${now}, ${now}, ${groupAlias.schoolOf()}, ${g.id}, value ${ofGroup(studentIds)}`)
          .onConflictDoNothing(),
        justInserted(groupStudents, id),
        ["groupId", "studentId"],
      ),
    );
  }
  await resource.commit(ctx, id, batch);
}

/**
 * Removes teachers and students from a group (ids not in the group are ignored). One batch: the
 * group's audit row (guarded), each removed row's audit row, the deletes.
 */
export async function removeParticipants(ctx: SchoolCtx, id: number, input: ParticipantsInput) {
  const batch = new Batch(ctx).add(
    // No group here: the audit statement inserted nothing, and the guard aborts the batch.
    ...Groups.action(
      ctx,
      eq(groups.id, id),
      { action: "remove-participants", changes: changes(id, input, false) },
      guard(ctx.deps.db),
    ),
  );
  if (input.teacherIds?.length) {
    batch.add(
      ...GroupTeachers.delete(
        ctx,
        and(eq(groupTeachers.groupId, id), inList(groupTeachers.teacherId, input.teacherIds)),
      ),
    );
  }
  if (input.studentIds?.length) {
    batch.add(
      ...GroupStudents.delete(
        ctx,
        and(eq(groupStudents.groupId, id), inList(groupStudents.studentId, input.studentIds)),
      ),
    );
  }
  await resource.commit(ctx, id, batch);
}

export const addGroupParticipants = operation(
  defineRoute({
    method: "put",
    path: "/api/v1/group/{id}/participants",
    tag: "Groups",
    operationId: "addGroupParticipants",
    summary: "Add teachers and students to a group",
    description:
      "`teacherIds` are teacher profile ids, `studentIds` student ids, of this school (else 404 naming them; nothing " +
      "is added). Those already in the group stay as they are (a teacher keeps their subject). One audit row on the " +
      "group, one per added row.",
    access: permissions.write,
    audit: "group",
    request: { params: IdParams, body: jsonBody(ParticipantsBody, "GroupParticipantsAdd") },
    responses: { 204: noContent },
  }),
  async (ctx, { params, body }) => {
    await addParticipants(ctx, params.id, body);
    return undefined;
  },
);

export const removeGroupParticipants = operation(
  defineRoute({
    method: "delete",
    path: "/api/v1/group/{id}/participants",
    tag: "Groups",
    operationId: "removeGroupParticipants",
    summary: "Remove teachers and students from a group",
    description:
      "The body names teacher profile ids and student ids to remove; those not in the group are ignored. One audit " +
      "row on the group, one per removed row.",
    access: permissions.write,
    audit: "group",
    request: { params: IdParams, body: jsonBody(ParticipantsBody, "GroupParticipantsRemove") },
    responses: { 204: noContent },
  }),
  async (ctx, { params, body }) => {
    await removeParticipants(ctx, params.id, body);
    return undefined;
  },
);
