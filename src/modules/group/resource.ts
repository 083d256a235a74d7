/**
 * Groups (classes) of the current school: a name unique per school year, a level the school offers,
 * a grade, an image, and their teachers and students. Reads answer the group with its teachers
 * (JSON sub-select) and its count of students, in one D1 call. Staff see every group; a teacher
 * the groups they teach (./access.ts); anyone sees their own at `GET /api/v1/group/mine`.
 */
import { z } from "@hono/zod-openapi";
import { and, asc, eq, getTableName, isNull, type SQL, sql } from "drizzle-orm";
import { auditAction, auditDelete } from "../../db/audit";
import { schools, users } from "../../db/schema/core";
import { delegates } from "../../db/schema/delegate";
import { groupStudents, groups, groupTeachers } from "../../db/schema/group";
import { parents } from "../../db/schema/parent";
import { students } from "../../db/schema/student";
import { teachers } from "../../db/schema/teacher";
import { commit, guard, jsonValues, type Statement } from "../../db/write";
import { type Ctx, ctxOf, schoolOf, tenant } from "../../lib/context";
import { ApiError, notFound } from "../../lib/errors";
import { Deleted, DeleteMany, idFilter, idList } from "../../lib/params";
import { defineResource, type Filter, IdParams, nonEmpty, RecordBase } from "../../lib/resource/old";
import { defineRoute, handled, json, jsonBody, noContent } from "../../lib/route";
import { contains, searchTerm } from "../../lib/search";
import { imageUrlBody, signedUrlFields } from "../../lib/signed-url";
import { text } from "../../lib/text";
import { delegationsAround, validToday } from "../delegate/api";
import { assertOffered, LEVELS, type Level } from "../school/api";
import { notRemoved } from "../teacher/api";
import { columnsAs, copyJoin, copyOf, copyTable, identity } from "../user/api";
import { groupVisible, teaches } from "./access";
import { permissions } from "./permissions";

const GroupTeacher = z
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
  name: z.string().openapi({ example: "3rd A" }),
  level: z.enum(LEVELS),
  schoolYear: z.string().openapi({ example: "2026-2027" }),
  grade: z.number().int().nullable().openapi({ example: 3 }),
  image: z
    .string()
    .nullable()
    .openapi({ description: "The image's object key, or null", example: "1/groups/7/image-2f1c.png" }),
  teacherCount: z.number().int().min(0),
  teachers: z.array(GroupTeacher),
  studentCount: z
    .number()
    .int()
    .min(0)
    .openapi({ description: "Students in the group (deleted students not counted)" }),
});

/** The group's id in the outer query (drizzle leaves the columns of a one-table select unqualified). */
const GROUP_ID = '"school_group"."id"';
const teacherName = identity(columnsAs("tu"), columnsAs("tc"));
const fields = {
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
  teachers: sql<string>`(SELECT json_group_array(json_object('id', "gt"."id", 'teacherId', "gt"."teacher_id", 'userId', "tp"."user_id", 'firstName', ${teacherName.firstName}, 'lastName', ${teacherName.lastName}, 'subject', "gt"."subject")) FROM "group_teacher" "gt" INNER JOIN "teacher" "tp" ON "tp"."id" = "gt"."teacher_id" INNER JOIN "user" "tu" ON "tu"."id" = "tp"."user_id" ${copyJoin("tc", sql.raw('"tp"."user_id"'), sql.raw('"gt"."school_id"'))} WHERE "gt"."group_id" = ${sql.raw(GROUP_ID)})`,
  studentCount: sql<number>`(SELECT count(*) FROM "group_student" "gs" INNER JOIN "student" "st" ON "st"."id" = "gs"."student_id" WHERE "gs"."group_id" = ${sql.raw(GROUP_ID)} AND "st"."deleted_at" IS NULL)`,
};

type GroupRow = {
  id: number;
  createdAt: string;
  updatedAt: string;
  name: string;
  level: Level;
  schoolYear: string;
  grade: number | null;
  image: string | null;
  teachers: string;
  studentCount: number;
};

export function toGroup(row: GroupRow): z.infer<typeof GroupRecord> {
  const list = JSON.parse(row.teachers || "[]") as z.infer<typeof GroupTeacher>[];
  return {
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
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
  label: "Group",
  entity: "group",
  path: "/api/v1/group",
  tag: "Groups",
  scope: "school",
  table: groups,
  record: GroupRecord,
  view: { fields },
  toRecord: (row) => toGroup(row as GroupRow),
  visibleTo: (ctx, access) => groupVisible(ctx, GROUP_ID, access),
  conflictMessage:
    "A group with this name already exists in this school year (names that differ only in case or accents are the same)",
});

