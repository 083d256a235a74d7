/**
 * The groups importer: one row per group (name, level, school year, grade) with its teachers (by
 * phone, teachers of this school) and students (by the school's id number). Run by the bulk
 * consumer; reading, row errors and batching are sheet.ts's.
 *
 * Matching: a group by (school year, name), created or updated where its level or grade differs;
 * its teachers and students are added (links already there stay; none is taken away). Row errors:
 * a teacher or student the school does not have, a level the school does not offer, the same group
 * in an earlier row. Each batch is one read and one `batch()` of `json_each` statements.
 */
import { z } from "@hono/zod-openapi";
import { readRow } from "../../db/query";
import { Schools, schools } from "../../db/schema/core";
import { GroupStudents, Groups, GroupTeachers, groupStudents, groups, groupTeachers } from "../../db/schema/group";
import { Students } from "../../db/schema/student";
import { Teachers } from "../../db/schema/teacher";
import { eq, type SQL, sql } from "../../db/sql";
import { runBatch, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { fold } from "../../lib/fold";
import { parseJson } from "../../lib/json";
import type { Level } from "../../lib/levels";
import { type Message, m, zodMessage } from "../../lib/message";
import type { Cell } from "../../lib/xlsx";
import { readLevels } from "../school/api";
import { batchWrites } from "./batch-writes";
import { levelField, phoneField } from "./family-import";
import { type Column, type FieldError, type ImportResult, importSheet, notOffered, type Ready } from "./sheet";

/** At most this many teachers and students in one row. */
const MAX_TEACHERS = 20;
const MAX_STUDENTS = 200;

type Field = "name" | "level" | "schoolYear" | "grade" | "teacherPhones" | "studentIdNumbers";

export const GROUP_COLUMNS: Column<Field>[] = [
  { field: "name", header: m`Name`, names: ["name", "group", "groupname", "nombre", "grupo"], required: true },
  { field: "level", header: m`Level`, names: ["level", "nivel"], required: true },
  {
    field: "schoolYear",
    header: m`School year`,
    names: ["schoolyear", "year", "cicloescolar", "ciclo", "anoescolar"],
    required: true,
  },
  { field: "grade", header: m`Grade`, names: ["grade", "grado"] },
  {
    field: "teacherPhones",
    header: m`Teacher phones`,
    names: ["teacherphones", "teachers", "telefonosdocentes", "telefonosmaestros", "maestros", "docentes"],
  },
  {
    field: "studentIdNumbers",
    header: m`Student id numbers`,
    names: ["studentidnumbers", "students", "matriculas", "alumnos", "estudiantes"],
  },
];

export const GROUP_EXAMPLE: Cell[] = ["3A", "elementary", "2026-2027", 3, "+52 55 1234 5678", "A-0001, A-0002"];

const list = (max: number, tooMany: Message) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const items = [
        ...new Set(
          (v ?? "")
            .split(/[,;\n]/)
            .map((s) => s.trim())
            .filter(Boolean),
        ),
      ];
      if (items.length > max) {
        ctx.addIssue({ code: "custom", message: tooMany.render() });
        return z.NEVER;
      }
      return items;
    });

const GroupRow = z.object({
  name: z.string().trim().min(1, zodMessage(m`Required`)).max(100),
  level: levelField(true),
  schoolYear: z
    .string()
    .trim()
    .refine(
      (y) => /^\d{4}-\d{4}$/.test(y) && Number(y.slice(5)) === Number(y.slice(0, 4)) + 1,
      zodMessage(m`Expected a school year like 2026-2027`),
    ),
  grade: z
    .string()
    .trim()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === "") return undefined;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 12) {
        ctx.addIssue({ code: "custom", message: m`Expected a whole number from 1 to 12`.render() });
        return z.NEVER;
      }
      return n;
    }),
  teacherPhones: list(MAX_TEACHERS, m`At most ${MAX_TEACHERS} teachers, comma-separated`).pipe(
    z.array(z.string()).transform((phones, ctx) => {
      const out: string[] = [];
      for (const p of phones) {
        const parsed = phoneField.safeParse(p);
        if (!parsed.success) {
          ctx.addIssue({ code: "custom", message: m`${p} is not a phone number with its country code`.render() });
          return z.NEVER;
        }
        out.push(parsed.data);
      }
      return [...new Set(out)];
    }),
  ),
  studentIdNumbers: list(MAX_STUDENTS, m`At most ${MAX_STUDENTS} students, comma-separated`),
});
type GroupRow = z.infer<typeof GroupRow>;

