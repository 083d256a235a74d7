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
 * - Idempotent: a known phone keeps its user (and its name: a school cannot rename a person other
 *   schools know, as in `enrol`); a role already held is not given again; the profile is updated
 *   only where a value differs. Importing the same file again changes nothing and writes no audit
 *   row; a corrected file updates the profiles. An empty cell leaves the stored value as it is.
 */
import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { BUILTIN_ROLES } from "../../lib/access";
import type { Ctx } from "../../lib/context";
import { normalizePhone } from "../../lib/phone";
import type { Statement } from "../../lib/write";
import { type Cell, type SheetRow, XlsxError, xlsxRows } from "../../lib/xlsx";
import type { RowError } from "./service";

/** The rows of one statement set: both bounds keep each statement far under D1's 100 KB. */
export const BATCH_ROWS = 500;
export const BATCH_JSON_BYTES = 80_000;

type Field = "phone" | "firstName" | "lastName" | "email" | "language" | "subjects" | "employeeNumber" | "position";

interface Column {
  field: Field;
  /** The template's header. */
  header: string;
  /** Normalised header names accepted (see `norm`). */
  names: string[];
  required?: boolean;
}

const norm = (s: string) =>
  s
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");

const PERSON: Column[] = [
  {
    field: "phone",
    header: "Phone",
    names: ["phone", "phonenumber", "mobile", "telefono", "celular", "movil"],
    required: true,
  },
  { field: "firstName", header: "First name", names: ["firstname", "name", "nombre", "nombres"], required: true },
  { field: "lastName", header: "Last name", names: ["lastname", "surname", "apellido", "apellidos"], required: true },
  { field: "email", header: "Email", names: ["email", "mail", "correo", "correoelectronico"] },
  { field: "language", header: "Language", names: ["language", "idioma"] },
];
const EMPLOYEE: Column = {
  field: "employeeNumber",
  header: "Employee number",
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
      ctx.addIssue({ code: "custom", message: "Not a phone number with its country code (like +52 55 1234 5678)" });
      return z.NEVER;
    }
    return phone;
  }),
  firstName: text(100).min(1, "Required"),
  lastName: text(100).min(1, "Required"),
  email: optional(254).pipe(z.email("Not an email address").optional()),
  language: optional(20).transform((v, ctx) => {
    if (v === undefined) return undefined;
    const language = LANGUAGES[norm(v)];
    if (!language) {
      ctx.addIssue({ code: "custom", message: "Expected es or en" });
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
  columns: Column[];
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
      { field: "subjects", header: "Subjects", names: ["subjects", "subject", "materias", "asignaturas"] },
      EMPLOYEE,
    ],
    schema: z.object({
      ...personFields,
      subjects: optional(2000).transform((v, ctx) => {
        if (v === undefined) return undefined;
        const list = [...new Set(v.split(/[,;]/).map((s) => s.trim()))].filter(Boolean);
        if (list.length > 30 || list.some((s) => s.length > 60)) {
          ctx.addIssue({ code: "custom", message: "At most 30 subjects of at most 60 characters, comma-separated" });
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
      { field: "position", header: "Position", names: ["position", "jobtitle", "title", "puesto", "cargo"] },
      EMPLOYEE,
    ],
    schema: z.object({ ...personFields, position: optional(100) }),
    profileColumn: "position",
    example: ["+52 55 8765 4321", "Luis", "Pérez", "luis.perez@example.com", "es", "Registrar", "A-001"],
  },
} satisfies Record<string, Omit<PeopleImport, "schema"> & { schema: z.ZodType }>;

export type ImportEntity = keyof typeof IMPORTS;
export const IMPORT_ENTITIES = Object.keys(IMPORTS) as ImportEntity[];

export interface ImportResult {
  errors: RowError[];
  /** A file-level error (unreadable file, missing column): the process fails. */
  fatal: boolean;
  totalRows: number;
  processedRows: number;
}

/** A cell as the text a column is checked as: numbers (a phone typed as a number) without exponent. */
function cellText(cell: Cell): string | undefined {
  if (cell === null || cell === undefined) return undefined;
  if (typeof cell === "number") return Number.isInteger(cell) ? BigInt(cell).toString() : String(cell);
  if (typeof cell === "boolean") return cell ? "TRUE" : "FALSE";
  return cell;
}

/** A valid row, ready to write: [phone, firstName, lastName, email, language, profile, employeeNumber]. */
type Ready = { row: number; values: [string, string, string, string | null, string, string | null, string | null] };

/** Imports the spreadsheet `bytes` as `entity` for the process in `ctx` (an import context). */
export async function importPeople(
  ctx: Ctx,
  processId: number,
  entity: ImportEntity,
  bytes: Uint8Array,
): Promise<ImportResult> {
  const spec = IMPORTS[entity];
  const result: ImportResult = { errors: [], fatal: false, totalRows: 0, processedRows: 0 };
  let rows: Generator<SheetRow>;
  let header: SheetRow | undefined;
  try {
    rows = xlsxRows(bytes);
    header = rows.next().value ?? undefined;
  } catch (err) {
    if (!(err instanceof XlsxError)) throw err;
    return { ...result, fatal: true, errors: [{ row: 0, message: err.message }] };
  }
  if (!header) return { ...result, fatal: true, errors: [{ row: 1, message: "The sheet is empty: no header row" }] };

  // Which file column holds each field, and the header it has there.
  const at = new Map<Field, { index: number; label: string }>();
  header.cells.forEach((cell, index) => {
    const label = cellText(cell)?.trim() ?? "";
    const column = spec.columns.find((c) => c.names.includes(norm(label)));
    if (column && !at.has(column.field)) at.set(column.field, { index, label });
  });
  const missing = spec.columns.filter((c) => c.required && !at.has(c.field));
  if (missing.length > 0) {
    return {
      ...result,
      fatal: true,
      errors: missing.map((c) => ({ row: header.row, column: c.header, message: `Missing column ${c.header}` })),
    };
  }
  const labelOf = (field: unknown) => at.get(field as Field)?.label ?? String(field);

  const encoder = new TextEncoder();
  const phones = new Set<string>();
  const numbers = new Set<string>();
  let batch: Ready[] = [];
  let batchBytes = 0;
  const addError = (e: RowError) => {
    result.errors.push(e);
  };
  const flush = async () => {
    if (batch.length === 0) return;
    const written = await writeBatch(ctx, processId, spec, batch, (e) =>
      addError({ ...e, column: e.column && labelOf(e.column) }),
    );
    result.processedRows += written;
    batch = [];
    batchBytes = 0;
  };

  try {
    for (const { row, cells } of rows) {
      result.totalRows++;
      const input: Record<string, string | undefined> = {};
      for (const [field, { index }] of at) input[field] = cellText(cells[index]);
      const parsed = spec.schema.safeParse(input);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          addError({ row, column: labelOf(issue.path[0]), message: issue.message });
        }
        continue;
      }
      const v = parsed.data as Record<string, string | undefined> & { phone: string };
      if (phones.has(v.phone)) {
        addError({ row, column: labelOf("phone"), message: `${v.phone} is already in an earlier row of the file` });
        continue;
      }
      phones.add(v.phone);
      if (v.employeeNumber !== undefined) {
        if (numbers.has(v.employeeNumber)) {
          addError({
            row,
            column: labelOf("employeeNumber"),
            message: `Employee number ${v.employeeNumber} is already in an earlier row of the file`,
          });
          continue;
        }
        numbers.add(v.employeeNumber);
      }
      const ready: Ready = {
        row,
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
      const size = encoder.encode(JSON.stringify(ready.values)).length + 1;
      if (batch.length >= BATCH_ROWS || batchBytes + size > BATCH_JSON_BYTES) await flush();
      batch.push(ready);
      batchBytes += size;
    }
    await flush();
  } catch (err) {
    if (!(err instanceof XlsxError)) throw err;
    result.fatal = true;
    addError({ row: 0, message: err.message });
  }
  result.errors.sort((a, b) => a.row - b.row);
  return result;
}

/** Writes one batch of valid rows; returns how many were written, reports the refused ones. */
async function writeBatch(
  ctx: Ctx,
  processId: number,
  spec: PeopleImport,
  batch: Ready[],
  addError: (e: RowError) => void,
): Promise<number> {
  const { db, clock } = ctx.deps;
  const school = ctx.schoolId ?? 0;
  const roleId = BUILTIN_ROLES[spec.role].id;
  const now = clock.now().toISOString();
  const table = sql.identifier(spec.table);

  // One read: who is known (deleted accounts cannot be given a role), who holds the role here,
  // and who else in the school has one of the employee numbers.
  const phonesJson = JSON.stringify(batch.map((r) => r.values[0]));
  const numbersJson = JSON.stringify(batch.flatMap((r) => (r.values[6] === null ? [] : [r.values[6]])));
  const [known, taken] = await db.batch([
    db.all<{ phone: string; deleted: number; hasRole: number }>(sql`
      SELECT u.phone AS phone, u.deleted_at IS NOT NULL AS deleted,
        EXISTS (SELECT 1 FROM role_user ru WHERE ru.user_id = u.id AND ru.school_id = ${school} AND ru.role_id = ${roleId}) AS hasRole
      FROM json_each(${phonesJson}) j JOIN user u ON u.phone = j.value`),
    db.all<{ number: string; phone: string }>(sql`
      SELECT p.employee_number AS number, u.phone AS phone
      FROM json_each(${numbersJson}) j JOIN ${table} p ON p.school_id = ${school} AND p.employee_number = j.value
      JOIN user u ON u.id = p.user_id`),
  ]);
  const knownBy = new Map(known.map((k) => [k.phone, k]));
  const takenBy = new Map(taken.map((k) => [k.number, k.phone]));
  const ok: Ready[] = [];
  for (const r of batch) {
    const [phone, , , , , , number] = r.values;
    if (knownBy.get(phone)?.deleted) {
      addError({ row: r.row, column: "phone", message: `${phone} belongs to a deleted account` });
    } else if (number !== null && takenBy.has(number) && takenBy.get(number) !== phone) {
      addError({
        row: r.row,
        column: "employeeNumber",
        message: `Employee number ${number} belongs to another person in the school`,
      });
    } else ok.push(r);
  }
  if (ok.length === 0) return 0;

  const fresh = JSON.stringify(ok.filter((r) => !knownBy.has(r.values[0])).map((r) => r.values));
  const grant = JSON.stringify(ok.filter((r) => !knownBy.get(r.values[0])?.hasRole).map((r) => r.values[0]));
  const all = JSON.stringify(ok.map((r) => r.values));
  const actor = sql`${now}, ${now}, ${school}, 'import', ${processId}, NULL`;
  const auditColumns = sql.raw(
    "INSERT INTO audit_log (created_at, updated_at, school_id, actor_type, actor_id, actor_name, entity, record_id, action, changes, request_id)",
  );
  const change = (key: string, value: ReturnType<typeof sql.raw>) => sql`${key}, json_object('old', NULL, 'new', ${value})`;
  const profile = sql.identifier(spec.profileColumn);
  // A profile row differs from its file row where a sent value is not the stored one; an employee
  // number someone else took since the read is left alone (the unique index would abort the batch).
  const differs = sql`(
      (j.value->>5 IS NOT NULL AND p.${profile} IS NOT j.value->>5)
      OR (j.value->>6 IS NOT NULL AND p.employee_number IS NOT j.value->>6))
    AND (j.value->>6 IS NULL OR NOT EXISTS (
      SELECT 1 FROM ${table} o WHERE o.school_id = ${school} AND o.employee_number = j.value->>6 AND o.id <> p.id))`;

  const statements: Statement[] = [
    db.run(sql`
      INSERT INTO user (phone, first_name, last_name, email, language, status, created_at, updated_at)
      SELECT j.value->>0, j.value->>1, j.value->>2, j.value->>3, j.value->>4, 'invited', ${now}, ${now}
      FROM json_each(${fresh}) j WHERE true
      ON CONFLICT (phone) DO NOTHING`),
    db.run(sql`${auditColumns}
      SELECT ${actor}, 'user', u.id, 'create', json_object(
        ${change("phone", sql.raw("u.phone"))}, ${change("firstName", sql.raw("u.first_name"))},
        ${change("lastName", sql.raw("u.last_name"))}, ${change("email", sql.raw("u.email"))},
        ${change("language", sql.raw("u.language"))}, ${change("status", sql.raw("u.status"))}), NULL
      FROM json_each(${fresh}) j JOIN user u ON u.phone = j.value->>0 WHERE u.created_at = ${now}`),
    db.run(sql`
      INSERT INTO role_user (school_id, user_id, role_id, created_at, updated_at)
      SELECT ${school}, u.id, ${roleId}, ${now}, ${now}
      FROM json_each(${grant}) j JOIN user u ON u.phone = j.value WHERE u.deleted_at IS NULL
      ON CONFLICT DO NOTHING`),
    db.run(sql`${auditColumns}
      SELECT ${actor}, 'role-user', ru.id, 'create', json_object(
        ${change("userId", sql.raw("ru.user_id"))}, ${change("roleId", sql.raw("ru.role_id"))}), NULL
      FROM json_each(${grant}) j JOIN user u ON u.phone = j.value
      JOIN role_user ru ON ru.user_id = u.id AND ru.school_id = ${school} AND ru.role_id = ${roleId}
      WHERE ru.created_at = ${now}`),
    // One audit row per profile that changes, written before the change (it reads the old values).
    db.run(sql`${auditColumns}
      SELECT ${actor}, ${spec.entity}, p.id, 'update', (
        SELECT json_group_object(column1, json(column2)) FROM (VALUES
          (${spec.profileColumn}, CASE WHEN j.value->>5 IS NOT NULL AND p.${profile} IS NOT j.value->>5
            THEN json_object('old', p.${profile}, 'new', j.value->>5) END),
          ('employeeNumber', CASE WHEN j.value->>6 IS NOT NULL AND p.employee_number IS NOT j.value->>6
            THEN json_object('old', p.employee_number, 'new', j.value->>6) END))
        WHERE column2 IS NOT NULL), NULL
      FROM json_each(${all}) j JOIN user u ON u.phone = j.value->>0
      JOIN ${table} p ON p.school_id = ${school} AND p.user_id = u.id
      WHERE ${differs}`),
    db.run(sql`
      UPDATE ${table} AS p SET
        ${profile} = COALESCE(j.value->>5, p.${profile}),
        employee_number = COALESCE(j.value->>6, p.employee_number),
        updated_at = ${now}
      FROM json_each(${all}) j JOIN user u ON u.phone = j.value->>0
      WHERE p.school_id = ${school} AND p.user_id = u.id AND ${differs}`),
    db.run(sql`
      UPDATE bulk_process SET processed_rows = processed_rows + ${ok.length}, updated_at = ${now}
      WHERE id = ${processId} AND school_id = ${school} AND status = 'processing'`),
  ];
  await db.batch(statements as [Statement, ...Statement[]]);
  return ok.length;
}