const resource = groupResource;

const Name = text({ max: 100 }).openapi({ example: "3rd A" });
const SchoolYear = z
  .string()
  .regex(/^\d{4}-\d{4}$/, "Expected a school year like 2026-2027")
  .refine((v) => Number(v.slice(5)) === Number(v.slice(0, 4)) + 1, "The second year follows the first")
  .openapi({ example: "2026-2027" });
const Grade = z.number().int().min(1).max(12).openapi({ example: 3, description: "Grade within the level, 1 to 12" });
const LevelInput = z
  .enum(LEVELS)
  .openapi({ example: "elementary", description: "One of the levels the school offers" });
/** An id filter in plain digits ("1e3", "0x10", "1.0" are 400s, as for path ids). */

export const listGroups = resource.list({
  access: permissions.read,
  filters: {
    level: {
      schema: LevelInput.optional(),
      // Unary plus: the level index would serve the filter but not the order (a sort step); the
      // school's groups are read in order through school_group_created_idx instead.
      where: (v: Level) => sql`+${groups.level} = ${v}`,
      example: "elementary",
    } satisfies Filter<Level>,
    schoolYear: {
      schema: SchoolYear.optional(),
      where: (v: string) => eq(groups.schoolYear, v),
      example: "2026-2027",
    } satisfies Filter<string>,
    name: {
      schema: searchTerm("Part of the name"),
      where: (v: string) => contains(groups.nameSearch, v),
      example: "3rd",
    } satisfies Filter<string>,
    teacher: {
      schema: idFilter("Groups this teacher (teacher profile id) teaches"),
      where: (v: number) =>
        sql`EXISTS (SELECT 1 FROM "group_teacher" "gt" WHERE "gt"."group_id" = ${sql.raw(GROUP_ID)} AND "gt"."teacher_id" = ${v})`,
      example: "1",
    } satisfies Filter<number>,
  },
  sort: { createdAt: groups.createdAt, name: groups.name },
  defaultOrder: [asc(groups.createdAt), asc(groups.id)],
  summary: "List the current school's groups (paginated); a teacher without group.read-all: the groups they teach",
});

export const getGroup = resource.get({ access: permissions.read });

export const createGroup = resource.create({
  access: permissions.write,
  input: z.object({ name: Name, level: LevelInput, schoolYear: SchoolYear, grade: Grade.nullable().optional() }),
  values: async (input, ctx) => {
    await assertOffered(ctx, input.level);
    return { name: input.name, level: input.level, schoolYear: input.schoolYear, grade: input.grade ?? null };
  },
  summary: "Create a group",
  description: "409 if the school year already has a group of this name; 422 if the school does not offer the level.",
  errors: [422],
});

export const updateGroup = resource.update({
  access: permissions.write,
  input: z.object({
    name: Name.optional(),
    level: LevelInput.optional(),
    schoolYear: SchoolYear.optional(),
    grade: Grade.nullable().optional(),
  }),
  values: async (input, ctx) => {
    if (input.level !== undefined) await assertOffered(ctx, input.level);
    return input;
  },
  description: "409 if the school year already has a group of this name; 422 if the school does not offer the level.",
  errors: [422],
});

export const deleteGroup = resource.delete({
  access: permissions.write,
  summary: "Delete a group (its teacher and student rows go with it)",
});

// ---- The caller's groups ---------------------------------------------------------------------

const MINE_LIMIT = 200;
const MyGroups = z.object({ data: z.array(resource.record) }).openapi("MyGroups");

const aliased = () =>
  Object.fromEntries(
    Object.entries(fields).map(([key, f]) => [key, "mapFromDriverValue" in f ? f : (f as SQL).as(key)]),
  ) as { [K in keyof typeof fields]: (typeof fields)[K] extends SQL<infer X> ? SQL.Aliased<X> : (typeof fields)[K] };

