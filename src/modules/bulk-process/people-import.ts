/**
 * Importers of people from a spreadsheet: teachers and administrative staff. Run by the bulk
 * consumer (consumer.ts) once it has claimed the process.
 *
 * - The first worksheet's first row is the header; columns are found by name, case, accents,
 *   spaces and punctuation ignored, English or Spanish ("Teléfono", "Nombre", "Materias"...).
 *   Unknown columns are ignored; a missing required column fails the file (row 1).
 * - Each row is checked with zod; a row with any error is not imported and is reported as
 *   `{ row, column, message }` (row as numbered in the spreadsheet, column as headed in the file).
 *   A phone (or employee number) seen in an earlier row of the file is an error of the later row.
 * - Valid rows are written in batches (at most 500 rows and ~80 KB of JSON): each batch is one
 *   read (who is known, who holds the role, whose employee number) and one `batch()` (one
 *   transaction) whose statements each take the rows as ONE JSON parameter read with
 *   `json_each`, never a statement per row (D1: 100 bound parameters, 100 KB per statement):
 *   new users (`ON CONFLICT(phone) DO NOTHING`), their audit rows, the role (`role_user`, whose
 *   triggers write the school membership and the empty profile), its audit rows, the profile's
 *   fields with one audit row per profile that changes, and the process's progress.
 * - Idempotent: a known phone keeps its user (a number the school did not know gets its own copy of
 *   the row's name and email, as `addPeople` of the user module writes for every route); a role already held is not given again; the profile is updated
 *   only where a value differs. Importing the same file again changes nothing and writes no audit
 *   row; a corrected file updates the profiles. An empty cell leaves the stored value as it is.
 */
