/**
 * Teachers: the people who hold the built-in teacher role in the current school, with their
 * teacher profile (subjects, employee number). The resource's `id` is the profile's, `userId` the
 * person's. What creating, editing and removing one does: src/modules/teacher/staff.ts.
 */
import { z } from "@hono/zod-openapi";
import { Teachers, teachers } from "../../db/schema/teacher";
import type { Ctx } from "../../lib/context";
import { m, zodMessage } from "../../lib/message";
import { defineResource, RecordBase } from "../../lib/resource";
import { contains } from "../../lib/search";
import { SAFE_TEXT, text, UNSAFE_TEXT } from "../../lib/text";
import { permissions } from "./permissions";
import {
  joinPerson,
  notRemovedHere,
  PersonRecord,
  personFields,
  personFilters,
  personRecord,
  staffCells,
  staffColumns,
  staffOperations,
} from "./staff";

const Subject = text({ max: 50 }).openapi({ example: "Math" });
const Subjects = z
  .array(Subject)
  .max(20)
  .refine((s) => new Set(s).size === s.length, zodMessage(m`Each subject once`))
  .openapi({
    uniqueItems: true,
    description: "Up to 20 subjects of at most 50 characters, each once",
    example: ["Math", "Physics"],
  });

const Record = RecordBase.extend({
  ...PersonRecord,
  subjects: z.array(z.string()).openapi({ example: ["Math", "Physics"], description: "What they teach" }),
  employeeNumber: z.string().nullable().openapi({ example: "T-0042" }),
}).openapi({ description: "`id` is the teacher profile's; `userId` the person's" });

const likeEscaped = (v: string) => v.replace(/[\\%_]/g, (ch) => `\\${ch}`);
const bytes = (v: string) => new TextEncoder().encode(v).length;

/** The subjects column's array (anything else reads as none). */
const parseSubjects = (stored: unknown): string[] => (Array.isArray(stored) ? stored.map(String) : []);

export const teacherResource = defineResource({
  name: "teacher",
  plural: "teachers",
  label: m`Teacher`,
  path: "/api/v1/teacher",
  tag: "People",
  scope: "school",
  data: Teachers,
  record: Record,
  view: {
    fields: {
      id: teachers.id,
      createdAt: teachers.createdAt,
      updatedAt: teachers.updatedAt,
      userId: teachers.userId,
      ...personFields(),
      subjects: teachers.subjects,
      employeeNumber: teachers.employeeNumber,
    },
    join: joinPerson(teachers),
  },
  toRecord: (ctx, row) => ({
    ...personRecord(ctx, row),
    subjects: parseSubjects(row.subjects),
    employeeNumber: row.employeeNumber,
  }),
  visibleTo: (ctx) => notRemovedHere(ctx, teachers),
  conflictMessage: m`This person is already a teacher of this school, or the employee number is taken`,
});

const resource = teacherResource;

const filters = {
  ...personFilters(teachers),
  subject: {
    schema: z
      .string()
      .min(1)
      .regex(SAFE_TEXT, UNSAFE_TEXT)
      // The LIKE pattern (the JSON string, LIKE-escaped, between %) within D1's 50 bytes.
      .refine(
        (v) => bytes(likeEscaped(JSON.stringify(v))) + 2 <= 50,
        zodMessage(m`Too long to search: at most 46 bytes`),
      )
      .optional()
      .openapi({ description: "A subject the teacher teaches (the whole subject; ASCII letters in any case)" }),
    // The stored JSON array holds each subject as a JSON string: `"Math"` matches Math, never Mathematics.
    // A LIKE over the row the school's index found (no json_each virtual table per row).
    where: (_ctx: Ctx, subject: string) => contains(teachers.subjectsSearch, JSON.stringify(subject)),
    example: "Math",
  },
};

export const listTeachers = resource.list({
  access: permissions.read,
  filters,
  summary: "List the current school's teachers (paginated), oldest first",
});

export const getTeacher = resource.get({ access: permissions.read });

const staff = staffOperations(resource, {
  role: "teacher",
  write: permissions.write,
  entity: "teacher",
  field: { key: "subjects", schema: Subjects },
  profile: ({ value, employeeNumber }) => ({ subjects: value, employeeNumber }),
  create: {
    summary: "Make a person a teacher of the current school",
    description:
      "with the teacher's `subjects` and `employeeNumber`. 409 if they already teach here, or the employee number is taken.",
    created: "The new teacher",
  },
  update: { summary: "Update a teacher: the person's name or email, subjects, employee number" },
  remove: { summary: "Remove a teacher (the teacher role here; the user stays)" },
});

export const createTeacher = staff.create;
export const updateTeacher = staff.update;
export const deleteTeacher = staff.delete;
export const exportTeachers = resource.export({
  access: permissions.read,
  list: listTeachers,
  filename: m`teachers.xlsx`,
  sheet: m`Teachers`,
  columns: staffColumns(m`Subjects`),
  cells: (ctx, row) => {
    const r = resource.toRecord(ctx, row);
    return staffCells(r, r.subjects.join(", "));
  },
  summary: "Export the current school's teachers to Excel (.xlsx), with the list's filters",
  file: "An .xlsx workbook with one sheet of teachers, oldest first (streamed)",
});