/** [name, level, schoolYear, grade, teacher phones, student id numbers] */
type Values = [string, Level, string, number | null, string[], string[]];

/** Imports a groups file for the process in `ctx` (an import context). */
export async function importGroups(ctx: SchoolCtx, processId: number, bytes: Uint8Array): Promise<ImportResult> {
  const seen = new Set<string>();
  return importSheet<Field, GroupRow, Values>(bytes, {
    columns: GROUP_COLUMNS,
    schema: GroupRow,
    accept: (v, row) => {
      // A name is the year's group whatever its case or accents ("4a" is "4A").
      const key = `${v.schoolYear}\u0000${fold(v.name)}`;
      if (seen.has(key)) {
        return [
          {
            row,
            column: "name",
            message: m`Group ${v.name} of ${v.schoolYear} is already in an earlier row of the file`,
          },
        ];
      }
      // Required by the schema (levelField(true) refuses a missing level): this narrows its type.
      const level = v.level;
      if (level === undefined) return [{ row, column: "level", message: m`Required` }];
      seen.add(key);
      return {
        values: [v.name, level, v.schoolYear, v.grade ?? null, v.teacherPhones, v.studentIdNumbers],
      };
    },
    write: (batch, addError) => writeBatch(ctx, processId, batch, addError),
  });
}

/** The tables under the names the batch's SQL gives them, each with its own tenant condition. */
const g = Groups.alias("g");
const t = Teachers.alias("t");
const s = Students.alias("s");
const xTeacher = Teachers.alias("x");
const xStudent = Students.alias("x");
const lTeacher = GroupTeachers.alias("l");
const lStudent = GroupStudents.alias("l");
const Names = z.array(z.string());

