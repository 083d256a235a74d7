/**
 * Spreadsheet imports of teachers and administrative staff: the .xlsx reader, the upload
 * operations, the bulk consumer's importers (through the Worker's real queue handler), templates.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { and, eq, gt, inArray, sql } from "drizzle-orm";
import { strToU8, zipSync } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import { roleUsers, users } from "../src/db/core";
import type { QueueProducer } from "../src/deps";
import worker from "../src/index";
import { type Cell, excelDate, readXlsx, XlsxError, xlsxRows, xlsxStream } from "../src/lib/xlsx";
import { administrativeUsers } from "../src/modules/administrative-user/schema";
import { auditLog } from "../src/modules/audit-log/schema";
import { teachers } from "../src/modules/teacher/schema";
import { schoolUsers } from "../src/modules/user/schema";
import { OPENPYXL_TEACHERS } from "./fixtures/openpyxl-teachers";
import { DEMO, makeTestApp, problem } from "./helpers";

const bytesOf = async (stream: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(stream).arrayBuffer());
const xlsx = (columns: string[], rows: Cell[][]) => bytesOf(xlsxStream({ name: "Sheet", columns, rows }));

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
});

// --- The pipeline ---------------------------------------------------------------------------------

const sent: { bulkProcessId: number; schoolId: number }[] = [];
const recordingQueue: QueueProducer = {
  send: async (body) => {
    sent.push(body as (typeof sent)[number]);
  },
  sendBatch: async (messages) => {
    for (const m of messages) sent.push(m.body as (typeof sent)[number]);
  },
};
const t = makeTestApp({ queues: { push: env.PUSH_QUEUE, bulk: recordingQueue } });

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
      expect.objectContaining({ firstName: "Ana", subjects: '["Math","Biology"]', number: "T-1" }),
    ]);
    expect(await teacherOf(phone(4))).toEqual([
      expect.objectContaining({ firstName: "Dee", subjects: "[]", number: "T-4" }),
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
      expect.objectContaining({ firstName: "María José", subjects: '["Matemáticas","Física"]', number: "E-7" }),
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
      expect.objectContaining({ firstName: "Eva", subjects: '["Art","Music"]', number: "T-20b" }),
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
          subjects: { old: '["Art"]', new: '["Art","Music"]' },
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
    const staff = await t.token(DEMO.northAdmin.id, {
      1: ["bulk-process.read", "bulk-process.write", "administrative-user.read", "teacher.write"],
    });
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
    // Teachers they may write, so they may import them.
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
