/**
 * Teachers: the people who hold the built-in teacher role in the current school, with their
 * teacher profile (subjects, employee number). The resource's `id` is the profile's, `userId` the
 * person's. What creating, editing and removing one does: src/modules/teacher/staff.ts.
 */
import { z } from "@hono/zod-openapi";
import { ctxOf } from "../../lib/context";
import { defineResource, IdParams, nonEmpty, RecordBase } from "../../lib/resource";
import { defineRoute, json, jsonBody, noContent, operation } from "../../lib/route";
import { contains } from "../../lib/search";
import { SAFE_TEXT, text, UNSAFE_TEXT_MESSAGE } from "../../lib/text";
import { permissions } from "./permissions";
import { teachers } from "./schema";
import {
  createBody,
  createStaff,
  EmployeeNumber,
  joinPerson,
  notRemoved,
  PersonRecord,
  personFields,
  personFilters,
  personUpdate,
  removeStaff,
  updateStaff,
} from "./staff";

const Subject = text({ max: 50 }).openapi({ example: "Math" });
const Subjects = z
  .array(Subject)
  .max(20)
  .refine((s) => new Set(s).size === s.length, "Each subject once")
  .openapi({ description: "Up to 20 subjects of at most 50 characters, each once", example: ["Math", "Physics"] });

const Record = RecordBase.extend({
  ...PersonRecord,
  subjects: z.array(z.string()).openapi({ example: ["Math", "Physics"] }),
  employeeNumber: z.string().nullable().openapi({ example: "T-0042" }),
}).openapi({ description: "`id` is the teacher profile's; `userId` the person's" });

const likeEscaped = (v: string) => v.replace(/[\\%_]/g, (ch) => `\\${ch}`);
const bytes = (v: string) => new TextEncoder().encode(v).length;

const parseSubjects = (json: string): string[] => {
  try {
    const value = JSON.parse(json) as unknown;
    return Array.isArray(value) ? value.map(String) : [];
  } catch {
    return [];
  }
};

export const teacherResource = defineResource({
  name: "teacher",
  plural: "teachers",
  label: "Teacher",
  entity: "teacher",
  path: "/api/v1/teacher",
  tag: "People",
  scope: "school",
  table: teachers,
  record: Record,
  view: {
    fields: { ...personFields(teachers), subjects: teachers.subjects, employeeNumber: teachers.employeeNumber },
    join: joinPerson(teachers),
  },
  toRecord: (row) => ({
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    userId: row.userId,
    firstName: row.firstName,
    lastName: row.lastName,
    email: row.email,
    phone: row.phone,
    status: row.status,
    language: row.language,
    subjects: parseSubjects(row.subjects),
    employeeNumber: row.employeeNumber,
  }),
  visibleTo: () => notRemoved(teachers),
  conflictMessage: "This person is already a teacher of this school, or the employee number is taken",
});

const resource = teacherResource;

const filters = {
  ...personFilters(teachers),
  subject: {
    schema: z
      .string()
      .min(1)
      .regex(SAFE_TEXT, UNSAFE_TEXT_MESSAGE)
      // The LIKE pattern (the JSON string, LIKE-escaped, between %) within D1's 50 bytes.
      .refine((v) => bytes(likeEscaped(JSON.stringify(v))) + 2 <= 50, "Too long to search: at most 46 bytes")
      .optional()
      .openapi({ description: "A subject the teacher teaches (the whole subject; ASCII letters in any case)" }),
    // The stored JSON array holds each subject as a JSON string: `"Math"` matches Math, never Mathematics.
    // A LIKE over the row the school's index found (no json_each virtual table per row).
    where: (subject: string) => contains(teachers.subjects, JSON.stringify(subject)),
    example: "Math",
  },
};

export const listTeachers = resource.list({
  access: permissions.read,
  filters,
  summary: "List the current school's teachers (paginated), oldest first",
});