async function writeBatch(
  ctx: SchoolCtx,
  processId: number,
  batch: Ready<Values>[],
  addError: (e: FieldError) => void,
): Promise<number> {
  const now = ctx.deps.clock.now().toISOString();

  // One read: the school's levels, which phones are teachers here, which id numbers are students.
  const phonesJson = JSON.stringify([...new Set(batch.flatMap((r) => r.values[4]))]);
  const idsJson = JSON.stringify([...new Set(batch.flatMap((r) => r.values[5]))]);
  const answer = await readRow<{ levels: string; teachers: string; students: string }>(
    ctx,
    sql`
    SELECT
      (${Schools.pick(ctx, schools.levels, eq(schools.id, ctx.schoolId))}) AS levels,
      (SELECT json_group_array(u.phone) FROM json_each(${phonesJson}) j CROSS JOIN user u ON u.phone = j.value
        ${t.joinOn(ctx, sql`t.user_id = u.id`, "CROSS JOIN")}) AS teachers,
      (SELECT json_group_array(s.id_number) FROM json_each(${idsJson}) j
        ${s.joinOn(ctx, sql`s.id_number = j.value AND s.deleted_at IS NULL`, "CROSS JOIN")}) AS students`,
  );
  const levels = readLevels(answer?.levels ?? "[]");
  const teachers = new Set(parseJson(Names, answer?.teachers ?? "[]"));
  const students = new Set(parseJson(Names, answer?.students ?? "[]"));
  const ok: Ready<Values>[] = [];
  for (const r of batch) {
    const [, level, , , phones, ids] = r.values;
    const errors: FieldError[] = [];
    if (!levels.includes(level)) errors.push(notOffered(r.row, level, levels));
    const unknownTeachers = phones.filter((p) => !teachers.has(p));
    if (unknownTeachers.length) {
      errors.push({
        row: r.row,
        column: "teacherPhones",
        message: m`Not teachers of this school: ${unknownTeachers.join(", ")}`,
      });
    }
    const unknownStudents = ids.filter((id) => !students.has(id));
    if (unknownStudents.length) {
      errors.push({
        row: r.row,
        column: "studentIdNumbers",
        message: m`No student of this school has the id number ${unknownStudents.join(", ")}`,
      });
    }
    if (errors.length) for (const e of errors) addError(e);
    else ok.push(r);
  }
  if (ok.length === 0) return 0;

  // Each row's values, then the search copy of the group's name (6).
  const rows = JSON.stringify(ok.map((r) => [...r.values, fold(r.values[0])]));
  const { progress } = batchWrites(ctx, processId, now);
  // The year's group of that name whatever its case or accents (the row's search copy, 6).
  const groupOf = g.joinOn(ctx, sql`g.school_year = j.value->>2 AND g.name_search = j.value->>6`, "CROSS JOIN");
  const differs = sql`(g.level IS NOT j.value->>1 OR (j.value->>3 IS NOT NULL AND g.grade IS NOT j.value->>3))`;
  const links = (
    table: "group_teacher" | "group_student",
    column: "teacher_id" | "student_id",
    index: number,
    join: SQL,
  ) => {
    /** The links of the rows, as the batch wrote them. */
    const written = (l: typeof lTeacher | typeof lStudent) =>
      sql`FROM json_each(${rows}) j ${groupOf} CROSS JOIN json_each(j.value, ${`$[${index}]`}) m ${join}
        ${l.joinOn(ctx, sql`l.group_id = g.id AND l.${sql.identifier(column)} = x.id`, "CROSS JOIN")}
        WHERE l.created_at = ${now}`;
    return [
      table === "group_teacher"
        ? GroupTeachers.insertFrom(
            ctx,
            (
              row,
            ) => sql`SELECT ${row({ groupId: sql`g.id`, teacherId: sql`x.id` })} FROM json_each(${rows}) j ${groupOf}
              CROSS JOIN json_each(j.value, ${`$[${index}]`}) m ${join} WHERE true`,
            now,
          ).onConflictDoNothing({ target: [groupTeachers.groupId, groupTeachers.teacherId] })
        : GroupStudents.insertFrom(
            ctx,
            (
              row,
            ) => sql`SELECT ${row({ groupId: sql`g.id`, studentId: sql`x.id` })} FROM json_each(${rows}) j ${groupOf}
              CROSS JOIN json_each(j.value, ${`$[${index}]`}) m ${join} WHERE true`,
            now,
          ).onConflictDoNothing({ target: [groupStudents.groupId, groupStudents.studentId] }),
      // Each link written, audited as created.
      table === "group_teacher"
        ? lTeacher.auditRows(ctx, written(lTeacher), { created: ["groupId", "teacherId"] }, now)
        : lStudent.auditRows(ctx, written(lStudent), { created: ["groupId", "studentId"] }, now),
    ];
  };
  const teacherJoin = sql`CROSS JOIN user u ON u.phone = m.value ${xTeacher.joinOn(ctx, sql`x.user_id = u.id`, "CROSS JOIN")}`;
  const studentJoin = xStudent.joinOn(ctx, sql`x.id_number = m.value AND x.deleted_at IS NULL`, "CROSS JOIN");

  const statements: [Statement, ...Statement[]] = [
    g.auditRows(
      ctx,
      sql`FROM json_each(${rows}) j ${groupOf} WHERE ${differs}`,
      {
        action: "update",
        changes: {
          level: { old: sql`g.level`, new: sql`j.value->>1`, ifChanged: true },
          grade: { old: sql`g.grade`, new: sql`j.value->>3`, ifChanged: "given" },
        },
      },
      now,
    ),
    Groups.insertFrom(
      ctx,
      (row) =>
        sql`SELECT ${row({ name: sql`j.value->>0`, level: sql`j.value->>1`, schoolYear: sql`j.value->>2`, grade: sql`j.value->>3`, nameSearch: sql`j.value->>6` })}
          FROM json_each(${rows}) j WHERE true`,
      now,
    ).onConflictDoUpdate({
      // An existing group keeps its name as spelt.
      target: Groups.schoolKey(groups.schoolYear, groups.nameSearch),
      set: {
        level: sql`excluded.level`,
        grade: sql`COALESCE(excluded.grade, "school_group"."grade")`,
        updatedAt: now,
      },
      setWhere: sql`"school_group"."level" IS NOT excluded.level
          OR (excluded.grade IS NOT NULL AND "school_group"."grade" IS NOT excluded.grade)`,
    }),
    g.auditRows(
      ctx,
      sql`FROM json_each(${rows}) j ${groupOf} WHERE g.created_at = ${now}`,
      { created: ["name", "level", "schoolYear", "grade"] },
      now,
    ),
    ...links("group_teacher", "teacher_id", 4, teacherJoin),
    ...links("group_student", "student_id", 5, studentJoin),
    progress(ok.length),
  ];
  await runBatch(ctx, statements);
  return ok.length;
}
