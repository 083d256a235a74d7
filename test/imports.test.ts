/**
 * Spreadsheet imports of teachers and administrative staff: the .xlsx reader, the upload
 * operations, the bulk consumer's importers (through the Worker's real queue handler), templates.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { and, eq, gt, inArray, ne, sql } from "drizzle-orm";
import { strFromU8, strToU8, unzipSync, Zip, ZipDeflate, zipSync } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import { administrativeUsers } from "../src/db/schema/administrative-user";
import { auditLog } from "../src/db/schema/audit-log";
import { roleUsers, users } from "../src/db/schema/core";
import { teachers } from "../src/db/schema/teacher";
import { schoolUsers } from "../src/db/schema/user";
import worker from "../src/index";
import { verbatim } from "../src/lib/message";
import { type Cell, excelDate, READ_LIMITS, readXlsx, XlsxError, xlsxRows } from "../src/lib/xlsx";
import { grantsOf } from "../src/modules";
import { auditShapeProblems } from "./audit-shape";
import { OPENPYXL_TEACHERS } from "./fixtures/openpyxl-teachers";
import { DEMO, makeTestApp, problem, recordingBulkQueue } from "./helpers";
import { xlsx } from "./sheets";

/** A workbook written by hand: shared strings with rich text runs and a phonetic run, gaps. */
function handMade(): Uint8Array {
  const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  return zipSync({
    "[Content_Types].xml": strToU8("<Types/>"),
    "xl/workbook.xml": strToU8(
      `<workbook ${ns} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="People" sheetId="7" r:id="rId3"/></sheets></workbook>`,
    ),
    "xl/_rels/workbook.xml.rels": strToU8(
      '<Relationships><Relationship Id="rId3" Type="worksheet" Target="worksheets/data.xml"/></Relationships>',
    ),
    "xl/sharedStrings.xml": strToU8(
      `<sst ${ns} count="3" uniqueCount="3"><si><t>Phone</t></si><si><r><rPr><b/></rPr><t>Rich </t></r><r><t xml:space="preserve">text &amp; runs</t></r><rPh><t>ふりがな</t></rPh></si><si><t>Line_x000A_two</t></si></sst>`,
    ),
    "xl/worksheets/data.xml": strToU8(
      `<worksheet ${ns}><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" t="s"><v>1</v></c></row><row r="3" spans="1:4"><c r="B3" t="s"><v>2</v></c><c r="D3"><v>1.5E1</v></c><c r="E3" t="str"><v>=x</v></c><c r="F3" t="e"><v>#N/A</v></c><c r="G3"/></row></sheetData></worksheet>`,
    ),
  });
}

// --- Hostile files: builders ----------------------------------------------------------------------

const MB = 1024 * 1024;
const concat = (chunks: Uint8Array[]) => {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
};

/**
 * The workbook `xlsxFile` with an `xl/sharedStrings.xml` that unzips to `mb` MB of one repeated
 * byte (about 1 KB of zip per MB). Deflated as a stream, so the test never holds the big part.
 */
function withSharedStringsBomb(xlsxFile: Uint8Array, mb: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  const zip = new Zip((err, chunk) => {
    if (err) throw err;
    chunks.push(chunk);
  });
  for (const [name, data] of Object.entries(unzipSync(xlsxFile))) {
    const part = new ZipDeflate(name, { level: 6 });
    zip.add(part);
    part.push(data, true);
  }
  const sst = new ZipDeflate("xl/sharedStrings.xml", { level: 6 });
  zip.add(sst);
  sst.push(strToU8('<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>'));
  const block = new Uint8Array(MB).fill(0x41);
  for (let i = 0; i < mb; i++) sst.push(block);
  sst.push(strToU8("</t></si></sst>"), true);
  zip.end();
  return concat(chunks);
}

/** Where `name`'s central directory entry and local header are in a zip (a zip without comment). */
function entryOf(zip: Uint8Array, name: string) {
  const v = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const eocd = zip.length - 22;
  expect(v.getUint32(eocd, true)).toBe(0x06054b50);
  let at = v.getUint32(eocd + 16, true);
  for (let i = v.getUint16(eocd + 10, true); i > 0; i--) {
    const nameLength = v.getUint16(at + 28, true);
    if (strFromU8(zip.subarray(at + 46, at + 46 + nameLength)) === name) {
      return { view: v, central: at, local: v.getUint32(at + 42, true) };
    }
    at += 46 + nameLength + v.getUint16(at + 30, true) + v.getUint16(at + 32, true);
  }
  throw new Error(`${name} is not in the zip`);
}