const DAY_MS = 24 * 3600 * 1000;
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The groups of the caller in the current school: the groups they teach, and the groups of the
 * children they are a guardian of, or a parent they are a delegate of today (as `actingFor`
 * decides, in the school's time zone). One D1 call: the delegations (UTC today ±1 day) and the
 * groups linked through any of them, whose link is then checked in the school's time zone.
 */
export async function myGroups(ctx: Ctx) {
  const { db, clock } = ctx.deps;
  const self = ctx.userId ?? 0;
  const schoolId = schoolOf(ctx);
  const now = clock.now();
  const from = utcDate(now.getTime() + DAY_MS);
  const until = utcDate(now.getTime() - DAY_MS);
  const window = and(delegationsAround(self, now), eq(delegates.schoolId, schoolId));
  // The parents the caller may act for: themself, and those whose delegate they may be today
  // (delegate_user_idx); checked in the school's time zone below.
  const candidate = sql`("mp"."user_id" = ${self} OR "mp"."id" IN (SELECT "d"."parent_id" FROM "delegate" "d" WHERE "d"."user_id" = ${self} AND "d"."school_id" = ${schoolId} AND "d"."valid_until" >= ${until} AND "d"."valid_from" <= ${from}))`;
  const links = (select: SQL) =>
    sql`(SELECT ${select} FROM "group_student" "ml" INNER JOIN "student" "ms" ON "ms"."id" = "ml"."student_id" INNER JOIN "guardian" "mg" ON "mg"."student_id" = "ml"."student_id" INNER JOIN "parent" "mp" ON "mp"."id" = "mg"."parent_id" WHERE "ml"."group_id" = ${sql.raw(GROUP_ID)} AND "ms"."deleted_at" IS NULL AND ${candidate})`;
  const teaching = teaches(ctx, GROUP_ID);
  const [delegations, rows] = await db.batch([
    db
      .select({
        parentUserId: parents.userId,
        timeZone: schools.timeZone,
        validFrom: delegates.validFrom,
        validUntil: delegates.validUntil,
      })
      .from(delegates)
      .innerJoin(parents, eq(parents.id, delegates.parentId))
      .innerJoin(users, eq(users.id, parents.userId))
      .innerJoin(schools, eq(schools.id, delegates.schoolId))
      .where(window),
    db
      .select({
        ...aliased(),
        teaching: sql<number>`CASE WHEN ${teaching} THEN 1 ELSE 0 END`.as("teaching"),
        via: sql<string>`${links(sql`json_group_array("mp"."user_id")`)}`.as("via"),
      })
      .from(groups)
      .where(and(tenant(ctx, groups), sql`(${teaching} OR EXISTS ${links(sql`1`)})`))
      .orderBy(asc(groups.createdAt), asc(groups.id))
      .limit(MINE_LIMIT),
  ]);
  const actingFor = new Set([self, ...delegations.filter((d) => validToday(d, now)).map((d) => d.parentUserId)]);
  const data = rows
    .filter((r) => r.teaching === 1 || (JSON.parse(r.via || "[]") as number[]).some((u) => actingFor.has(u)))
    .map((r) => toGroup(r as unknown as GroupRow));
  return { data };
}

export const listMyGroups = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/group/mine",
    tag: "Groups",
    operationId: "listMyGroups",
    summary: "The caller's groups: those they teach, and their children's (a delegate: the parent's children's)",
    description:
      "Any member of the school. A teacher: the groups they teach; a parent: the groups of the children they are a " +
      "guardian of; a delegate: also those of the parent they act for today. Staff see every group at " +
      `GET /api/v1/group; here they get only their own. Oldest first, at most ${MINE_LIMIT}; one D1 call.`,
    access: "member",
    responses: { 200: json(MyGroups, "The caller's groups") },
  }),
  async (c) => c.json(await myGroups(ctxOf(c)), 200),
);

/** The groups the caller teaches (none when they have no teacher profile here). */
export async function myTeacherGroups(ctx: Ctx) {
  const rows = await ctx.deps.db
    .select(aliased())
    .from(groups)
    .where(and(tenant(ctx, groups), teaches(ctx, GROUP_ID)))
    .orderBy(asc(groups.createdAt), asc(groups.id))
    .limit(MINE_LIMIT);
  return { data: rows.map((r) => toGroup(r as unknown as GroupRow)) };
}

export const listMyTeacherGroups = handled(
  defineRoute({
    method: "get",
    path: "/api/v1/group/teacher/mine",
    tag: "Groups",
    operationId: "listMyTeacherGroups",
    summary: "The groups of the current teacher (spec: Teacher, GET groups of the current teacher)",
    description:
      "The groups whose teachers include the caller's teacher profile in this school; an empty list for a caller " +
      `who teaches no group (or is no teacher). Oldest first, at most ${MINE_LIMIT}; one D1 call.`,
    access: permissions.read,
    responses: { 200: json(MyGroups, "The groups the caller teaches") },
  }),
  async (c) => c.json(await myTeacherGroups(ctxOf(c)), 200),
);