import { z } from "@hono/zod-openapi";
import { Batch } from "../../db/batch";
import { AdministrativeUsers, administrativeUsers } from "../../db/schema/administrative-user";
import { Users, users } from "../../db/schema/core";
import { Teachers, teachers } from "../../db/schema/teacher";
import { eq, sql } from "../../db/sql";
import { inList, runBatch, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { fold } from "../../lib/fold";
import { m, zodMessage } from "../../lib/message";
import { normalizePhone } from "../../lib/phone";
import type { Cell } from "../../lib/xlsx";
import { addPeople, knownBy, peopleByPhone } from "../user/api";
import { batchWrites } from "./batch-writes";
import { type Column, type FieldError, type ImportResult, importSheet, norm, type Ready } from "./sheet";

export { BATCH_JSON_BYTES, BATCH_ROWS } from "./sheet";

type Field = "phone" | "firstName" | "lastName" | "email" | "language" | "subjects" | "employeeNumber" | "position";

const PERSON: Column<Field>[] = [
  {
    field: "phone",
    header: m`Phone`,
    names: ["phone", "phonenumber", "mobile", "telefono", "celular", "movil"],
    required: true,
  },
  { field: "firstName", header: m`First name`, names: ["firstname", "name", "nombre", "nombres"], required: true },
  { field: "lastName", header: m`Last name`, names: ["lastname", "surname", "apellido", "apellidos"], required: true },
  { field: "email", header: m`Email`, names: ["email", "mail", "correo", "correoelectronico"] },
  { field: "language", header: m`Language`, names: ["language", "idioma"] },
];
const EMPLOYEE: Column<Field> = {
  field: "employeeNumber",
  header: m`Employee number`,
  names: ["employeenumber", "employeeno", "numerodeempleado", "numeroempleado", "noempleado"],
};

const text = (max: number) => z.string().trim().max(max);
const optional = (max: number) =>
  text(max)
    .optional()
    .transform((v) => (v === "" ? undefined : v));

const LANGUAGES: Record<string, "es" | "en"> = {
  es: "es",
  espanol: "es",
  spanish: "es",
  en: "en",
  english: "en",
  ingles: "en",
};

const personFields = {
  phone: z.string().transform((value, ctx) => {
    const phone = normalizePhone(value);
    if (phone === null) {
      ctx.addIssue({
        code: "custom",
        message: m`Not a phone number with its country code (like +52 55 1234 5678)`.render(),
      });
      return z.NEVER;
    }
    return phone;
  }),
  firstName: text(100).min(1, zodMessage(m`Required`)),
  lastName: text(100).min(1, zodMessage(m`Required`)),
  email: optional(254).pipe(z.email(zodMessage(m`Not an email address`)).optional()),
  language: optional(20).transform((v, ctx) => {
    if (v === undefined) return undefined;
    const language = LANGUAGES[norm(v)];
    if (!language) {
      ctx.addIssue({ code: "custom", message: m`Expected es or en`.render() });
      return z.NEVER;
    }
    return language;
  }),
  employeeNumber: optional(40),
};

export interface PeopleImport {
  role: "teacher" | "staff";
  /** The profile table and its audit entity. */
  table: "teacher" | "administrative_user";
  entity: string;
  columns: Column<Field>[];
  schema: z.ZodType<{ phone: string; profile?: string; employeeNumber?: string } & Record<string, unknown>>;
  /** The profile column (besides employee_number) the import sets, and its field. */
  profileColumn: "subjects" | "position";
  example: Cell[];
}

export const IMPORTS = {
  teachers: {
    role: "teacher",
    table: "teacher",
    entity: "teacher",
    columns: [
      ...PERSON,
      { field: "subjects", header: m`Subjects`, names: ["subjects", "subject", "materias", "asignaturas"] },
      EMPLOYEE,
    ],
    schema: z.object({
      ...personFields,
      subjects: optional(2000).transform((v, ctx) => {
        if (v === undefined) return undefined;
        const list = [...new Set(v.split(/[,;]/).map((s) => s.trim()))].filter(Boolean);
        if (list.length > 30 || list.some((s) => s.length > 60)) {
          ctx.addIssue({
            code: "custom",
            message: m`At most 30 subjects of at most 60 characters, comma-separated`.render(),
          });
          return z.NEVER;
        }
        return JSON.stringify(list);
      }),
    }),
    profileColumn: "subjects",
    example: ["+52 55 1234 5678", "Ana", "García", "ana.garcia@example.com", "es", "Math, Biology", "T-001"],
  },
  "administrative-staff": {
    role: "staff",
    table: "administrative_user",
    entity: "administrative-user",
    columns: [
      ...PERSON,
      { field: "position", header: m`Position`, names: ["position", "jobtitle", "title", "puesto", "cargo"] },
      EMPLOYEE,
    ],
    schema: z.object({ ...personFields, position: optional(100) }),
    profileColumn: "position",
    example: ["+52 55 8765 4321", "Luis", "Pérez", "luis.perez@example.com", "es", "Registrar", "A-001"],
  },
} satisfies Record<string, Omit<PeopleImport, "schema"> & { schema: z.ZodType }>;

export type ImportEntity = keyof typeof IMPORTS;

export type { ImportResult } from "./sheet";

/** A valid row, ready to write: [phone, firstName, lastName, email, language, profile, employeeNumber]. */
type Values = [string, string, string, string | null, string, string | null, string | null];
type PeopleReady = Ready<Values>;

/** Imports the spreadsheet `bytes` as `entity` for the process in `ctx` (an import context). */
export async function importPeople(
  ctx: SchoolCtx,
  processId: number,
  entity: ImportEntity,
  bytes: Uint8Array,
): Promise<ImportResult> {
  const spec: PeopleImport = IMPORTS[entity];
  // A phone (or employee number) seen in an earlier row of the file is an error of the later row.
  const phones = new Set<string>();
  const numbers = new Set<string>();
  return importSheet<Field, Record<string, string | undefined> & { phone: string }, Values>(bytes, {
    columns: spec.columns,
    // Every import's schema parses a row to text fields and a phone: the union of both specs' outputs, widened.
    schema: spec.schema as z.ZodType<Record<string, string | undefined> & { phone: string }>,
    accept: (v, row) => {
      if (phones.has(v.phone)) {
        return [{ row, column: "phone", message: m`${v.phone} is already in an earlier row of the file` }];
      }
      phones.add(v.phone);
      if (v.employeeNumber !== undefined) {
        if (numbers.has(v.employeeNumber)) {
          return [
            {
              row,
              column: "employeeNumber",
              message: m`Employee number ${v.employeeNumber} is already in an earlier row of the file`,
            },
          ];
        }
        numbers.add(v.employeeNumber);
      }
      return {
        values: [
          v.phone,
          v.firstName ?? "",
          v.lastName ?? "",
          v.email ?? null,
          v.language ?? "es",
          v[spec.profileColumn] ?? null,
          v.employeeNumber ?? null,
        ],
      };
    },
    write: (batch, addError) => writeBatch(ctx, processId, spec, batch, addError),
  });
}

/** The profile table of an import, and the column it sets besides the employee number. */
const PROFILES = {
  teacher: { data: Teachers, column: teachers.subjects },
  administrative_user: { data: AdministrativeUsers, column: administrativeUsers.position },
} as const;

/** Writes one batch of valid rows; returns how many were written, reports the refused ones. */
async function writeBatch(
  ctx: SchoolCtx,
  processId: number,
  spec: PeopleImport,
  batch: PeopleReady[],
  addError: (e: FieldError) => void,
): Promise<number> {
  const { db, clock } = ctx.deps;
  const now = clock.now().toISOString();
  const { data: profiles, column: profileField } = PROFILES[spec.table];

  // One read (one batch): who is known (deleted accounts cannot be given a role), who holds the
  // role here, and who else in the school has one of the employee numbers.
  const read = new Batch(ctx);
  const knownSlot = read.read(
    peopleByPhone(
      ctx,
      batch.map((r) => r.values[0]),
      spec.role,
    ),
  );
  const takenSlot = read.read(
    profiles
      .select(ctx, { number: profiles.table.employeeNumber, phone: users.phone })
      .join(Users, eq(users.id, profiles.table.userId))
      .where(
        inList(
          profiles.table.employeeNumber,
          batch.flatMap((r) => (r.values[6] === null ? [] : [r.values[6]])),
        ),
      ),
  );
  const answer = await read.commit();
  const knownByPhone = knownBy(answer.get(knownSlot));
  const takenBy = new Map(answer.get(takenSlot).map((k) => [k.number, k.phone]));
  const ok: PeopleReady[] = [];
  for (const r of batch) {
    const [phone, , , , , , number] = r.values;
    if (knownByPhone.get(phone)?.deleted) {
      addError({ row: r.row, column: "phone", message: m`${phone} belongs to a deleted account` });
    } else if (number !== null && takenBy.has(number) && takenBy.get(number) !== phone) {
      addError({
        row: r.row,
        column: "employeeNumber",
        message: m`Employee number ${number} belongs to another person in the school`,
      });
    } else ok.push(r);
  }
  if (ok.length === 0) return 0;

  // Each row with the search copy of its profile value (a teacher's subjects, a position) last.
  const all = JSON.stringify(ok.map((r) => [...r.values, r.values[5] === null ? null : fold(r.values[5])]));
  const { progress } = batchWrites(ctx, processId, now);
  const profile = sql.identifier(spec.profileColumn);
  // The profile table as `p` (its scope: this school's rows), and as `o` for the other profiles.
  const p = profiles.alias("p");
  const o = profiles.alias("o");
  // A profile row differs from its file row where a sent value is not the stored one; an employee
  // number someone else took since the read is left alone (the unique index would abort the batch).
  const differs = sql`(
      (j.value->>5 IS NOT NULL AND p.${profile} IS NOT j.value->>5)
      OR (j.value->>6 IS NOT NULL AND p.employee_number IS NOT j.value->>6))
    AND (j.value->>6 IS NULL OR NOT EXISTS (
      SELECT 1 FROM ${o.from} WHERE ${o.where(ctx, sql`o.employee_number = j.value->>6 AND o.id <> p.id`)}))`;
  const rows = sql`FROM json_each(${all}) j CROSS JOIN user u ON u.phone = j.value->>0
      ${p.joinOn(ctx, sql`p.user_id = u.id`, "CROSS JOIN")}`;

  const people = ok.map(({ values: [phone, firstName, lastName, email, language] }) => ({
    phone,
    firstName,
    lastName,
    email,
    language: language === "en" ? ("en" as const) : ("es" as const),
  }));
  const statements: Statement[] = [
    // New people, copies of known ones, the role where not held: a number someone registered
    // meanwhile is left alone.
    ...(await addPeople(ctx, people, knownByPhone, { roles: [spec.role], taken: "skip" })).statements,
    // One audit row per profile that changes, written before the change (it reads the old values).
    p.auditRows(
      ctx,
      sql`${rows} WHERE ${differs}`,
      {
        action: "update",
        changes: {
          [spec.profileColumn]: {
            old: sql`p.${profile}`,
            new: sql`j.value->>5`,
            ifChanged: "given",
            as: profileField,
          },
          employeeNumber: { old: sql`p.employee_number`, new: sql`j.value->>6`, ifChanged: "given" },
        },
      },
      now,
    ),
    // The change itself, driven by the file's rows (json_each first, then the unique indexes): an
    // upsert on (school_id, user_id) whose rows always exist (the role's trigger made them), so
    // it only ever takes its DO UPDATE branch.
    db
      .insert(profiles.table)
      .select(
        sql`SELECT NULL, p.created_at, ${now}, ${p.schoolOf()}, p.user_id,
            COALESCE(j.value->>5, p.${profile}), COALESCE(j.value->>6, p.employee_number),
            COALESCE(j.value->>7, p.${sql.identifier(`${spec.profileColumn}_search`)})
          ${rows} WHERE ${differs}`,
      )
      .onConflictDoUpdate({
        target: profiles.schoolKey(profiles.table.userId),
        set: {
          [spec.profileColumn]: sql`excluded.${profile}`,
          [`${spec.profileColumn}Search`]: sql`excluded.${sql.identifier(`${spec.profileColumn}_search`)}`,
          employeeNumber: sql`excluded.employee_number`,
          updatedAt: now,
        },
      }),
    progress(ok.length),
  ];
  const [first, ...rest] = statements;
  if (first) await runBatch(ctx, [first, ...rest]);
  return ok.length;
}
