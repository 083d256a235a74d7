/**
 * docs/samples/teachers.xlsx: the file the README's import walk-through uploads, written with the
 * app's own .xlsx writer (src/lib/xlsx.ts) in the teachers template's columns. Five teachers, two of
 * them with a mistake a school makes (a phone without its country code, an email without a domain),
 * so the walk-through shows per-row errors beside the rows imported. test/readme-import.test.ts
 * imports it and checks what the README says it gives.
 *
 *   npx tsx scripts/samples.ts           # writes the file
 *   npx tsx scripts/samples.ts --check   # fails if the file's rows are not these
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { verbatim } from "../src/lib/message";
import { type Cell, readXlsx, xlsxStream } from "../src/lib/xlsx";

export const SAMPLE_TEACHERS_FILE = fileURLToPath(new URL("../docs/samples/teachers.xlsx", import.meta.url));

export const SAMPLE_TEACHER_COLUMNS = [
  "Phone",
  "First name",
  "Last name",
  "Email",
  "Language",
  "Subjects",
  "Employee number",
] as const;

export const SAMPLE_TEACHER_ROWS: Cell[][] = [
  ["+1 555 710 0001", "Marta", "Ortiz", "marta.ortiz@example.org", "es", "Matemáticas, Física", "SAMPLE-1"],
  ["+15557100002", "Daniel", "Reyes", null, "en", "English", "SAMPLE-2"],
  ["5550100", "Lucía", "Hernández", "lucia.hernandez@example.org", "es", "Historia", "SAMPLE-3"],
  ["+15557100004", "Tomás", "Vega", "tomas.vega@", "es", "Música", "SAMPLE-4"],
  ["+1 (555) 710-0005", "Ana", "Quintero", "ana.quintero@example.org", "Español", "Ciencias", "SAMPLE-5"],
];

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes("--check")) {
    const rows = readXlsx(new Uint8Array(readFileSync(SAMPLE_TEACHERS_FILE)));
    const expected = [[...SAMPLE_TEACHER_COLUMNS], ...SAMPLE_TEACHER_ROWS];
    if (JSON.stringify(rows) !== JSON.stringify(expected)) {
      console.error(`${SAMPLE_TEACHERS_FILE} is not the sample: run npx tsx scripts/samples.ts`);
      process.exit(1);
    }
  } else {
    const bytes = new Uint8Array(
      await new Response(
        xlsxStream({
          name: verbatim("Teachers"),
          columns: SAMPLE_TEACHER_COLUMNS.map((c) => verbatim(c)),
          rows: SAMPLE_TEACHER_ROWS,
        }),
      ).arrayBuffer(),
    );
    writeFileSync(SAMPLE_TEACHERS_FILE, bytes);
    console.log(`wrote ${SAMPLE_TEACHERS_FILE} (${bytes.length} bytes)`);
  }
}
