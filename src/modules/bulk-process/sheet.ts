/**
 * What every spreadsheet importer shares (people-import.ts, family-import.ts, group-import.ts):
 * finding the columns by header, checking each row with zod, reporting refused rows as
 * `{ row, column, message }`, and handing the valid rows to the importer's writer in batches of at
 * most `BATCH_ROWS` rows and `BATCH_JSON_BYTES` of JSON (each statement takes a batch as ONE JSON
 * parameter read with `json_each`: D1 allows 100 bound parameters and 100 KB per statement).
 *
 * - The first worksheet's first row is the header; columns are found by name, case, accents,
 *   spaces and punctuation ignored: the header in every language the service speaks (a template
 *   downloaded in Spanish imports as well as one in English), and the aliases a column lists.
 *   Unknown columns are ignored; a missing required column fails the file (row 1). A required cell
 *   left empty reads as "" so that its error says "Required".
 * - `accept` sees each parsed row in file order (checks against earlier rows of the file); the
 *   writer sees each batch (checks against the database, then one `batch()`).
 */
import type { z } from "@hono/zod-openapi";
import { LANGUAGES } from "../../lib/language";
import { type Message, m, verbatim } from "../../lib/message";
import { type ReadCell, type SheetRow, XlsxError, xlsxRows } from "../../lib/xlsx";
import { type Level, notOfferedMessage } from "../school/api";
import type { RowError } from "./service";

/** The rows of one statement set: both bounds keep each statement far under D1's 100 KB. */
export const BATCH_ROWS = 500;
export const BATCH_JSON_BYTES = 80_000;

export interface Column<F extends string = string> {
  field: F;
  /** The template's header (in the language of the download); a file may name it in any language. */
  header: Message;
  /** Further normalised header names accepted (see `norm`): aliases people write. */
  names: string[];
  required?: boolean;
}

export const norm = (s: string) =>
  s
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");

/** A cell as the text a column is checked as: numbers (a phone typed as a number) without exponent. */
export function cellText(cell: ReadCell): string | undefined {
  if (cell === null || cell === undefined) return undefined;
  if (typeof cell === "number") return Number.isInteger(cell) ? BigInt(cell).toString() : String(cell);
  if (typeof cell === "boolean") return cell ? "TRUE" : "FALSE";
  return cell;
}

export interface ImportResult {
  errors: RowError[];
  /** A file-level error (unreadable file, missing column): the process fails. */
  fatal: boolean;
  totalRows: number;
  processedRows: number;
}

/** A valid row on its way to the writer: its spreadsheet row number and its JSON-able values. */
export type Ready<V> = { row: number; values: V };

/** A row error whose `column` is a field name (turned into the file's header by `importSheet`). */
export type FieldError = { row: number; column?: string; message: Message };

/** The names a column is found by: its header in every language, and its aliases (normalised). */
const namesOf = (column: Column) => new Set([...LANGUAGES.map((l) => norm(column.header.render(l))), ...column.names]);

/** A row's level the school does not offer. */
export const notOffered = (row: number, level: Level, offered: readonly Level[]): FieldError => ({
  row,
  column: "level",
  message: notOfferedMessage(level, offered),
});

export interface SheetImport<F extends string, P, V> {
  columns: Column<F>[];
  schema: z.ZodType<P>;
  /** Checks a parsed row against the earlier rows of the file: its values, or an error. */
  accept: (parsed: P, row: number) => { values: V } | FieldError[];
  /** Writes one batch; returns how many rows were written, reports the refused ones. */
  write: (batch: Ready<V>[], addError: (e: FieldError) => void) => Promise<number>;
}

/** Reads the spreadsheet `bytes` and imports it with `spec`. */
export async function importSheet<F extends string, P, V>(
  bytes: Uint8Array,
  spec: SheetImport<F, P, V>,
): Promise<ImportResult> {
  const result: ImportResult = { errors: [], fatal: false, totalRows: 0, processedRows: 0 };
  let rows: Generator<SheetRow>;
  let header: SheetRow | undefined;
  try {
    rows = xlsxRows(bytes);
    header = rows.next().value ?? undefined;
  } catch (err) {
    if (!(err instanceof XlsxError)) throw err;
    return { ...result, fatal: true, errors: [{ row: 0, message: err.text }] };
  }
  if (!header) return { ...result, fatal: true, errors: [{ row: 1, message: m`The sheet is empty: no header row` }] };

  // Which file column holds each field, and the header it has there.
  const at = new Map<string, { index: number; label: string }>();
  const names = new Map(spec.columns.map((c) => [c, namesOf(c)]));
  header.cells.forEach((cell, index) => {
    const label = cellText(cell)?.trim() ?? "";
    const column = spec.columns.find((c) => names.get(c)?.has(norm(label)));
    if (column && !at.has(column.field)) at.set(column.field, { index, label });
  });
  const missing = spec.columns.filter((c) => c.required && !at.has(c.field));
  if (missing.length > 0) {
    return {
      ...result,
      fatal: true,
      errors: missing.map((c) => ({
        row: header.row,
        column: c.header.render(),
        message: m`Missing column ${c.header}`,
      })),
    };
  }
  const labelOf = (field: unknown) =>
    at.get(String(field))?.label ?? spec.columns.find((c) => c.field === field)?.header.render() ?? String(field);
  const addError = (e: FieldError) => {
    result.errors.push(e.column === undefined ? e : { ...e, column: labelOf(e.column) });
  };

  const encoder = new TextEncoder();
  let batch: Ready<V>[] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    result.processedRows += await spec.write(batch, addError);
    batch = [];
    batchBytes = 0;
  };

  try {
    for (const { row, cells } of rows) {
      result.totalRows++;
      const input: Record<string, string | undefined> = {};
      for (const column of spec.columns) {
        const found = at.get(column.field);
        input[column.field] = (found && cellText(cells[found.index])) ?? (column.required ? "" : undefined);
      }
      const parsed = spec.schema.safeParse(input);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          addError({ row, column: String(issue.path[0]), message: verbatim(issue.message) });
        continue;
      }
      const accepted = spec.accept(parsed.data, row);
      if (Array.isArray(accepted)) {
        for (const e of accepted) addError(e);
        continue;
      }
      const size = encoder.encode(JSON.stringify(accepted.values)).length + 1;
      if (batch.length >= BATCH_ROWS || batchBytes + size > BATCH_JSON_BYTES) await flush();
      batch.push({ row, values: accepted.values });
      batchBytes += size;
    }
    await flush();
  } catch (err) {
    if (!(err instanceof XlsxError)) throw err;
    result.fatal = true;
    result.errors.push({ row: 0, message: err.text });
  }
  result.errors.sort((a, b) => a.row - b.row);
  return result;
}