/** A copy of `zip` whose headers (central and local, or only one) say other things of its part `name`. */
function lie(
  zip: Uint8Array,
  name: string,
  says: { size?: number; compressedSize?: number; crc?: number },
  only?: "central" | "local",
) {
  const out = zip.slice();
  const { view, central, local } = entryOf(out, name);
  // Bit 3: the local header leaves the sizes to a descriptor after the data (streamed zips).
  const inLocal = (view.getUint16(local + 6, true) & 8) === 0;
  const fields = { crc: [16, 14], compressedSize: [20, 18], size: [24, 22] } as const;
  for (const [field, [c, l]] of Object.entries(fields)) {
    const value = says[field as keyof typeof says];
    if (value === undefined) continue;
    if (only !== "local") view.setUint32(central + c, value, true);
    if (inLocal && only !== "central") view.setUint32(local + l, value, true);
  }
  return out;
}

/** What the headers of part `name` say: its compressed and unzipped sizes, its CRC. */
function said(zip: Uint8Array, name: string) {
  const { view, central } = entryOf(zip, name);
  return {
    crc: view.getUint32(central + 16, true),
    compressedSize: view.getUint32(central + 20, true),
    size: view.getUint32(central + 24, true),
  };
}

let bombCache: Uint8Array | undefined;
/** A teachers file (3 valid rows) whose shared strings unzip to 200 MB, made once. */
async function bomb(): Promise<Uint8Array> {
  bombCache ??= withSharedStringsBomb(
    await xlsx(["Phone", "First name", "Last name"], [[phone(900_001), "Bo", "Mb"]]),
    200,
  );
  return bombCache;
}

const SST = "xl/sharedStrings.xml";
const SHEET = "xl/worksheets/sheet1.xml";
const damaged = (part: string) => new RegExp(`^The file is damaged: ${part.replace(/\./g, "\\.")}`);

