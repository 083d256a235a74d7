/**
 * The families importer: one row per student, with the student's family and up to two parents.
 * Run by the bulk consumer; reading, row errors and batching are sheet.ts's.
 *
 * Matching: a family by its number (created, or renamed when the name differs); a student by the
 * school's id number among students not deleted (created, or updated where a value differs: a
 * re-import never duplicates; a deleted student's number goes to a new student);
 * a parent by phone (one person, one user: a new phone is an invited user; a known one keeps its
 * user row, the school getting its own copy of the row's name when it did not know them), given the parent role (`role_user`; its triggers write the membership and the parent
 * profile) and put in the family; a guardian row links each parent to the row's student.
 *
 * Row errors: a student or parent already in ANOTHER family (in the school, or in an earlier row of
 * the file), a deleted account, a student id number in an earlier row, and a parent
 * beyond the school's parent limit per family (`parentLimit`, the families module's rule).
 *
 * Each batch is one read and one `batch()` whose statements take the batch as JSON (`json_each`);
 * the writes are guarded as well (a student or parent in another family is never moved).
 */
import { z } from "@hono/zod-openapi";
import { unseenUsers } from "../../db/anchors";
import { readRow } from "../../db/query";
import { RoleUsers, Schools, schools } from "../../db/schema/core";
import { Families, families } from "../../db/schema/family";
import { Parents, parents } from "../../db/schema/parent";
import { Guardians, guardians, Students, students } from "../../db/schema/student";
import { eq, type SQL, sql } from "../../db/sql";
import type { Change } from "../../db/table";
import { runBatch, type Statement } from "../../db/write";
import { BUILTIN_ROLES } from "../../lib/access";
import type { SchoolCtx } from "../../lib/context";
import { dateOutOfRange, isSchoolDate } from "../../lib/dates";
import { fold } from "../../lib/fold";
import { parseJson } from "../../lib/json";
import { LEVELS, type Level } from "../../lib/levels";
import { addIssue, m, zodMessage } from "../../lib/message";
import { normalizePhone } from "../../lib/phone";
import { type Cell, excelDate } from "../../lib/xlsx";
import { calendarDate } from "../../lib/zoned-time";
import { DEFAULT_PARENT_LIMIT, parentLimit } from "../family/api";
import { readLevels } from "../school/api";
import { batchWrites } from "./batch-writes";
import { LEVEL_NAMES, RELATIONSHIP_NAMES, RELATIONSHIPS, type Relationship, relationshipOf } from "./family-names";
import { type Column, type FieldError, type ImportResult, importSheet, norm, notOffered, type Ready } from "./sheet";

/** The role the families import gives the parents it finds (the upload checks the right to give it). */
export const FAMILY_ROLE = "parent" as const;

const text = (max: number) => z.string().trim().max(max);
const optional = (max: number) =>
  text(max)
    .optional()
    .transform((v) => (v === "" ? undefined : v));

export const phoneField = z.string().transform((value, ctx) => {
  const phone = normalizePhone(value);
  if (phone === null) {
    addIssue(ctx, m`Not a phone number with its country code (like +52 55 1234 5678)`);
    return z.NEVER;
  }
  return phone;
});

/** A level by its English or Spanish name. */
export const levelField = (required: boolean) =>
  optional(40).transform((v, ctx) => {
    if (v === undefined) {
      if (required) addIssue(ctx, m`Required`);
      return required ? z.NEVER : undefined;
    }
    const level = LEVEL_NAMES[norm(v)];
    if (!level) {
      addIssue(ctx, m`Expected one of ${LEVELS.join(", ")}`);
      return z.NEVER;
    }
    return level;
  });

/** YYYY-MM-DD, DD/MM/YYYY, or a date cell (an Excel serial number), in the range of src/lib/dates.ts. */
const dateField = optional(20).transform((v, ctx) => {
  if (v === undefined) return undefined;
  let date: string | undefined;
  if (/^\d{1,5}$/.test(v)) date = excelDate(Number(v));
  else if (/^\d{4}-\d{2}-\d{2}$/.test(v)) date = v;
  else {
    const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(v);
    if (m) date = `${m[3]}-${m[2]?.padStart(2, "0")}-${m[1]?.padStart(2, "0")}`;
  }
  if (date && isSchoolDate(date)) return date;
  addIssue(ctx, date && calendarDate(date) ? dateOutOfRange() : m`Not a date (YYYY-MM-DD or DD/MM/YYYY)`);
  return z.NEVER;
});