// ---- Delete several ----------------------------------------------------------------------------

export async function deleteGroups(ctx: Ctx, ids: number[]) {
  const { db } = ctx.deps;
  const inSchool = and(tenant(ctx, groups), sql`${groups.id} IN ${jsonValues(ids)}`);
  const found = await db.select({ id: groups.id }).from(groups).where(inSchool);
  const missing = ids.filter((id) => !found.some((r) => r.id === id));
  if (missing.length) throw notFound(`Group${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`);
  await commit(ctx, [auditDelete(ctx, resource.audit, inSchool), db.delete(groups).where(inSchool)]);
}

/** "Delete several groups": DELETE, and POST (the same operation) for clients that send no body with a DELETE. */
const deleteSeveral = (method: "delete" | "post", operationId: string) =>
  handled(
    defineRoute({
      method,
      path: "/api/v1/group/delete-multiple",
      tag: "Groups",
      operationId,
      summary: method === "delete" ? "Delete several groups at once" : "Delete several groups at once (POST form)",
      description:
        "All or nothing: if any id is not a group of this school, 404 naming those ids and nothing is deleted. " +
        "Otherwise one batch deletes them (with their teacher and student rows), each with its audit row. " +
        "`DELETE` and `POST` on this path do the same.",
      access: permissions.write,
      audit: "group",
      request: { body: jsonBody(DeleteMany("Group"), "GroupDeleteMultiple") },
      responses: { 200: json(Deleted, "The ids deleted") },
    }),
    async (c) => {
      const { ids } = c.req.valid("json");
      await deleteGroups(ctxOf(c), ids);
      return c.json({ deleted: ids }, 200);
    },
  );

export const deleteMultipleGroups = deleteSeveral("delete", "deleteMultipleGroups");
export const deleteMultipleGroupsPost = deleteSeveral("post", "deleteMultipleGroupsPost");

// ---- Participants ----------------------------------------------------------------------------

const Participants = z
  .object({
    teachers: z.array(GroupTeacher),
    students: z.array(
      z
        .object({
          id: z.number().int().openapi({ description: "The group-student row's id" }),
          studentId: z.number().int(),
          firstName: z.string(),
          lastName: z.string(),
        })
        .openapi("GroupStudentSummary"),
    ),
  })
  .openapi("GroupParticipants");

const participantCopy = copyTable("participant_copy");
const participantName = identity(users, participantCopy);

export async function participants(ctx: Ctx, id: number) {
  const { db } = ctx.deps;
  const [[group], teacherRows, studentRows] = await db.batch([
    db
      .select({ id: groups.id })
      .from(groups)
      .where(resource.scoped(ctx, eq(groups.id, id), "read"))
      .limit(1),
    db
      .select({
        id: groupTeachers.id,
        teacherId: groupTeachers.teacherId,
        userId: teachers.userId,
        firstName: participantName.firstName,
        lastName: participantName.lastName,
        subject: groupTeachers.subject,
      })
      .from(groupTeachers)
      .innerJoin(teachers, eq(teachers.id, groupTeachers.teacherId))
      .innerJoin(users, eq(users.id, teachers.userId))
      .leftJoin(participantCopy, copyOf(participantCopy, teachers.userId, groupTeachers.schoolId))
      .where(and(eq(groupTeachers.groupId, id), tenant(ctx, groupTeachers)))
      .orderBy(asc(groupTeachers.groupId), asc(groupTeachers.teacherId)),
    db
      .select({
        id: groupStudents.id,
        studentId: groupStudents.studentId,
        firstName: students.firstName,
        lastName: students.lastName,
      })
      .from(groupStudents)
      .innerJoin(students, eq(students.id, groupStudents.studentId))
      .where(and(eq(groupStudents.groupId, id), tenant(ctx, groupStudents), isNull(students.deletedAt)))
      .orderBy(asc(groupStudents.groupId), asc(groupStudents.studentId)),
  ]);
  if (!group) throw notFound("Group", id);
  return { teachers: teacherRows, students: studentRows };
}

