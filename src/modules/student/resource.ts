/**
 * Students: the school's children. The list (filters: group, route, level, family, status, name), the
 * record, create, update, the list of deleted students (`deleted=true`) and the Excel export. Soft
 * delete (one or many) and restore: ./removal.ts; the detail (family, guardians, groups: one D1
 * round trip of JSON sub-selects): ./detail.ts. Who sees which students: ./visibility.ts.
 * Guardians (the parent links): ./guardian-routes.ts.
 */
import { z } from "@hono/zod-openapi";
import { Families, families } from "../../db/schema/family";
import { GroupStudents, groupStudents } from "../../db/schema/group";
import { Students, students } from "../../db/schema/student";
import { RouteStudents, routeStudents } from "../../db/schema/transport";
import { eq, isNotNull, isNull, sql } from "../../db/sql";
import type { SchoolCtx } from "../../lib/context";
import { schoolDate } from "../../lib/dates";
import { conflict, notFound, unprocessable } from "../../lib/errors";
import { factChanged, type Redecision } from "../../lib/facts";
import { parseJson } from "../../lib/json";
import { LEVELS } from "../../lib/levels";
import { m } from "../../lib/message";
import { recordId } from "../../lib/params";
import { defineResource, type Filter, RecordBase, type RowOf, timestamps } from "../../lib/resource";
import { operation } from "../../lib/route";
import { schoolEvent } from "../../lib/school-events";
import { containsName, searchTerm } from "../../lib/search";
import { text } from "../../lib/text";
import { assertOffered } from "../school/api";
import { permissions } from "./permissions";
import { listVisibility, readerContext, visibleTo } from "./visibility";

const STATUSES = ["active", "inactive", "graduated"] as const;
export const Level = z.enum(LEVELS).openapi({ example: "elementary" });
const Status = z
  .enum(STATUSES)
  .openapi({ example: "active", description: "active, inactive (not attending) or graduated" });
export const Day = z.iso.date().openapi({ example: "2018-05-14", description: "YYYY-MM-DD" });
/** A birth date as given: a school date (a pupil born before 2000 is past school age), not after today (422). */
const BirthDate = schoolDate("The student's birth date; not after today", "2018-05-14");

/** A student's groups (classes): what an app shows beside each child, without reading the detail. */
export const StudentGroups = z
  .array(
    z
      .object({
        id: z.number().int().openapi({ description: "The group's id" }),
        name: z.string().openapi({ example: "Primaria 3°A", description: "The group's name" }),
        level: Level,
        schoolYear: z.string().openapi({ example: "2026-2027" }),
      })
      .openapi("StudentGroup"),
  )
  .openapi({ description: "The student's groups (classes), by id" });

export const StudentRecord = RecordBase.extend({
  firstName: z.string().openapi({ example: "Pablo" }),
  lastName: z.string().openapi({ example: "Parent" }),
  idNumber: z.string().nullable().openapi({ example: "S-0042", description: "The school's enrolment number" }),
  level: Level.nullable(),
  birthDate: Day.nullable(),
  status: Status,
  photo: z.string().nullable().openapi({ description: "Object key of the photo under {schoolId}/students/" }),
  familyId: z.number().int().nullable().openapi({ example: 1 }),
  deletedAt: z.iso
    .datetime()
    .nullable()
    .openapi({ description: "When the student was deleted (only `deleted=true` lists them); null otherwise" }),
  groups: StudentGroups,
});

export const fields = {
  id: students.id,
  createdAt: students.createdAt,
  updatedAt: students.updatedAt,
  firstName: students.firstName,
  lastName: students.lastName,
  idNumber: students.idNumber,
  level: students.level,
  birthDate: students.birthDate,
  status: students.status,
  photo: students.photo,
  familyId: students.familyId,
  deletedAt: students.deletedAt,
  // A JSON sub-select correlated with the row (group_student_student_idx, then the group by its key):
  // the page and its students' groups stay one query, so one D1 round trip.
  groups: sql<string>`(SELECT json_group_array(json_object('id', sg.id, 'name', sg.name, 'level', sg.level, 'schoolYear', sg.school_year)) FROM group_student gs INNER JOIN school_group sg ON sg.id = gs.group_id WHERE gs.student_id = "student"."id")`,
};

export const toStudent = (row: RowOf<typeof fields>): z.output<typeof StudentRecord> => ({
  ...timestamps(row),
  firstName: row.firstName,
  lastName: row.lastName,
  idNumber: row.idNumber,
  level: row.level,
  birthDate: row.birthDate,
  status: row.status,
  photo: row.photo,
  familyId: row.familyId,
  deletedAt: row.deletedAt,
  groups: parseJson(StudentGroups, row.groups).sort((a, b) => a.id - b.id),
});