const relationshipField = optional(40).transform((v, ctx) => {
  if (v === undefined) return undefined;
  const r = RELATIONSHIP_NAMES[norm(v)];
  if (!r) {
    addIssue(ctx, m`Expected one of ${RELATIONSHIPS.join(", ")}`);
    return z.NEVER;
  }
  return r;
});

type Field =
  | "familyNumber"
  | "familyName"
  | "studentIdNumber"
  | "studentFirstName"
  | "studentLastName"
  | "level"
  | "birthDate"
  | `parent${1 | 2}${"Phone" | "FirstName" | "LastName" | "Relationship"}`;

const parentColumns = (n: 1 | 2): Column<Field>[] => {
  const es = ["padre", "tutor", "papa", "madre"].flatMap((w) => [`${w}${n}`]);
  return [
    {
      field: `parent${n}Phone`,
      header: m`Parent ${n} phone`,
      names: [`parent${n}phone`, ...es.map((w) => `telefono${w}`), ...es.map((w) => `celular${w}`)],
    },
    {
      field: `parent${n}FirstName`,
      header: m`Parent ${n} first name`,
      names: [`parent${n}firstname`, `parent${n}name`, ...es.map((w) => `nombre${w}`)],
    },
    {
      field: `parent${n}LastName`,
      header: m`Parent ${n} last name`,
      names: [`parent${n}lastname`, ...es.map((w) => `apellido${w}`), ...es.map((w) => `apellidos${w}`)],
    },
    {
      field: `parent${n}Relationship`,
      header: m`Parent ${n} relationship`,
      names: [`parent${n}relationship`, ...es.map((w) => `parentesco${w}`)],
    },
  ];
};

export const FAMILY_COLUMNS: Column<Field>[] = [
  {
    field: "familyNumber",
    header: m`Family number`,
    names: ["familynumber", "family", "numerodefamilia", "numerofamilia", "nofamilia", "familia"],
    required: true,
  },
  {
    field: "familyName",
    header: m`Family name`,
    names: ["familyname", "nombredefamilia", "nombrefamilia"],
    required: true,
  },
  {
    field: "studentIdNumber",
    header: m`Student id number`,
    names: ["studentidnumber", "studentid", "idnumber", "matricula", "matriculaalumno", "numerodealumno"],
    required: true,
  },
  {
    field: "studentFirstName",
    header: m`Student first name`,
    names: ["studentfirstname", "studentname", "nombrealumno", "nombredelalumno", "nombreestudiante"],
    required: true,
  },
  {
    field: "studentLastName",
    header: m`Student last name`,
    names: ["studentlastname", "apellidoalumno", "apellidosalumno", "apellidosdelalumno", "apellidosestudiante"],
    required: true,
  },
  { field: "level", header: m`Level`, names: ["level", "nivel"] },
  { field: "birthDate", header: m`Birth date`, names: ["birthdate", "dateofbirth", "fechadenacimiento", "nacimiento"] },
  ...parentColumns(1),
  ...parentColumns(2),
];

const parentShape = (n: 1 | 2) => ({
  [`parent${n}Phone`]: optional(40).pipe(phoneField.optional()),
  [`parent${n}FirstName`]: optional(100),
  [`parent${n}LastName`]: optional(100),
  [`parent${n}Relationship`]: relationshipField,
});