export const getGroupParticipants = handled(
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
  async (c) => c.json(await participants(ctxOf(c), c.req.valid("param").id), 200),
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
const changes = (id: number, input: ParticipantsInput, add: boolean) => {
  const pair = (key: string, table: typeof groupTeachers | typeof groupStudents, column: SQL, ids: number[]) => {
    const before = sql`SELECT ${column} AS v FROM ${table} WHERE ${table.groupId} = ${id}`;
    const given = sql`SELECT value AS v FROM json_each(${JSON.stringify(ids)})`;
    const after = add ? sql`${before} UNION ${given}` : sql`${before} EXCEPT ${given}`;
    const list = (rows: SQL) => sql`(SELECT json_group_array(v) FROM (${rows} ORDER BY v))`;
    return sql`${key}, json_object('old', json(${list(before)}), 'new', json(${list(after)}))`;
  };
  const pairs: SQL[] = [];
  if (input.teacherIds)
    pairs.push(pair("teacherIds", groupTeachers, sql`${groupTeachers.teacherId}`, input.teacherIds));
  if (input.studentIds)
    pairs.push(pair("studentIds", groupStudents, sql`${groupStudents.studentId}`, input.studentIds));
  return sql`json_object(${sql.join(pairs, sql`, `)})`;
};

const gtAudit = { entity: "group-teacher", table: groupTeachers };
const gsAudit = { entity: "group-student", table: groupStudents };

/** The group-teacher / group-student audit row of each row this batch just inserted (created now). */
const createdChanges = (table: typeof groupTeachers | typeof groupStudents) => {
  const member =
    "teacherId" in table
      ? sql`'teacherId', json_object('old', NULL, 'new', ${table.teacherId})`
      : sql`'studentId', json_object('old', NULL, 'new', ${(table as typeof groupStudents).studentId})`;
  return sql`json_object('groupId', json_object('old', NULL, 'new', ${table.groupId}), ${member})`;
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
export async function addParticipants(ctx: Ctx, id: number, input: ParticipantsInput) {
  const { db } = ctx.deps;
  const teacherIds = input.teacherIds ?? [];
  const studentIds = input.studentIds ?? [];
  const [foundTeachers, foundStudents] = await db.batch([
    db
      .select({ id: teachers.id })
      .from(teachers)
      .where(and(tenant(ctx, teachers), sql`${teachers.id} IN ${jsonValues(teacherIds)}`, notRemoved(teachers))),
    db
      .select({ id: students.id })
      .from(students)
      .where(and(tenant(ctx, students), sql`${students.id} IN ${jsonValues(studentIds)}`, isNull(students.deletedAt))),
  ]);
  const missingTeachers = teacherIds.filter((t) => !foundTeachers.some((r) => r.id === t));
  if (missingTeachers.length)
    throw notFound(`Teacher${missingTeachers.length > 1 ? "s" : ""} ${missingTeachers.join(", ")}`);
  const missingStudents = studentIds.filter((s) => !foundStudents.some((r) => r.id === s));
  if (missingStudents.length)
    throw notFound(`Student${missingStudents.length > 1 ? "s" : ""} ${missingStudents.join(", ")}`);

  const now = ctx.deps.clock.now().toISOString();
  const schoolId = schoolOf(ctx);
  const statements: Statement[] = [];
  if (teacherIds.length) {
    statements.push(
      db
        .insert(groupTeachers)
        .select(
          sql`SELECT NULL, ${now}, ${now}, ${schoolId}, ${id}, value, NULL FROM json_each(${JSON.stringify(teacherIds)}) WHERE true`,
        )
        .onConflictDoNothing(),
      auditAction(ctx, gtAudit, justInserted(groupTeachers, id), "create", createdChanges(groupTeachers)),
    );
  }
  if (studentIds.length) {
    statements.push(
      db
        .insert(groupStudents)
        .select(
          sql`SELECT NULL, ${now}, ${now}, ${schoolId}, ${id}, value FROM json_each(${JSON.stringify(studentIds)}) WHERE true`,
        )
        .onConflictDoNothing(),
      auditAction(ctx, gsAudit, justInserted(groupStudents, id), "create", createdChanges(groupStudents)),
    );
  }
  await resource.commit(ctx, id, [
    auditAction(
      ctx,
      resource.audit,
      and(eq(groups.id, id), tenant(ctx, groups)),
      "add-participants",
      changes(id, input, true),
    ),
    // No group here: the audit statement inserted nothing, and the guard aborts the batch.
    guard(db),
    ...statements,
  ]);
}

/**
 * Removes teachers and students from a group (ids not in the group are ignored). One batch: the
 * group's audit row (guarded), each removed row's audit row, the deletes.
 */
export async function removeParticipants(ctx: Ctx, id: number, input: ParticipantsInput) {
  const { db } = ctx.deps;
  const statements: Statement[] = [];
  if (input.teacherIds?.length) {
    const where = and(
      eq(groupTeachers.groupId, id),
      sql`${groupTeachers.teacherId} IN ${jsonValues(input.teacherIds)}`,
    );
    statements.push(auditDelete(ctx, gtAudit, where), db.delete(groupTeachers).where(where));
  }
  if (input.studentIds?.length) {
    const where = and(
      eq(groupStudents.groupId, id),
      sql`${groupStudents.studentId} IN ${jsonValues(input.studentIds)}`,
    );
    statements.push(auditDelete(ctx, gsAudit, where), db.delete(groupStudents).where(where));
  }
  await resource.commit(ctx, id, [
    auditAction(
      ctx,
      resource.audit,
      and(eq(groups.id, id), tenant(ctx, groups)),
      "remove-participants",
      changes(id, input, false),
    ),
    // No group here: the audit statement inserted nothing, and the guard aborts the batch.
    guard(db),
    ...statements,
  ]);
}

export const addGroupParticipants = handled(
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
  async (c) => {
    await addParticipants(ctxOf(c), c.req.valid("param").id, c.req.valid("json"));
    return c.body(null, 204);
  },
);

export const removeGroupParticipants = handled(
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
  async (c) => {
    await removeParticipants(ctxOf(c), c.req.valid("param").id, c.req.valid("json"));
    return c.body(null, 204);
  },
);

// ---- Image -----------------------------------------------------------------------------------

export const IMAGE_URL_SECONDS = 5 * 60;
const IMAGE_TYPES = { "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp" } as const;
type ImageType = keyof typeof IMAGE_TYPES;

const ImageUrlBody = imageUrlBody(Object.keys(IMAGE_TYPES) as [ImageType, ...ImageType[]], "image");

const ImageUrl = z
  .object({
    image: z.string().openapi({ example: "1/groups/7/image-2f1c.png", description: "The image's object key" }),
    ...signedUrlFields(IMAGE_URL_SECONDS),
  })
  .openapi("GroupImageUrl");

export async function imageUrl(ctx: Ctx, id: number, input: z.infer<typeof ImageUrlBody>) {
  const now = ctx.deps.clock.now();
  let key: string;
  if (input.method === "PUT") {
    if (!ctx.can(permissions.write)) {
      throw new ApiError(403, `Missing permission ${permissions.write.name} in school ${ctx.schoolId}`);
    }
    const contentType = input.contentType ?? "image/png";
    key = `${schoolOf(ctx)}/groups/${id}/image-${crypto.randomUUID()}.${IMAGE_TYPES[contentType]}`;
    await resource.commit(ctx, id, resource.writes.update(ctx, id, { image: key }, "image"));
  } else {
    // Whoever sees the group: staff and its teachers through the resource, a parent (or delegate)
    // through their children's groups (404 for a group they do not see).
    const group = ctx.can(permissions.read)
      ? await resource.find(ctx, id)
      : (await myGroups(ctx)).data.find((g) => g.id === id);
    if (!group) throw notFound("Group", id);
    if (group.image === null) throw new ApiError(404, `Group ${id} has no image; upload one with method PUT`);
    key = group.image;
  }
  const contentType = input.method === "PUT" ? input.contentType : undefined;
  const signed = await ctx.deps.signer.sign({
    key,
    method: input.method,
    contentType,
    expiresIn: IMAGE_URL_SECONDS,
    now,
  });
  return { image: key, ...signed };
}

export const createGroupSignedUrl = handled(
  defineRoute({
    method: "put",
    path: "/api/v1/group/{id}/signed-url",
    tag: "Groups",
    operationId: "createGroupSignedUrl",
    summary: "Get a presigned URL to upload (PUT: sets a new image) or download (GET) the group's image",
    description:
      "PUT needs group.write: the group's image becomes a new key `{schoolId}/groups/{id}/image-{uuid}.{ext}` and " +
      "the URL uploads to it (image/png, image/jpeg or image/webp; another type is a 400; send the returned " +
      `\`headers\`). GET signs a download of the current image (404 if none) for anyone who sees the group: staff, ` +
      `its teachers, and the parents (and delegates) of its students. URLs expire after ${IMAGE_URL_SECONDS} s.`,
    access: "member",
    audit: "group",
    request: { params: IdParams, body: jsonBody(ImageUrlBody, "GroupImageUrlRequest") },
    responses: { 200: json(ImageUrl, "The image's key and its presigned URL") },
  }),
  async (c) => c.json(await imageUrl(ctxOf(c), c.req.valid("param").id, c.req.valid("json")), 200),
);