export const studentResource = defineResource({
  name: "student",
  plural: "students",
  label: m`Student`,
  path: "/api/v1/student",
  tag: "People",
  scope: "school",
  data: Students,
  record: StudentRecord,
  view: { fields },
  toRecord: (_ctx, row) => toStudent(row),
  visibleTo,
  conflictMessage: m`Another student of this school has this id number`,
});
export const resource = studentResource;

/** An id filter in plain digits ("1e3", "0x10", "1.0" are 400s, as for path ids). */
const Id = recordId();

export const filters = {
  group: {
    schema: Id.optional().openapi({ description: "A group id: its students" }),
    where: (ctx, v) =>
      sql`EXISTS ${GroupStudents.select(ctx, { one: sql`1` }).where(eq(groupStudents.groupId, v), eq(groupStudents.studentId, students.id))}`,
    example: "1",
  } satisfies Filter<number>,
  route: {
    schema: Id.optional().openapi({ description: "A route id: the students riding it (any weekday)" }),
    where: (ctx, v) =>
      RouteStudents.exists(ctx, eq(routeStudents.routeId, v), eq(routeStudents.studentId, students.id)),
    example: "1",
  } satisfies Filter<number>,
  level: {
    schema: Level.optional(),
    where: (_ctx, v) => eq(students.level, v),
    example: "elementary",
  } satisfies Filter<(typeof LEVELS)[number]>,
  family: {
    schema: Id.optional().openapi({ description: "A family id" }),
    where: (_ctx, v) => eq(students.familyId, v),
    example: "1",
  } satisfies Filter<number>,
  status: {
    schema: Status.optional(),
    where: (_ctx, v) => eq(students.status, v),
    example: "active",
  } satisfies Filter<(typeof STATUSES)[number]>,
  name: {
    schema: searchTerm("Part of the first or last name"),
    where: (_ctx, term) => containsName(students.firstNameSearch, students.lastNameSearch, term),
    example: "Pablo",
  } satisfies Filter<string>,
  deleted: {
    schema: z
      .enum(["true", "false"])
      .optional()
      .openapi({
        description:
          "true: the school's deleted students instead (holders of student.read; to find whom to restore); " +
          "false (the default): the students not deleted",
      }),
    where: (_ctx, v) => (v === "true" ? isNotNull(students.deletedAt) : isNull(students.deletedAt)),
    example: "true",
  } satisfies Filter<"true" | "false">,
};

export const READ_DESCRIPTION =
  "Holders of student.read see the school's students; a parent (or their delegate today) the children they are " +
  "a guardian of or whose family they belong to; a teacher the students of their groups. Deleted students are not listed " +
  "or read; holders of student.read find them with the list's `deleted=true`.";

export const listStudents = resource.list({
  access: "member",
  context: readerContext,
  visibleTo: listVisibility,
  filters,
  sort: { lastName: students.lastName, createdAt: students.createdAt },
  summary: "List the current school's students (paginated), with filters",
  description: READ_DESCRIPTION,
});
export const getStudent = resource.get({ access: "member", context: readerContext, description: READ_DESCRIPTION });

const FirstName = text({ max: 100 }).openapi({ example: "Pablo" });
const LastName = text({ max: 100 }).openapi({ example: "Parent" });
const IdNumber = text({ max: 50 }).openapi({ example: "S-0042", description: "Unique in the school (409 if taken)" });

/** A family of this school, else 404 (another school's family does not exist here). */
async function checkFamily(ctx: SchoolCtx, familyId: number | null | undefined) {
  if (familyId === null || familyId === undefined) return;
  const found = await Families.find(ctx, familyId, { id: families.id });
  if (!found) throw notFound(m`Family ${familyId} not found`);
}

const created = resource.create({
  access: permissions.write,
  input: z.object({
    firstName: FirstName,
    lastName: LastName,
    level: Level.optional(),
    idNumber: IdNumber.optional(),
    birthDate: BirthDate.optional(),
    familyId: recordId().optional().openapi({ description: "A family of this school (404 otherwise)" }),
    status: Status.optional(),
  }),
  values: async (ctx, { body }) => {
    await checkInput(ctx, body);
    return body;
  },
  description:
    "A student belongs to at most one family (familyId). 409 when the id number is taken in the school; 422 for " +
    "a level the school does not offer or a birth date after today.",
  errors: [422],
  examples: { 422: "The birth date 2031-05-14 is after today" },
});

/**
 * What a move to another level, or a status other than active, decided again about the student's
 * exit permissions (prepared, then in the update's batch).
 */
const moved = new WeakMap<object, Redecision[]>();