const FamilyRow = z
  .object({
    familyNumber: text(50).min(1, zodMessage(m`Required`)),
    familyName: text(200).min(1, zodMessage(m`Required`)),
    studentIdNumber: text(40).min(1, zodMessage(m`Required`)),
    studentFirstName: text(100).min(1, zodMessage(m`Required`)),
    studentLastName: text(100).min(1, zodMessage(m`Required`)),
    level: levelField(false),
    birthDate: dateField,
    ...parentShape(1),
    ...parentShape(2),
  })
  .superRefine((v, ctx) => {
    const row: Record<string, string | undefined> = v;
    for (const n of [1, 2]) {
      const given = ["FirstName", "LastName", "Relationship"].find((k) => row[`parent${n}${k}`] !== undefined);
      if (row[`parent${n}Phone`] === undefined && given) {
        addIssue(ctx, m`Required with parent ${n}'s other cells`, [`parent${n}Phone`]);
      }
    }
    if (row.parent1Phone !== undefined && row.parent1Phone === row.parent2Phone) {
      addIssue(ctx, m`The same phone as parent 1`, ["parent2Phone"]);
    }
  });
type FamilyRow = z.infer<typeof FamilyRow>;

export const FAMILY_EXAMPLE: Cell[] = [
  "F-0001",
  "García López",
  "A-0001",
  "Pablo",
  "García López",
  "elementary",
  "2018-05-14",
  "+52 55 1234 0001",
  "María",
  "López",
  "mother",
  "+52 55 1234 0002",
  "Juan",
  "García",
  "father",
];

/** [phone, firstName, lastName, relationship | null] */
type ParentValues = [string, string, string, Relationship | null];
/** [familyNumber, familyName, idNumber, firstName, lastName, level, birthDate, parents] */
type Values = [string, string, string, string, string, Level | null, string | null, ParentValues[]];

/** Imports a families file for the process in `ctx` (an import context). */
export async function importFamilies(ctx: SchoolCtx, processId: number, bytes: Uint8Array): Promise<ImportResult> {
  const idNumbers = new Set<string>();
  /**
   * The family (number) each parent phone joined in an earlier row of the file. Numbers are
   * compared by their fold: "f-0001" is family "F-0001" (in the file and in the school).
   */
  const parentFamily = new Map<string, string>();
  /** Each family's parent phones (by folded number): in the database, plus those accepted from the file. */
  const familyParents = new Map<string, Set<string>>();
  return importSheet<Field, FamilyRow, Values>(bytes, {
    columns: FAMILY_COLUMNS,
    schema: FamilyRow,
    accept: (v, row) => {
      if (idNumbers.has(v.studentIdNumber)) {
        return [
          {
            row,
            column: "studentIdNumber",
            message: m`Student ${v.studentIdNumber} is already in an earlier row of the file`,
          },
        ];
      }
      const r: Record<string, string | undefined> = v;
      const parents: ParentValues[] = [];
      const errors: FieldError[] = [];
      for (const n of [1, 2]) {
        const phone = r[`parent${n}Phone`];
        if (phone === undefined) continue;
        const other = parentFamily.get(phone);
        if (other !== undefined && fold(other) !== fold(v.familyNumber)) {
          errors.push({
            row,
            column: `parent${n}Phone`,
            message: m`${phone} is in family ${other} in an earlier row; a parent is in one family`,
          });
        }
        parents.push([
          phone,
          r[`parent${n}FirstName`] ?? "",
          r[`parent${n}LastName`] ?? "",
          relationshipOf(r[`parent${n}Relationship`]),
        ]);
      }
      if (errors.length) return errors;
      idNumbers.add(v.studentIdNumber);
      return {
        values: [
          v.familyNumber,
          v.familyName,
          v.studentIdNumber,
          v.studentFirstName,
          v.studentLastName,
          v.level ?? null,
          v.birthDate ?? null,
          parents,
        ],
      };
    },
    write: (batch, addError) => writeBatch(ctx, processId, batch, addError, { parentFamily, familyParents }),
  });
}

/** The tables under the names the batch's SQL gives them, each with its own tenant condition. */
const f = Families.alias("f");
const s = Students.alias("s");
const p = Parents.alias("p");
const ru = RoleUsers.alias("ru");
const g = Guardians.alias("g");

