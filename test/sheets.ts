/** Workbooks the import tests upload, written by the app's own writer (src/lib/xlsx.ts). */
import { verbatim } from "../src/lib/message";
import { type Cell, xlsxStream } from "../src/lib/xlsx";

/** One sheet of `columns` (their headers as written) and `rows`, as the bytes of an .xlsx file. */
export async function xlsx(columns: string[], rows: Cell[][], name = "Sheet"): Promise<Uint8Array> {
  const stream = xlsxStream({ name: verbatim(name), columns: columns.map(verbatim), rows });
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The family import's headers (POST /api/v1/family/upload-file), in the template's order. */
export const FAMILY_COLUMNS = [
  "Family number",
  "Family name",
  "Student id number",
  "Student first name",
  "Student last name",
  "Level",
  "Birth date",
  "Parent 1 phone",
  "Parent 1 first name",
  "Parent 1 last name",
  "Parent 1 relationship",
  "Parent 2 phone",
  "Parent 2 first name",
  "Parent 2 last name",
  "Parent 2 relationship",
];