const updated = resource.update({
  access: permissions.write,
  input: z.object({
    firstName: FirstName.optional(),
    lastName: LastName.optional(),
    level: Level.nullable().optional(),
    idNumber: IdNumber.nullable().optional(),
    birthDate: BirthDate.nullable().optional(),
    familyId: recordId().nullable().optional().openapi({ description: "A family of this school, or null" }),
    status: Status.optional(),
  }),
  values: async (ctx, { id, body }) => {
    await checkInput(ctx, body);
    if (typeof body.familyId === "number") await notInAnotherFamily(ctx, id, body.familyId);
    const again: Redecision[] = [];
    if (body.level !== undefined)
      again.push(await factChanged(ctx, { fact: "level", studentId: id, level: body.level }));
    if (body.status !== undefined && body.status !== "active")
      again.push(await factChanged(ctx, { fact: "student-status", studentId: id }));
    moved.set(body, again);
    return body;
  },
  also: (_ctx, { body }) => moved.get(body)?.flatMap((r) => r.statements) ?? [],
  description:
    "`familyId` puts the student in a family of this school (404 otherwise); a student already in another family " +
    "is a 409 (a student is in one family: set `familyId` to null first, so a move is never silent). 422 for a " +
    "level the school does not offer or a birth date after today. A new `level` withdraws, in the same write, the " +
    "student's exit permissions from today on that the rules refuse at that level (a route that does not serve it, " +
    "a day without school for it), gives their seats back and tells the family and the office. A `status` other " +
    "than active withdraws every exit permission of the student from today on the same way (`student-not-active`).",
  errors: [422],
  examples: {
    409: "Student 42 is already in another family (7); a student in two families is not allowed: take them out of it first",
    422: "The school does not offer the level high; it offers preschool, elementary, middle",
  },
});

/** The school's other systems hear of every new student (webhooks: `student.created`). */
export const createStudent = operation(created.route, async (ctx, input) => {
  const student = await created.run(ctx, input);
  await schoolEvent(ctx, { type: "student.created", data: { student } });
  return student;
});

export const updateStudent = operation(updated.route, async (ctx, input) => {
  await updated.run(ctx, input);
  for (const r of moved.get(input.body) ?? []) await r.dispatch();
  await schoolEvent(ctx, { type: "student.updated", data: { student: { id: input.params.id, changed: input.body } } });
});

const DAY_MS = 24 * 3600 * 1000;

/**
 * What the schema cannot tell: the family is this school's (404), the level one it offers (422),
 * the birth date not after today (422; a day's grace for the time zones ahead of UTC).
 */
async function checkInput(
  ctx: SchoolCtx,
  input: { familyId?: number | null; level?: (typeof LEVELS)[number] | null; birthDate?: string | null },
) {
  const latest = new Date(ctx.deps.clock.now().getTime() + DAY_MS).toISOString().slice(0, 10);
  if (input.birthDate && input.birthDate > latest) {
    throw unprocessable(m`The birth date ${input.birthDate} is after today`);
  }
  await Promise.all([checkFamily(ctx, input.familyId), input.level ? assertOffered(ctx, input.level) : undefined]);
}

/** A student joining `familyId` must be in no family (or already in that one), else 409 as the families module says. */
async function notInAnotherFamily(ctx: SchoolCtx, id: number, familyId: number) {
  const row = await Students.select(ctx, { familyId: students.familyId }, "write")
    .where(resource.scoped(ctx, eq(students.id, id), "write"))
    .first();
  if (!row) throw notFound(m`Student ${id} not found`);
  if (row.familyId !== null && row.familyId !== familyId) {
    throw conflict(
      m`Student ${id} is already in another family (${row.familyId}); a student in two families is not allowed: take them out of it first`,
    );
  }
}

// ------------------------------------------------------------------------------------ the export

export const exportStudents = resource.export({
  access: "member",
  context: readerContext,
  list: listStudents,
  filename: m`students.xlsx`,
  sheet: m`Students`,
  columns: [
    m`Id`,
    m`First name`,
    m`Last name`,
    m`Id number`,
    m`Level`,
    m`Birth date`,
    m`Status`,
    m`Family number`,
    m`Family`,
    m`Created at`,
  ],
  extra: {
    fields: () => ({ familyNumber: families.familyNumber, familyName: families.name }),
    join: (q) => q.leftJoin(Families, eq(families.id, students.familyId)),
  },
  cells: (_ctx, r) => [
    r.id,
    r.firstName,
    r.lastName,
    r.idNumber,
    r.level,
    r.birthDate,
    r.status,
    r.familyNumber,
    r.familyName,
    r.createdAt,
  ],
  description: `The list's filters, sort and visibility apply. ${READ_DESCRIPTION} The file is streamed as it is read.`,
  file: "An .xlsx workbook with one sheet, Students",
});
/** A student of this school the caller may write (404 otherwise), for the guardian routes. */
export const findStudent = (ctx: SchoolCtx, id: number) => resource.find(ctx, id);