describe("the .xlsx reader", () => {
  it("reads back what the writer wrote: strings, numbers, booleans, empty cells", async () => {
    const bytes = await xlsx(
      ["Phone", "Name", "Count"],
      [
        ["+15550000001", "Ana <&> \"Q\" 'x'", 3],
        [" spaced ", null, true],
        ["Ünïcödé 🎓", "", 2.25],
      ],
    );
    expect(readXlsx(bytes)).toEqual([
      ["Phone", "Name", "Count"],
      ["+15550000001", "Ana <&> \"Q\" 'x'", 3],
      [" spaced ", null, true],
      ["Ünïcödé 🎓", null, 2.25],
    ]);
  });

  it("reads a file made by openpyxl: the first sheet, entities, a number, a gap, a boolean, a date serial", () => {
    const bytes = Uint8Array.from(atob(OPENPYXL_TEACHERS), (c) => c.charCodeAt(0));
    const rows = [...xlsxRows(bytes)];
    expect(rows.map((r) => r.row)).toEqual([1, 2, 3, 5]);
    expect(rows[0]?.cells).toEqual([
      "Teléfono",
      "Nombre",
      "Apellidos",
      "Correo",
      "Idioma",
      "Materias",
      "Número de empleado",
    ]);
    expect(rows[1]?.cells).toEqual([
      5215512345678,
      "María José",
      "Núñez & Díaz",
      "maria@example.com",
      "Español",
      "Matemáticas, Física",
      "E-7",
    ]);
    expect(rows[2]?.cells).toEqual(["+1 555 000 0150", "John", "<Smith>", null, "en", null, 42]);
    expect(rows[3]?.cells).toEqual(["+15550000151", null, "Gap", null, true, 46349]);
    expect(excelDate(46349)).toBe("2026-11-23");
  });

  it("reads shared strings with rich text runs (phonetic runs left out), gaps and the sheet the workbook names", () => {
    expect(readXlsx(handMade())).toEqual([
      ["Phone", null, "Rich text & runs"],
      [],
      [null, "Line\ntwo", null, 15, "=x", "#N/A"],
    ]);
  });

  it("refuses what is not an .xlsx, a file too large, too many rows (XlsxError, for row 0)", async () => {
    expect(() => readXlsx(strToU8("PK not a zip"))).toThrow(XlsxError);
    const bytes = await xlsx(
      ["A"],
      Array.from({ length: 20 }, (_, i) => [i]),
    );
    expect(() => readXlsx(bytes, { maxBytes: 100 })).toThrow(/at most/);
    expect(() => readXlsx(bytes, { maxRows: 10 })).toThrow(/more than 10 rows/);
    expect(readXlsx(bytes, { maxRows: 20 })).toHaveLength(21);
  });

  it("refuses a sheet over the row cap before yielding its first row", async () => {
    const bytes = await xlsx(
      ["A"],
      Array.from({ length: 11 }, (_, i) => [i]),
    );
    const rows = xlsxRows(bytes, { maxRows: 10 });
    expect(() => rows.next()).toThrow(
      new XlsxError(verbatim("The sheet has more than 10 rows; split it into files of at most 10")),
    );
  });

  it("a shared-strings bomb (200 MB unzipped from ~200 KB) is refused as too large", { timeout: 60_000 }, async () => {
    const file = await bomb();
    expect(file.length).toBeLessThan(400_000);
    expect(said(file, SST).size).toBeGreaterThan(200 * MB);
    expect(() => readXlsx(file)).toThrow(
      new XlsxError(
        verbatim(
          `The shared-string table (xl/sharedStrings.xml) unzips to more than ${READ_LIMITS.maxSharedStringsBytes / MB} MB, the most an import reads: split the file`,
        ),
      ),
    );
  });

  it("zip headers that understate a bomb do not help it: the reader stops as soon as the real bytes pass them", async () => {
    const file = await bomb();
    // Its data cut in half as well: a reader that inflated it all would meet the cut (about 100 MB
    // in) and say so; this one stops when the real bytes pass what the header says.
    const half = Math.floor(said(file, SST).compressedSize / 2);
    for (const size of [0, 1000, READ_LIMITS.maxSharedStringsBytes - 6 * MB]) {
      expect(() => readXlsx(lie(file, SST, { size, compressedSize: half }))).toThrow(
        new XlsxError(
          verbatim(
            `The file is damaged: xl/sharedStrings.xml unzips to more than the ${size} bytes its zip header says`,
          ),
        ),
      );
    }
    // And a lower limit than the file's header, set by the caller, is the limit.
    expect(() => readXlsx(lie(file, SST, { size: 10 * MB }), { maxSharedStringsBytes: MB })).toThrow(
      /xl\/sharedStrings\.xml\) unzips to more than 1 MB,/,
    );
  });

  it("a part whose real size or CRC is not its header's, or whose data is cut short, is damaged", async () => {
    const file = await xlsx(
      ["Phone", "Name"],
      Array.from({ length: 50 }, (_, i) => [phone(i), `Name ${i}`]),
    );
    expect(readXlsx(file)).toHaveLength(51);
    const sheet = said(file, SHEET);
    expect(() => readXlsx(lie(file, SHEET, { size: sheet.size - 100 }))).toThrow(
      `The file is damaged: ${SHEET} unzips to more than the ${sheet.size - 100} bytes its zip header says`,
    );
    expect(() => readXlsx(lie(file, SHEET, { size: sheet.size + 100 }))).toThrow(
      `The file is damaged: ${SHEET} unzips to ${sheet.size} bytes, not the ${sheet.size + 100} its zip header says`,
    );
    expect(() => readXlsx(lie(file, SHEET, { crc: (sheet.crc ^ 1) >>> 0 }))).toThrow(
      `The file is damaged: ${SHEET} fails its checksum (CRC-32)`,
    );
    expect(() => readXlsx(lie(file, SHEET, { compressedSize: sheet.compressedSize - 20 }))).toThrow(
      `The file is damaged: ${SHEET} is cut short`,
    );
    expect(() => readXlsx(lie(file, SHEET, { compressedSize: file.length }))).toThrow(damaged(SHEET));
    // A zip whose local headers carry the sizes (not a streamed one): both headers are checked.
    const made = handMade();
    const sst = said(made, SST);
    expect(() => readXlsx(lie(made, SST, { size: sst.size - 1 }))).toThrow(damaged(SST));
    expect(() => readXlsx(lie(made, SST, { size: sst.size - 1 }, "local"))).toThrow(damaged(SST));
    expect(() => readXlsx(lie(made, "xl/workbook.xml", { crc: 0 }, "local"))).toThrow(damaged("xl/workbook.xml"));
  });

  it("a row, or a shared string, longer than maxElementChars is refused (what is held while it is read)", async () => {
    const long = "x".repeat(READ_LIMITS.maxElementChars + 1000);
    const row = await xlsx(["A"], [[long]]);
    const rows = xlsxRows(row);
    expect(() => rows.next()).toThrow(
      `A row of the worksheet is longer than ${READ_LIMITS.maxElementChars.toLocaleString("en")} characters: the file cannot be imported`,
    );
    const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
    const sst = zipSync({
      "xl/sharedStrings.xml": strToU8(`<sst ${ns}><si><t>${long}</t></si></sst>`),
      "xl/worksheets/sheet1.xml": strToU8(
        `<worksheet ${ns}><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>`,
      ),
    });
    expect(() => readXlsx(sst)).toThrow(
      /^A string of the shared-string table \(xl\/sharedStrings\.xml\) is longer than/,
    );
    // Under the limit, the same string is read.
    expect(readXlsx(sst, { maxElementChars: long.length + 100 })).toEqual([[long]]);
  });

  it("each limit can be set per call: the worksheet, shared strings, other parts, the whole", () => {
    const made = handMade();
    expect(readXlsx(made)).toHaveLength(3);
    expect(() => readXlsx(made, { maxSharedStringsBytes: 100 })).toThrow(
      "The shared-string table (xl/sharedStrings.xml) unzips to more than 100 bytes, the most an import reads: split the file",
    );
    expect(() => readXlsx(made, { maxSheetBytes: 100 })).toThrow(
      /^The worksheet \(xl\/worksheets\/data\.xml\) unzips to more than 100 bytes/,
    );
    expect(() => readXlsx(made, { maxPartBytes: 100 })).toThrow(
      /^The part xl\/workbook\.xml unzips to more than 100 bytes/,
    );
    expect(() => readXlsx(made, { maxTotalBytes: 600 })).toThrow(/^The workbook unzips to more than 600 bytes/);
  });
});