export const getTeacher = resource.get({ access: permissions.read });

const CreateBody = createBody({
  subjects: Subjects.optional(),
  employeeNumber: EmployeeNumber.optional(),
});

export const createTeacher = operation(
  defineRoute({
    method: "post",
    path: "/api/v1/teacher",
    tag: "People",
    operationId: "createTeacher",
    summary: "Make a person a teacher of the current school",
    description:
      "Send `userId` (one of this school's people) or `phone` and `firstName` (anyone: the same user when the " +
      "number is known, in any school, keeping their name; a new invited user when not), with the teacher's " +
      "`subjects` and `employeeNumber`. 409 if they already teach here, or the employee number is taken.",
    access: permissions.write,
    audit: "teacher",
    errors: [409],
    request: { body: jsonBody(CreateBody, "TeacherCreate") },
    responses: { 201: json(resource.record, "The new teacher") },
  }),
  async (c) => {
    const { subjects, employeeNumber, ...person } = c.req.valid("json");
    const profile = {
      ...(subjects !== undefined ? { subjects: JSON.stringify(subjects) } : {}),
      ...(employeeNumber !== undefined ? { employeeNumber } : {}),
    };
    const record = await createStaff(ctxOf(c), resource, "teacher", person, profile);
    return c.json(record as z.infer<typeof Record>, 201);
  },
);

const UpdateBody = nonEmpty(
  z.strictObject({
    ...personUpdate,
    subjects: Subjects.optional(),
    employeeNumber: EmployeeNumber.nullable().optional(),
  }),
);

export const updateTeacher = operation(
  defineRoute({
    method: "put",
    path: "/api/v1/teacher/{id}",
    tag: "People",
    operationId: "updateTeacher",
    summary: "Update a teacher: the person's name or email, subjects, employee number",
    description:
      "The name and email are the person's (the same user wherever they belong). 409: employee number taken.",
    access: permissions.write,
    audit: "teacher",
    errors: [409],
    request: { params: IdParams, body: jsonBody(UpdateBody, "TeacherUpdate") },
    responses: { 204: noContent },
  }),
  async (c) => {
    const { subjects, employeeNumber, ...person } = c.req.valid("json");
    const profile = {
      ...(subjects !== undefined ? { subjects: JSON.stringify(subjects) } : {}),
      ...(employeeNumber !== undefined ? { employeeNumber } : {}),
    };
    await updateStaff(ctxOf(c), resource, c.req.valid("param").id, person, profile);
    return c.body(null, 204);
  },
);

export const deleteTeacher = operation(
  defineRoute({
    method: "delete",
    path: "/api/v1/teacher/{id}",
    tag: "People",
    operationId: "deleteTeacher",
    summary: "Remove a teacher (the teacher role here; the user stays)",
    access: permissions.write,
    audit: "teacher",
    request: { params: IdParams },
    responses: { 204: noContent },
  }),
  async (c) => {
    await removeStaff(ctxOf(c), resource, c.req.valid("param").id, "teacher");
    return c.body(null, 204);
  },
);

export const exportTeachers = resource.export({
  access: permissions.read,
  list: listTeachers,
  filename: "teachers.xlsx",
  sheet: "Teachers",
  columns: [
    "Id",
    "User id",
    "First name",
    "Last name",
    "Phone",
    "Email",
    "Status",
    "Language",
    "Subjects",
    "Employee number",
    "Created at",
  ],
  cells: (row, ctx) => {
    const t = resource.toRecord(row, ctx);
    return [
      t.id,
      t.userId,
      t.firstName,
      t.lastName,
      t.phone,
      t.email,
      t.status,
      t.language,
      t.subjects.join(", "),
      t.employeeNumber,
      t.createdAt,
    ];
  },
  summary: "Export the current school's teachers to Excel (.xlsx), with the list's filters",
  file: "An .xlsx workbook with one sheet of teachers, oldest first (streamed)",
});