/** What the batch's one read answers, as JSON arrays: [folded number, its parents' phones]. */
const Phones = z.array(z.string());
const FamiliesRead = z.array(z.tuple([z.string(), z.union([z.string(), Phones])]));
/** [phone, deleted, holds the parent role here, family number]. */
const PeopleRead = z.array(z.tuple([z.string(), z.number(), z.number(), z.string().nullable()]));
/** [id number, family number]. */
const StudentsRead = z.array(z.tuple([z.string(), z.string().nullable()]));

type State = { parentFamily: Map<string, string>; familyParents: Map<string, Set<string>> };

async function writeBatch(
  ctx: SchoolCtx,
  processId: number,
  batch: Ready<Values>[],
  addError: (e: FieldError) => void,
  state: State,
): Promise<number> {
  const roleId = BUILTIN_ROLES[FAMILY_ROLE].id;
  const now = ctx.deps.clock.now().toISOString();

  // One read: the families (with their parents' phones), the people, the students; the limit.
  // Families are matched by their number's fold (whatever its case or accents).
  const numbersJson = JSON.stringify([...new Set(batch.map((r) => fold(r.values[0])))]);
  const phones = [...new Set(batch.flatMap((r) => r.values[7].map((p) => p[0])))];
  const idsJson = JSON.stringify(batch.map((r) => r.values[2]));
  const read = sql`
    SELECT
      (${Schools.pick(ctx, schools.levels, eq(schools.id, ctx.schoolId))}) AS levels,
      (SELECT json_group_array(json_array(f.family_number_search, (SELECT json_group_array(u.phone)
          FROM parent p JOIN user u ON u.id = p.user_id WHERE p.family_id = f.id)))
        FROM json_each(${numbersJson}) j ${f.joinOn(ctx, sql`f.family_number_search = j.value`, "CROSS JOIN")}) AS fams,
      (SELECT json_group_array(json_array(u.phone, u.deleted_at IS NOT NULL, EXISTS (
          SELECT 1 FROM ${ru.from} WHERE ${ru.where(ctx, sql`ru.user_id = u.id AND ru.role_id = ${roleId}`)}),
          (SELECT f.family_number FROM ${p.from} JOIN family f ON f.id = p.family_id
            WHERE ${p.where(ctx, sql`p.user_id = u.id`)})))
        FROM json_each(${JSON.stringify(phones)}) j CROSS JOIN user u ON u.phone = j.value) AS people,
      (SELECT json_group_array(json_array(s.id_number, (SELECT f.family_number FROM family f WHERE f.id = s.family_id)))
        FROM json_each(${idsJson}) j
          ${s.joinOn(ctx, sql`s.id_number = j.value AND s.deleted_at IS NULL`, "CROSS JOIN")}) AS studs,
      ${parentLimit(ctx)} AS lim`;
  const answer = await readRow<{ fams: string; people: string; studs: string; lim: number; levels: string }>(ctx, read);
  const limit = answer?.lim ?? DEFAULT_PARENT_LIMIT;
  const levels = readLevels(answer?.levels ?? "[]");
  // The inner array arrives as JSON text or as an array (SQLite keeps the JSON subtype or not).
  for (const [number, phones] of parseJson(FamiliesRead, answer?.fams ?? "[]")) {
    const set = state.familyParents.get(number) ?? new Set<string>();
    for (const p of typeof phones === "string" ? parseJson(Phones, phones) : phones) set.add(p);
    state.familyParents.set(number, set);
  }
  const peopleRead = parseJson(PeopleRead, answer?.people ?? "[]");
  const people = new Map(peopleRead.map(([phone, deleted, hasRole, family]) => [phone, { deleted, hasRole, family }]));
  for (const u of await unseenUsers(ctx, phones, new Set(people.keys())))
    people.set(u.phone, { deleted: u.deletedAt === null ? 0 : 1, hasRole: 0, family: null });
  // Students not deleted: a deleted student's id number is free, and a row naming it makes a new student.
  const studs = new Map(parseJson(StudentsRead, answer?.studs ?? "[]").map(([id, family]) => [id, { family }]));

  const ok: Ready<Values>[] = [];
  /** Phones of this batch's accepted rows (a new person named in an earlier row). */
  const parentRowsSeen = new Set<string>();
  for (const r of batch) {
    const [number, , idNumber, , , level, , parents] = r.values;
    const key = fold(number);
    const errors: FieldError[] = [];
    if (level && !levels.includes(level)) errors.push(notOffered(r.row, level, levels));
    const student = studs.get(idNumber);
    if (student?.family && fold(student.family) !== key) {
      errors.push({
        row: r.row,
        column: "studentIdNumber",
        message: m`Student ${idNumber} is already in another family (${student.family}); a student is in one family`,
      });
    }
    const members = new Set(state.familyParents.get(key) ?? []);
    parents.forEach(([phone], i) => {
      const column = `parent${i + 1}Phone`;
      const person = people.get(phone);
      const family = state.parentFamily.get(phone) ?? person?.family;
      if (person?.deleted) errors.push({ row: r.row, column, message: m`${phone} belongs to a deleted account` });
      else if (!person && !parentRowsSeen.has(phone) && (!parents[i]?.[1] || !parents[i]?.[2])) {
        errors.push({
          row: r.row,
          column,
          message: m`A new person: parent ${i + 1}'s first and last name are required`,
        });
      } else if (family && fold(family) !== key) {
        errors.push({
          row: r.row,
          column,
          message: m`${phone} is already in another family (${family}); a parent is in one family`,
        });
      } else if (!members.has(phone)) {
        members.add(phone);
        if (members.size > limit) {
          errors.push({
            row: r.row,
            column,
            message: m`This school allows at most ${limit} parents per family; family ${number} would have ${members.size}`,
          });
        }
      }
    });
    if (errors.length) {
      for (const e of errors) addError(e);
      continue;
    }
    state.familyParents.set(key, members);
    for (const [phone] of parents) {
      state.parentFamily.set(phone, number);
      parentRowsSeen.add(phone);
    }
    ok.push(r);
  }
  if (ok.length === 0) return 0;

  // [folded number, number, name, the name's search copy]: a new family takes the number as its
  // first row spells it, and the name of its last row.
  const spelt = new Map<string, [string, string]>();
  for (const r of ok) {
    const key = fold(r.values[0]);
    spelt.set(key, [spelt.get(key)?.[0] ?? r.values[0], r.values[1]]);
  }
  const familiesJson = JSON.stringify([...spelt].map(([key, [number, name]]) => [key, number, name, fold(name)]));
  const parentRows = new Map<string, [string, string, string, Relationship | null, string]>();
  for (const r of ok)
    for (const p of r.values[7]) if (!parentRows.has(p[0]) || p[1]) parentRows.set(p[0], [...p, fold(r.values[0])]);
  const everyone = [...parentRows.values()].map(([phone, first, last]) => [phone, first, last] as const);
  const grant = JSON.stringify([...parentRows.keys()].filter((p) => !people.get(p)?.hasRole));
  const parentsJson = JSON.stringify([...parentRows.values()]);
  // The student's values (the family number folded), then the search copies of the first and last name (7, 8).
  const studentsJson = JSON.stringify(
    ok.map((r) => [fold(r.values[0]), ...r.values.slice(1, 7), fold(r.values[3]), fold(r.values[4])]),
  );
  const newStudents = JSON.stringify(ok.filter((r) => !studs.has(r.values[2])).map((r) => r.values[2]));
  const links = JSON.stringify(ok.flatMap((r) => r.values[7].map((p) => [r.values[2], p[0], p[3]])));

  const { people: invite, progress } = batchWrites(ctx, processId, now);
  const fileFamilies = sql`FROM json_each(${familiesJson}) j ${f.joinOn(ctx, sql`f.family_number_search = j.value->>0`, "CROSS JOIN")}`;
  /** A field the row sets when it gives a value and that value differs. */
  const diff = (old: string, to: string | SQL): Change => ({
    old: sql.raw(old),
    new: typeof to === "string" ? sql.raw(to) : to,
    ifChanged: "given",
  });
  /** The family of a folded number (an SQL expression of the JSON row). */
  const familyOf = (key: string) =>
    sql`(SELECT f.id FROM ${f.from} WHERE ${f.where(ctx, sql`f.family_number_search = ${sql.raw(key)}`)})`;
  // A student row of the file differs from the stored one (a guarded write: never another family's).
  const studentDiffers = sql`s.deleted_at IS NULL AND (s.family_id IS NULL OR s.family_id = ${familyOf("j.value->>0")})
    AND (s.first_name IS NOT j.value->>3 OR s.last_name IS NOT j.value->>4
      OR (j.value->>5 IS NOT NULL AND s.level IS NOT j.value->>5)
      OR (j.value->>6 IS NOT NULL AND s.birth_date IS NOT j.value->>6)
      OR s.family_id IS NOT ${familyOf("j.value->>0")})`;
  const parentDiffers = sql`(p.family_id IS NULL OR p.family_id = ${familyOf("j.value->>4")})
    AND (p.family_id IS NOT ${familyOf("j.value->>4")} OR (j.value->>3 IS NOT NULL AND p.relationship IS NOT j.value->>3))`;

  const statements: [Statement, ...Statement[]] = [
    // Families: renamed (audited first), then created or renamed by one upsert, then created audited.
    f.auditRows(
      ctx,
      sql`${fileFamilies} WHERE f.name IS NOT j.value->>2`,
      { action: "update", changes: { name: { old: sql`f.name`, new: sql`j.value->>2` } } },
      now,
    ),
    Families.insertFrom(
      ctx,
      (row) =>
        sql`SELECT ${row({ familyNumber: sql`j.value->>1`, name: sql`j.value->>2`, nameSearch: sql`j.value->>3`, familyNumberSearch: sql`j.value->>0` })}
          FROM json_each(${familiesJson}) j WHERE true`,
      now,
    ).onConflictDoUpdate({
      // An existing family keeps its number as spelt; the row renames it.
      target: Families.schoolKey(families.familyNumberSearch),
      set: { name: sql`excluded.name`, nameSearch: sql`excluded.name_search`, updatedAt: now },
      setWhere: sql`${families.name} IS NOT excluded.name`,
    }),
    f.auditRows(ctx, sql`${fileFamilies} WHERE f.created_at = ${now}`, { created: ["familyNumber", "name"] }, now),
    // Parents: new users, the parent role (the triggers add the membership and the profile).
    ...(await invite(everyone, grant, roleId, new Set(people.keys()))),
    // The parent profiles join the family (never moved out of another one), with their relationship.
    p.auditRows(
      ctx,
      sql`FROM json_each(${parentsJson}) j CROSS JOIN user u ON u.phone = j.value->>0
        ${p.joinOn(ctx, sql`p.user_id = u.id`, "CROSS JOIN")} WHERE ${parentDiffers}`,
      {
        action: "update",
        changes: {
          familyId: diff("p.family_id", familyOf("j.value->>4")),
          relationship: diff("p.relationship", "j.value->>3"),
        },
      },
      now,
    ),
    ctx.deps.db
      .update(parents)
      .set({
        familyId: sql`(SELECT ${familyOf("j.value->>4")} FROM json_each(${parentsJson}) j
          CROSS JOIN user u ON u.phone = j.value->>0 WHERE u.id = "parent"."user_id")`,
        relationship: sql`COALESCE((SELECT j.value->>3 FROM json_each(${parentsJson}) j
          CROSS JOIN user u ON u.phone = j.value->>0 WHERE u.id = "parent"."user_id"), "parent"."relationship")`,
        updatedAt: now,
      })
      .where(
        sql`"parent"."id" IN (SELECT p.id FROM json_each(${parentsJson}) j CROSS JOIN user u ON u.phone = j.value->>0
          ${p.joinOn(ctx, sql`p.user_id = u.id`, "CROSS JOIN")} WHERE ${parentDiffers})`,
      ),
    // Students: updated where a value differs (audited first), created, created audited.
    s.auditRows(
      ctx,
      sql`FROM json_each(${studentsJson}) j ${s.joinOn(ctx, sql`s.id_number = j.value->>2`, "CROSS JOIN")}
        WHERE ${studentDiffers}`,
      {
        action: "update",
        changes: {
          firstName: diff("s.first_name", "j.value->>3"),
          lastName: diff("s.last_name", "j.value->>4"),
          level: diff("s.level", "j.value->>5"),
          birthDate: diff("s.birth_date", "j.value->>6"),
          familyId: diff("s.family_id", familyOf("j.value->>0")),
        },
      },
      now,
    ),
    Students.insertFrom(
      ctx,
      (row) =>
        sql`SELECT ${row({
          familyId: familyOf("j.value->>0"),
          firstName: sql`j.value->>3`,
          lastName: sql`j.value->>4`,
          idNumber: sql`j.value->>2`,
          level: sql`j.value->>5`,
          birthDate: sql`j.value->>6`,
          status: sql`'active'`,
          firstNameSearch: sql`j.value->>7`,
          lastNameSearch: sql`j.value->>8`,
        })}
          FROM json_each(${studentsJson}) j WHERE true`,
      now,
    ).onConflictDoUpdate({
      target: Students.schoolKey(students.idNumber),
      // The unique index is partial (students not deleted): the upsert names its WHERE.
      targetWhere: sql`deleted_at IS NULL`,
      set: {
        familyId: sql`excluded.family_id`,
        firstName: sql`excluded.first_name`,
        lastName: sql`excluded.last_name`,
        firstNameSearch: sql`excluded.first_name_search`,
        lastNameSearch: sql`excluded.last_name_search`,
        level: sql`COALESCE(excluded.level, "student"."level")`,
        birthDate: sql`COALESCE(excluded.birth_date, "student"."birth_date")`,
        updatedAt: now,
      },
      setWhere: sql`"student"."deleted_at" IS NULL
          AND ("student"."family_id" IS NULL OR "student"."family_id" = excluded.family_id)
          AND ("student"."first_name" IS NOT excluded.first_name OR "student"."last_name" IS NOT excluded.last_name
            OR (excluded.level IS NOT NULL AND "student"."level" IS NOT excluded.level)
            OR (excluded.birth_date IS NOT NULL AND "student"."birth_date" IS NOT excluded.birth_date)
            OR "student"."family_id" IS NOT excluded.family_id)`,
    }),
    s.auditRows(
      ctx,
      sql`FROM json_each(${newStudents}) j ${s.joinOn(ctx, sql`s.id_number = j.value`, "CROSS JOIN")}
        WHERE s.created_at = ${now} AND s.deleted_at IS NULL`,
      { created: ["familyId", "firstName", "lastName", "idNumber", "level", "birthDate"] },
      now,
    ),
    // Guardians: each parent of the row guards its student (a link held already stays as it is).
    Guardians.insertFrom(
      ctx,
      (row) =>
        sql`SELECT ${row({
          studentId: sql`s.id`,
          parentId: sql`p.id`,
          relationship: sql`COALESCE(j.value->>2, p.relationship)`,
          canPickUp: sql`1`,
          canRequestChanges: sql`1`,
          receivesNotifications: sql`1`,
          restricted: sql`0`,
        })}
          FROM json_each(${links}) j ${s.joinOn(ctx, sql`s.id_number = j.value->>0`, "CROSS JOIN")}
          CROSS JOIN user u ON u.phone = j.value->>1 ${p.joinOn(ctx, sql`p.user_id = u.id`, "CROSS JOIN")}
          WHERE s.deleted_at IS NULL`,
      now,
    ).onConflictDoNothing({ target: [guardians.studentId, guardians.parentId] }),
    g.auditRows(
      ctx,
      sql`FROM json_each(${links}) j ${s.joinOn(ctx, sql`s.id_number = j.value->>0`, "CROSS JOIN")}
        CROSS JOIN user u ON u.phone = j.value->>1 ${p.joinOn(ctx, sql`p.user_id = u.id`, "CROSS JOIN")}
        ${g.joinOn(ctx, sql`g.student_id = s.id AND g.parent_id = p.id`, "CROSS JOIN")}
        WHERE g.created_at = ${now} AND s.deleted_at IS NULL`,
      { created: ["studentId", "parentId", "relationship"] },
      now,
    ),
    progress(ok.length),
  ];
  await runBatch(ctx, statements);
  return ok.length;
}