// --- The pipeline ---------------------------------------------------------------------------------

const { sent, queue: recordingQueue } = recordingBulkQueue();
const t = makeTestApp({ queues: { bulk: recordingQueue } });

type Process = {
  id: number;
  entity: string;
  documentId: number;
  status: string;
  totalRows: number;
  processedRows: number;
  errors: { row: number; column?: string; message: string }[];
};

let north: string;
let south: string;
beforeAll(async () => {
  north = await t.token(DEMO.northAdmin.id, { 1: "all" });
  south = await t.token(DEMO.southAdmin.id, { 2: "all" });
});

let n = 0;
/** Stores `bytes` as a document of `school` (the object under the key the document names). */
async function uploaded(school: number, bytes: Uint8Array) {
  const slug = `${school}/documents/people-${Date.now().toString(36)}-${++n}.xlsx`;
  const res = await t.request("/api/v1/documents", {
    method: "POST",
    token: school === 1 ? north : south,
    school,
    body: { name: "People", slug },
  });
  expect(res.status).toBe(201);
  await env.DOCUMENTS.put(slug, bytes);
  return ((await res.json()) as { id: number }).id;
}

async function deliver(id: string, body: unknown) {
  const batch = createMessageBatch("school-bulk", [{ id, body, timestamp: new Date(), attempts: 1 }]);
  const ctx = createExecutionContext();
  await (worker as ExportedHandler<Env>).queue?.(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

/** Uploads the file, starts the import through the entity's upload operation, runs the consumer. */
async function runImport(path: string, bytes: Uint8Array, school = 1) {
  const documentId = await uploaded(school, bytes);
  const res = await t.request(path, {
    method: "POST",
    token: school === 1 ? north : south,
    school,
    body: { documentId },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const created = (await res.json()) as Process;
  expect(created).toMatchObject({ status: "queued", documentId });
  const message = sent.at(-1);
  expect(message).toEqual({ bulkProcessId: created.id, schoolId: school });
  const result = await deliver(`import-${created.id}`, message);
  expect(result.retryMessages).toEqual([]);
  return { process: await read(created.id, school), message };
}

async function read(id: number, school = 1) {
  const res = await t.request(`/api/v1/bulk-process/${id}`, { token: school === 1 ? north : south, school });
  expect(res.status).toBe(200);
  return (await res.json()) as Process;
}

const TEACHER_COLUMNS = ["Phone", "First name", "Last name", "Email", "Language", "Subjects", "Employee number"];
const phone = (i: number) => `+1555${String(7_000_000 + i).padStart(7, "0")}`;

async function teacherOf(phoneNumber: string, school = 1) {
  return t.db
    .select({
      userId: users.id,
      firstName: users.firstName,
      subjects: teachers.subjects,
      number: teachers.employeeNumber,
    })
    .from(users)
    .innerJoin(teachers, and(eq(teachers.userId, users.id), eq(teachers.schoolId, school)))
    .where(eq(users.phone, phoneNumber));
}

describe("POST /api/v1/teacher/upload-file", () => {
  it("imports the valid rows and lists each refused one with its row and column", async () => {
    const bytes = await xlsx(
      [...TEACHER_COLUMNS, "Ignored column"],
      [
        [phone(1), "Ana", "García", "ana@example.com", "es", "Math, Biology", "T-1", "x"],
        ["555-0100", "Bad", "Phone", null, null, null, null],
        [phone(2), "Ben", "", "not-an-email", "fr", null, null],
        [phone(1), "Ana", "Again", null, null, null, null],
        [Number(phone(3).slice(1)), "Cy", "Number", null, "English", "Art", "T-1"],
        [phone(4), "Dee", "Ok", null, null, null, "T-4"],
      ],
    );
    const audits = await t.db.select({ id: sql<number>`max(${auditLog.id})` }).from(auditLog);
    const { process } = await runImport("/api/v1/teacher/upload-file", bytes);
    expect(process).toMatchObject({ entity: "teachers", status: "completed", totalRows: 6, processedRows: 2 });
    expect(process.errors).toEqual([
      { row: 3, column: "Phone", message: "Not a phone number with its country code (like +52 55 1234 5678)" },
      { row: 4, column: "Last name", message: "Required" },
      { row: 4, column: "Email", message: "Not an email address" },
      { row: 4, column: "Language", message: "Expected es or en" },
      { row: 5, column: "Phone", message: `${phone(1)} is already in an earlier row of the file` },
      { row: 6, column: "Employee number", message: "Employee number T-1 is already in an earlier row of the file" },
    ]);
    expect(await teacherOf(phone(1))).toEqual([
      expect.objectContaining({ firstName: "Ana", subjects: ["Math", "Biology"], number: "T-1" }),
    ]);
    expect(await teacherOf(phone(4))).toEqual([
      expect.objectContaining({ firstName: "Dee", subjects: [], number: "T-4" }),
    ]);
    expect(await teacherOf(phone(2))).toEqual([]);
    // The role, the membership (trigger) and one audit row per record written.
    const ids = (
      await t.db
        .select({ id: users.id })
        .from(users)
        .where(inArray(users.phone, [phone(1), phone(4)]))
    ).map((u) => u.id);
    const roles = await t.db.select().from(roleUsers).where(inArray(roleUsers.userId, ids));
    expect(roles.map((r) => [r.schoolId, r.roleId])).toEqual([
      [1, 4],
      [1, 4],
    ]);
    expect(await t.db.select().from(schoolUsers).where(inArray(schoolUsers.userId, ids))).toHaveLength(2);
    const written = await t.db
      .select({
        entity: auditLog.entity,
        action: auditLog.action,
        actorType: auditLog.actorType,
        actorId: auditLog.actorId,
      })
      .from(auditLog)
      .where(and(gt(auditLog.id, audits[0]?.id ?? 0), inArray(auditLog.entity, ["user", "role-user", "teacher"])));
    const count = (entity: string) => written.filter((w) => w.entity === entity).length;
    expect([count("user"), count("role-user"), count("teacher")]).toEqual([2, 2, 2]);
    expect(written.every((w) => w.actorType === "import" && w.actorId === process.id)).toBe(true);
  });

  it("reads Spanish headers in any order and a file made by openpyxl", async () => {
    const bytes = Uint8Array.from(atob(OPENPYXL_TEACHERS), (c) => c.charCodeAt(0));
    const { process } = await runImport("/api/v1/teacher/upload-file", bytes);
    // Row 5 has no name: refused, named by the file's own header.
    expect(process).toMatchObject({ status: "completed", totalRows: 3, processedRows: 2 });
    expect(process.errors).toEqual([
      { row: 5, column: "Nombre", message: "Required" },
      { row: 5, column: "Idioma", message: "Expected es or en" },
    ]);
    expect(await teacherOf("+525512345678")).toEqual([
      expect.objectContaining({ firstName: "María José", subjects: ["Matemáticas", "Física"], number: "E-7" }),
    ]);
    expect(await teacherOf("+15550000150")).toEqual([expect.objectContaining({ firstName: "John", number: "42" })]);
  });

  it("a missing required column fails the file (row 1); an unreadable file fails it (row 0)", async () => {
    const noPhone = await xlsx(["First name", "Last name"], [["A", "B"]]);
    const a = (await runImport("/api/v1/teacher/upload-file", noPhone)).process;
    expect(a).toMatchObject({
      status: "failed",
      processedRows: 0,
      errors: [{ row: 1, column: "Phone", message: "Missing column Phone" }],
    });
    const b = (await runImport("/api/v1/teacher/upload-file", strToU8("PK but not a zip"))).process;
    expect(b).toMatchObject({
      status: "failed",
      errors: [{ row: 0, message: "The file is not an .xlsx workbook (it could not be unzipped)" }],
    });
  });

  it("a redelivered message does no second import; importing the file again updates, not duplicates", async () => {
    const rows = [
      [phone(20), "Eva", "One", null, null, "Art", "T-20"],
      [phone(21), "Fer", "Two", null, null, null, null],
    ];
    const first = await runImport("/api/v1/teacher/upload-file", await xlsx(TEACHER_COLUMNS, rows));
    expect(first.process).toMatchObject({ status: "completed", processedRows: 2 });
    const audits = await t.db.select({ id: sql<number>`max(${auditLog.id})` }).from(auditLog);
    const since = audits[0]?.id ?? 0;

    // The same message again (a new delivery id too): the claim finds no queued process.
    await deliver(`import-${first.process.id}`, first.message);
    await deliver(`again-${first.process.id}`, first.message);
    expect(await read(first.process.id)).toEqual(first.process);

    // The same file as a second process: nothing changes, nothing is audited but the process.
    const same = await runImport("/api/v1/teacher/upload-file", await xlsx(TEACHER_COLUMNS, rows));
    expect(same.process).toMatchObject({ status: "completed", totalRows: 2, processedRows: 2, errors: [] });
    const quiet = await t.db
      .select({ entity: auditLog.entity })
      .from(auditLog)
      .where(and(gt(auditLog.id, since), inArray(auditLog.entity, ["user", "role-user", "teacher"])));
    expect(quiet).toEqual([]);

    // A corrected file: the profile is updated (one audit row), the user and role stay one.
    const fixed = [[phone(20), "Eva", "Renamed", null, null, "Art, Music", "T-20b"]];
    await runImport("/api/v1/teacher/upload-file", await xlsx(TEACHER_COLUMNS, fixed));
    expect(await teacherOf(phone(20))).toEqual([
      // A known person keeps their name (as enrol does); the profile takes the file's values.
      expect.objectContaining({ firstName: "Eva", subjects: ["Art", "Music"], number: "T-20b" }),
    ]);
    expect(
      await t.db
        .select()
        .from(users)
        .where(eq(users.phone, phone(20))),
    ).toHaveLength(1);
    const updates = await t.db
      .select({ entity: auditLog.entity, action: auditLog.action, changes: auditLog.changes })
      .from(auditLog)
      .where(and(gt(auditLog.id, since), inArray(auditLog.entity, ["user", "role-user", "teacher"])));
    expect(updates).toEqual([
      {
        entity: "teacher",
        action: "update",
        changes: JSON.stringify({
          subjects: { old: ["Art"], new: ["Art", "Music"] },
          employeeNumber: { old: "T-20", new: "T-20b" },
        }),
      },
    ]);
  });

  it("a number another school knows: this school sees the file's name and email, the other school its own", async () => {
    const known = phone(40);
    const created = await t.request("/api/v1/teacher", {
      method: "POST",
      token: south,
      school: 2,
      body: { phone: known, firstName: "Secreta", lastName: "Sur", email: "secret@south.test" },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { userId } = (await created.json()) as { userId: number };
    const { process } = await runImport(
      "/api/v1/teacher/upload-file",
      await xlsx(TEACHER_COLUMNS, [[known, "Ana", "Norte", "ana@north.test", null, "Art", null]]),
    );
    expect(process).toMatchObject({ status: "completed", processedRows: 1, errors: [] });
    const here = await t.request(`/api/v1/user/${userId}`, { token: north, school: 1 });
    expect(await here.json()).toMatchObject({ firstName: "Ana", lastName: "Norte", email: "ana@north.test" });
    const there = await t.request(`/api/v1/user/${userId}`, { token: south, school: 2 });
    expect(await there.json()).toMatchObject({ firstName: "Secreta", lastName: "Sur", email: "secret@south.test" });
  });

  it("an employee number another teacher of the school has is a row error; the rest is imported", async () => {
    await runImport(
      "/api/v1/teacher/upload-file",
      await xlsx(TEACHER_COLUMNS, [[phone(30), "G", "H", null, null, null, "T-30"]]),
    );
    const { process } = await runImport(
      "/api/v1/teacher/upload-file",
      await xlsx(TEACHER_COLUMNS, [
        [phone(31), "I", "J", null, null, null, "T-30"],
        [phone(32), "K", "L", null, null, null, null],
      ]),
    );
    expect(process).toMatchObject({ status: "completed", processedRows: 1 });
    expect(process.errors).toEqual([
      { row: 2, column: "Employee number", message: "Employee number T-30 belongs to another person in the school" },
    ]);
  });

  it("another school's document, or none, is a 404 and nothing is queued", async () => {
    const theirs = await uploaded(2, await xlsx(TEACHER_COLUMNS, []));
    const before = sent.length;
    for (const documentId of [theirs, 999999]) {
      const res = await t.request("/api/v1/teacher/upload-file", {
        method: "POST",
        token: north,
        school: 1,
        body: { documentId },
      });
      expect(res.status).toBe(404);
      expect((await problem(res)).detail).toBe(`Document ${documentId} not found`);
    }
    expect(sent.length).toBe(before);
  });

  it("needs bulk-process.write", async () => {
    const reader = await t.token(DEMO.northAdmin.id, { 1: ["bulk-process.read"] });
    const res = await t.request("/api/v1/teacher/upload-file", {
      method: "POST",
      token: reader,
      school: 1,
      body: { documentId: 1 },
    });
    expect(res.status).toBe(403);
  });
});

describe("POST /api/v1/administrative-user/upload-file", () => {
  it("imports staff with their position; a person already a teacher becomes staff too", async () => {
    const { process } = await runImport(
      "/api/v1/administrative-user/upload-file",
      await xlsx(
        ["Teléfono", "Nombre", "Apellido", "Puesto", "Número de empleado"],
        [
          [phone(40), "Mia", "Staff", "Registrar", "A-40"],
          [phone(1), "Ana", "García", "Coordinator", null],
        ],
      ),
    );
    expect(process).toMatchObject({
      entity: "administrative-staff",
      status: "completed",
      processedRows: 2,
      errors: [],
    });
    const staff = await t.db
      .select({
        phone: users.phone,
        position: administrativeUsers.position,
        number: administrativeUsers.employeeNumber,
      })
      .from(administrativeUsers)
      .innerJoin(users, eq(users.id, administrativeUsers.userId))
      .where(and(eq(administrativeUsers.schoolId, 1), inArray(users.phone, [phone(40), phone(1)])))
      .orderBy(users.phone);
    expect(staff).toEqual([
      { phone: phone(1), position: "Coordinator", number: null },
      { phone: phone(40), position: "Registrar", number: "A-40" },
    ]);
    expect(await teacherOf(phone(1))).toHaveLength(1);
  });

  it("staff (bulk-process.write, not administrative-user.write) cannot import staff, by either path: 403", async () => {
    const documentId = await uploaded(1, await xlsx(["Phone", "First name", "Last name"], [[phone(41), "Eve", "S"]]));
    // The built-in staff role: every teacher permission, not administrative-user.write.
    const staff = await t.token(DEMO.northAdmin.id, { 1: grantsOf("staff").map((p) => p.name) });
    const before = sent.length;
    for (const [path, body] of [
      ["/api/v1/administrative-user/upload-file", { documentId }],
      ["/api/v1/bulk-process", { entity: "administrative-staff", documentId }],
    ] as const) {
      const res = await t.request(path, { method: "POST", token: staff, school: 1, body });
      expect(res.status).toBe(403);
      expect((await problem(res)).detail).toMatch(/administrative-user\.write/);
    }
    expect(sent.length).toBe(before);
    // Teachers they may make (teacher.write and every permission of the role), so they may import them.
    const ok = await t.request("/api/v1/teacher/upload-file", {
      method: "POST",
      token: staff,
      school: 1,
      body: { documentId },
    });
    expect(ok.status).toBe(201);
  });
});

describe("5,000 teachers", () => {
  it("imports a file of 5,000 rows end to end", async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => [
      phone(100_000 + i),
      `First ${i}`,
      `Last ${i}`,
      `teacher${i}@example.com`,
      i % 2 ? "en" : "es",
      "Math, Science, History",
      `E-${100_000 + i}`,
    ]);
    const bytes = await xlsx(TEACHER_COLUMNS, rows);
    const started = performance.now();
    const { process } = await runImport("/api/v1/teacher/upload-file", bytes);
    const ms = performance.now() - started;
    console.info(`5,000-row teacher import: ${Math.round(ms)} ms end to end (${bytes.length} bytes of .xlsx)`);
    expect(process).toMatchObject({ status: "completed", totalRows: 5000, processedRows: 5000, errors: [] });
    const [count] = await t.db
      .select({ n: sql<number>`count(*)` })
      .from(teachers)
      .innerJoin(users, eq(users.id, teachers.userId))
      .where(and(eq(teachers.schoolId, 1), sql`${users.phone} BETWEEN ${phone(100_000)} AND ${phone(104_999)}`));
    expect(count?.n).toBe(5000);
  }, 60_000);
});

describe("batches bounded by bytes", () => {
  it("rows of long values are split by JSON size (~80 KB), not only by count, and all arrive", async () => {
    // ~450 bytes of JSON per row: 300 rows are ~135 KB, more than one statement may carry.
    const long = (i: number, c: string) => `${c.repeat(90)}${i}`;
    const subjects = Array.from({ length: 20 }, (_, k) => `Subject number ${k}`).join(", ");
    const rows = Array.from({ length: 300 }, (_, i) => [
      phone(200_000 + i),
      long(i, "F"),
      long(i, "L"),
      null,
      null,
      subjects,
      null,
    ]);
    const { process } = await runImport("/api/v1/teacher/upload-file", await xlsx(TEACHER_COLUMNS, rows));
    expect(process).toMatchObject({ status: "completed", totalRows: 300, processedRows: 300, errors: [] });
    expect(await teacherOf(phone(200_299))).toEqual([expect.objectContaining({ firstName: long(299, "F") })]);
  });
});

describe("GET /api/v1/bulk-process/template/{entity}", () => {
  it.each([
    ["teachers", TEACHER_COLUMNS],
    ["administrative-staff", ["Phone", "First name", "Last name", "Email", "Language", "Position", "Employee number"]],
  ])("%s: an .xlsx the reader reads, whose example row imports", async (entity, columns) => {
    const res = await t.request(`/api/v1/bulk-process/template/${entity}`, { token: north, school: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    const rows = readXlsx(new Uint8Array(await res.arrayBuffer()));
    expect(rows[0]).toEqual(columns);
    expect(rows).toHaveLength(2);
  });

  it("400 for an entity without an import", async () => {
    const res = await t.request("/api/v1/bulk-process/template/buses", { token: north, school: 1 });
    expect(res.status).toBe(400);
  });
});

// --- Files that must not import -------------------------------------------------------------------

/** Every import, with a row builder whose rows it imports. */
const IMPORTERS = [
  {
    path: "/api/v1/teacher/upload-file",
    columns: ["Phone", "First name", "Last name"],
    row: (i: number): Cell[] => [phone(300_000 + i), "Hostile", `Teacher ${i}`],
  },
  {
    path: "/api/v1/administrative-user/upload-file",
    columns: ["Phone", "First name", "Last name"],
    row: (i: number): Cell[] => [phone(320_000 + i), "Hostile", `Staff ${i}`],
  },
  {
    path: "/api/v1/family/upload-file",
    columns: ["Family number", "Family name", "Student id number", "Student first name", "Student last name"],
    row: (i: number): Cell[] => [`HF-${i}`, "Hostile", `HS-${i}`, "Hostile", `Student ${i}`],
  },
  {
    path: "/api/v1/group/upload-file",
    columns: ["Name", "Level", "School year"],
    row: (i: number): Cell[] => [`Hostile ${i}`, "elementary", "2026-2027"],
  },
];

/** What an import wrote: its audit rows (every write of an import has one), the process's own left out. */
const writtenBy = (processId: number) =>
  t.db
    .select({ entity: auditLog.entity })
    .from(auditLog)
    .where(and(eq(auditLog.actorType, "import"), eq(auditLog.actorId, processId), ne(auditLog.entity, "bulk-process")));

/** The process failed for `reason` alone, and wrote nothing. */
async function refused(process: Process, reason: string | RegExp) {
  expect(process).toMatchObject({ status: "failed", processedRows: 0 });
  expect(process.errors).toEqual([
    { row: 0, message: typeof reason === "string" ? reason : expect.stringMatching(reason) },
  ]);
  expect(await writtenBy(process.id)).toEqual([]);
}

describe.each(IMPORTERS)("files that must not import, through $path", ({ path, columns, row }) => {
  it("a shared-strings bomb fails saying so; a redelivered message does nothing", { timeout: 60_000 }, async () => {
    const { process, message } = await runImport(path, await bomb());
    await refused(process, /^The shared-string table \(xl\/sharedStrings\.xml\) unzips to more than \d+ MB/);
    await deliver(`import-${process.id}`, message);
    await deliver(`again-${process.id}`, message);
    expect(await read(process.id)).toEqual(process);
  });

  it("a bomb whose zip headers understate it fails as damaged", async () => {
    const file = lie(await bomb(), SST, { size: 1000 });
    const { process } = await runImport(path, file);
    await refused(process, `The file is damaged: ${SST} unzips to more than the 1000 bytes its zip header says`);
  });

  it("a worksheet whose zip headers understate its size fails as damaged, never imported cut short", async () => {
    const file = await xlsx(
      columns,
      Array.from({ length: 200 }, (_, i) => row(100 + i)),
    );
    const size = Math.floor(said(file, SHEET).size / 2);
    const { process } = await runImport(path, lie(file, SHEET, { size }));
    await refused(process, `The file is damaged: ${SHEET} unzips to more than the ${size} bytes its zip header says`);
  });

  it("a worksheet whose data is cut short or fails its CRC fails as damaged", async () => {
    const file = await xlsx(columns, [row(400), row(401)]);
    const sheet = said(file, SHEET);
    const cut = await runImport(path, lie(file, SHEET, { compressedSize: sheet.compressedSize - 10 }));
    await refused(cut.process, `The file is damaged: ${SHEET} is cut short`);
    const crc = await runImport(path, lie(file, SHEET, { crc: (sheet.crc ^ 0xff) >>> 0 }));
    await refused(crc.process, `The file is damaged: ${SHEET} fails its checksum (CRC-32)`);
  });

  it("a file over the row cap writes nothing and fails with the cap", { timeout: 120_000 }, async () => {
    // The rows themselves import.
    const few = await runImport(path, await xlsx(columns, [row(0), row(1), row(2)]));
    expect(few.process).toMatchObject({ status: "completed", processedRows: 3, errors: [] });
    expect((await writtenBy(few.process.id)).length).toBeGreaterThan(0);

    const cap = READ_LIMITS.maxRows;
    const many = Array.from({ length: cap + 2000 }, (_, i) => row(1000 + i));
    const { process } = await runImport(path, await xlsx(columns, many));
    await refused(process, `The sheet has more than ${cap} rows; split it into files of at most ${cap}`);
  });
});

describe("the audit rows the imports wrote", () => {
  it("are { old, new } pairs of typed values", async () => {
    const rows = await t.db.select().from(auditLog);
    expect(rows.length).toBeGreaterThan(10);
    expect(auditShapeProblems(rows)).toEqual([]);
  });
});
