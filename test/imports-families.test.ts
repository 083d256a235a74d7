/**
 * Spreadsheet imports of families (students, parents, guardians) and groups (teachers, students),
 * through the upload operations and the Worker's real queue handler; their templates.
 */

import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { and, eq, gt, inArray, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { roleUsers, schools, users } from "../src/db/schema/core";
import { families } from "../src/db/schema/family";
import { groupStudents, groups, groupTeachers } from "../src/db/schema/group";
import { parents } from "../src/db/schema/parent";
import { guardians, students } from "../src/db/schema/student";
import worker from "../src/index";
import { type Cell, readXlsx } from "../src/lib/xlsx";
import { auditShapeProblems } from "./audit-shape";
import { DEMO, makeTestApp, problem, recordingBulkQueue } from "./helpers";
import { FAMILY_COLUMNS, xlsx } from "./sheets";

const { sent, queue: recordingQueue } = recordingBulkQueue();
const t = makeTestApp({ queues: { bulk: recordingQueue } });

type Process = {
  id: number;
  entity: string;
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
  await t.db
    .update(schools)
    .set({ levels: ["elementary", "middle"] })
    .where(eq(schools.id, 1));
});

let n = 0;
async function uploaded(school: number, bytes: Uint8Array) {
  const slug = `${school}/documents/families-${Date.now().toString(36)}-${++n}.xlsx`;
  const res = await t.request("/api/v1/documents", {
    method: "POST",
    token: school === 1 ? north : south,
    school,
    body: { name: "Families", slug },
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

async function read(id: number) {
  const res = await t.request(`/api/v1/bulk-process/${id}`, { token: north, school: 1 });
  expect(res.status).toBe(200);
  return (await res.json()) as Process;
}

async function runImport(path: string, bytes: Uint8Array) {
  const documentId = await uploaded(1, bytes);
  const res = await t.request(path, { method: "POST", token: north, school: 1, body: { documentId } });
  expect(res.status, await res.clone().text()).toBe(201);
  const created = (await res.json()) as Process;
  const message = sent.at(-1);
  expect(message).toEqual({ bulkProcessId: created.id, schoolId: 1 });
  const result = await deliver(`import-${created.id}`, message);
  expect(result.retryMessages).toEqual([]);
  return { process: await read(created.id), message };
}

const GROUP_COLUMNS = ["Name", "Level", "School year", "Grade", "Teacher phones", "Student id numbers"];
const phone = (i: number) => `+1555${String(8_000_000 + i).padStart(7, "0")}`;

/** The family of a number: its parents' phones and its students' id numbers, sorted. */
async function familyOf(number: string) {
  const [family] = await t.db
    .select()
    .from(families)
    .where(and(eq(families.schoolId, 1), eq(families.familyNumber, number)));
  if (!family) return undefined;
  const ps = await t.db
    .select({ phone: users.phone, relationship: parents.relationship })
    .from(parents)
    .innerJoin(users, eq(users.id, parents.userId))
    .where(eq(parents.familyId, family.id))
    .orderBy(users.phone);
  const ss = await t.db
    .select({ idNumber: students.idNumber, firstName: students.firstName, level: students.level })
    .from(students)
    .where(eq(students.familyId, family.id))
    .orderBy(students.idNumber);
  return { name: family.name, parents: ps, students: ss };
}

const count = async (table: typeof families | typeof students | typeof guardians) =>
  (await t.db.select({ n: sql<number>`count(*)` }).from(table))[0]?.n ?? 0;

describe("POST /api/v1/family/upload-file", () => {
  it("creates families, students, parents (role, profile, family) and guardians; Spanish headers", async () => {
    const bytes = await xlsx(
      [
        "Número de familia",
        "Nombre de familia",
        "Matrícula",
        "Nombre alumno",
        "Apellidos alumno",
        "Nivel",
        "Fecha de nacimiento",
        "Teléfono padre 1",
        "Nombre padre 1",
        "Apellido padre 1",
        "Parentesco padre 1",
        "Teléfono padre 2",
        "Nombre padre 2",
        "Apellido padre 2",
        "Parentesco padre 2",
      ],
      [
        [
          "F-1",
          "Uno",
          "S-1",
          "Ana",
          "Uno",
          "Primaria",
          43000,
          phone(1),
          "Marta",
          "Uno",
          "Madre",
          phone(2),
          "Juan",
          "Uno",
          "padre",
        ],
        [
          "F-1",
          "Uno",
          "S-2",
          "Beto",
          "Uno",
          "middle",
          "2012-03-04",
          phone(1),
          null,
          null,
          null,
          null,
          null,
          null,
          null,
        ],
        ["F-2", "Dos", "S-3", "Caro", "Dos", null, null, phone(3), "Luz", "Dos", null, null, null, null, null],
      ],
    );
    const audits = (await t.db.select({ id: sql<number>`max(${auditLog.id})` }).from(auditLog))[0]?.id ?? 0;
    const { process } = await runImport("/api/v1/family/upload-file", bytes);
    expect(process).toMatchObject({
      entity: "families",
      status: "completed",
      totalRows: 3,
      processedRows: 3,
      errors: [],
    });
    expect(await familyOf("F-1")).toEqual({
      name: "Uno",
      parents: [
        { phone: phone(1), relationship: "mother" },
        { phone: phone(2), relationship: "father" },
      ],
      students: [
        { idNumber: "S-1", firstName: "Ana", level: "elementary" },
        { idNumber: "S-2", firstName: "Beto", level: "middle" },
      ],
    });
    const [ana] = await t.db.select().from(students).where(eq(students.idNumber, "S-1"));
    expect(ana?.birthDate).toBe("2017-09-22");
    expect((await familyOf("F-2"))?.parents).toEqual([{ phone: phone(3), relationship: "guardian" }]);
    // One user each, the parent role, guardians parent x student of the row.
    const ids = (
      await t.db
        .select({ id: users.id })
        .from(users)
        .where(inArray(users.phone, [phone(1), phone(2), phone(3)]))
    ).map((u) => u.id);
    expect(ids).toHaveLength(3);
    const roles = await t.db.select().from(roleUsers).where(inArray(roleUsers.userId, ids));
    expect(roles.map((r) => [r.schoolId, r.roleId])).toEqual([
      [1, 5],
      [1, 5],
      [1, 5],
    ]);
    const links = await t.db
      .select({ s: students.idNumber, p: users.phone, r: guardians.relationship })
      .from(guardians)
      .innerJoin(students, eq(students.id, guardians.studentId))
      .innerJoin(parents, eq(parents.id, guardians.parentId))
      .innerJoin(users, eq(users.id, parents.userId))
      .where(inArray(users.id, ids))
      .orderBy(students.idNumber, users.phone);
    expect(links).toEqual([
      { s: "S-1", p: phone(1), r: "mother" },
      { s: "S-1", p: phone(2), r: "father" },
      { s: "S-2", p: phone(1), r: "mother" },
      { s: "S-3", p: phone(3), r: "guardian" },
    ]);
    const written = await t.db
      .select({ entity: auditLog.entity, action: auditLog.action, actorId: auditLog.actorId })
      .from(auditLog)
      .where(gt(auditLog.id, audits));
    const tally = (entity: string, action: string) =>
      written.filter((w) => w.entity === entity && w.action === action).length;
    expect(
      [
        ["family", "create"],
        ["user", "create"],
        ["role-user", "create"],
        ["parent", "update"],
        ["student", "create"],
        ["guardian", "create"],
      ].map(([e, a]) => tally(e as string, a as string)),
    ).toEqual([2, 3, 3, 3, 3, 4]);
  });

  it("a re-import updates rather than duplicates; the same file again writes nothing; redelivery does nothing", async () => {
    const rows: Cell[][] = [
      [
        "F-10",
        "Diez",
        "S-10",
        "Dora",
        "Diez",
        "elementary",
        null,
        phone(10),
        "Pia",
        "Diez",
        "mother",
        null,
        null,
        null,
        null,
      ],
    ];
    const first = await runImport("/api/v1/family/upload-file", await xlsx(FAMILY_COLUMNS, rows));
    expect(first.process).toMatchObject({ status: "completed", processedRows: 1 });
    const before = [await count(families), await count(students), await count(guardians)];
    const audits = (await t.db.select({ id: sql<number>`max(${auditLog.id})` }).from(auditLog))[0]?.id ?? 0;

    // Redelivered (same id, or a new delivery id): the claim finds no queued process.
    await deliver(`import-${first.process.id}`, first.message);
    await deliver(`again-${first.process.id}`, first.message);
    expect(await read(first.process.id)).toEqual(first.process);

    const same = await runImport("/api/v1/family/upload-file", await xlsx(FAMILY_COLUMNS, rows));
    expect(same.process).toMatchObject({ status: "completed", processedRows: 1, errors: [] });
    const quiet = await t.db
      .select({ entity: auditLog.entity })
      .from(auditLog)
      .where(and(gt(auditLog.id, audits), sql`${auditLog.entity} NOT IN ('bulk-process', 'document')`));
    expect(quiet).toEqual([]);

    const fixed: Cell[][] = [
      [
        "F-10",
        "Diez Renamed",
        "S-10",
        "Dorotea",
        "Diez",
        "middle",
        null,
        phone(10),
        "Pia",
        "Diez",
        "mother",
        null,
        null,
        null,
        null,
      ],
    ];
    await runImport("/api/v1/family/upload-file", await xlsx(FAMILY_COLUMNS, fixed));
    expect([await count(families), await count(students), await count(guardians)]).toEqual(before);
    expect(await familyOf("F-10")).toMatchObject({
      name: "Diez Renamed",
      students: [{ idNumber: "S-10", firstName: "Dorotea", level: "middle" }],
    });
  });

  it("matches family numbers whatever their case or accents: in the file, and against the school's families", async () => {
    const before = await count(families);
    // Two spellings of one number in one file: one family (spelt as first seen), both students in it.
    const first = await runImport(
      "/api/v1/family/upload-file",
      await xlsx(FAMILY_COLUMNS, [
        [
          "Núm-70",
          "Setenta",
          "S-70",
          "Uno",
          "Caso",
          null,
          null,
          phone(70),
          "Ana",
          "Caso",
          null,
          null,
          null,
          null,
          null,
        ],
        [
          "NUM-70",
          "Setenta",
          "S-71",
          "Dos",
          "Caso",
          null,
          null,
          phone(71),
          "Ana",
          "Caso",
          null,
          null,
          null,
          null,
          null,
        ],
      ]),
    );
    expect(first.process).toMatchObject({ status: "completed", processedRows: 2, errors: [] });
    expect(await count(families)).toBe(before + 1);
    expect(await familyOf("Núm-70")).toMatchObject({
      parents: [{ phone: phone(70) }, { phone: phone(71) }],
      students: [{ idNumber: "S-70" }, { idNumber: "S-71" }],
    });
    // A later file's "num-70" renames that family and adds to it; its number keeps its spelling.
    const again = await runImport(
      "/api/v1/family/upload-file",
      await xlsx(FAMILY_COLUMNS, [
        [
          "num-70",
          "Setenta Renamed",
          "S-72",
          "Tres",
          "Caso",
          null,
          null,
          null,
          null,
          null,
          null,
          null,
          null,
          null,
          null,
        ],
      ]),
    );
    expect(again.process).toMatchObject({ status: "completed", processedRows: 1, errors: [] });
    expect(await count(families)).toBe(before + 1);
    expect(await familyOf("Núm-70")).toMatchObject({
      name: "Setenta Renamed",
      students: [{ idNumber: "S-70" }, { idNumber: "S-71" }, { idNumber: "S-72" }],
    });
    // A parent of "Núm-70" in a row of "NUM-70" is in the same family, not in another one.
    const same = await runImport(
      "/api/v1/family/upload-file",
      await xlsx(FAMILY_COLUMNS, [
        [
          "NUM-70",
          "Setenta Renamed",
          "S-73",
          "Cuatro",
          "Caso",
          null,
          null,
          phone(70),
          "Ana",
          "Caso",
          null,
          null,
          null,
          null,
          null,
        ],
      ]),
    );
    expect(same.process).toMatchObject({ status: "completed", processedRows: 1, errors: [] });
  });

  it("per-row errors with row and column; a student or a parent in another family; the rest imports", async () => {
    await runImport(
      "/api/v1/family/upload-file",
      await xlsx(FAMILY_COLUMNS, [
        [
          "F-20",
          "Veinte",
          "S-20",
          "Eva",
          "Veinte",
          null,
          null,
          phone(20),
          "Ua",
          "Veinte",
          null,
          null,
          null,
          null,
          null,
        ],
      ]),
    );
    const { process } = await runImport(
      "/api/v1/family/upload-file",
      await xlsx(FAMILY_COLUMNS, [
        ["F-21", "", "S-21", "Fe", "V", "college", "31/02/2015", "12", null, null, "aunt", null, null, null, null],
        ["F-21", "Otra", "S-20", "Eva", "Veinte", null, null, null, null, null, null, null, null, null, null],
        ["F-21", "Otra", "S-22", "Gil", "V", null, null, phone(20), null, null, null, null, null, null, null],
        ["F-21", "Otra", "S-23", "Hal", "V", null, null, phone(23), null, null, null, null, null, null, null],
        ["F-21", "Otra", "S-24", "Ivo", "V", null, null, phone(24), "Ok", "Person", null, null, "Only", "Name", null],
        ["F-21", "Otra", "S-25", "Jo", "V", null, null, phone(24), null, null, null, null, null, null, null],
        ["F-21", "Otra", "S-25", "Jo", "V", null, null, null, null, null, null, null, null, null, null],
        ["F-21", "Otra", "S-26", "Jo", "V", null, null, null, null, null, null, null, null, null, null],
        ["F-21", "Otra", "S-27", "Kim", "V", "Preescolar", null, null, null, null, null, null, null, null, null],
        // A real date, but of no pupil: outside the range every date the service takes (src/lib/dates.ts).
        ["F-21", "Otra", "S-28", "Lu", "V", null, "31/12/1999", null, null, null, null, null, null, null, null],
      ]),
    );
    expect(process).toMatchObject({ status: "completed", totalRows: 10, processedRows: 1 });
    expect(process.errors).toEqual([
      { row: 2, column: "Family name", message: "Required" },
      { row: 2, column: "Level", message: "Expected one of preschool, elementary, middle, high" },
      { row: 2, column: "Birth date", message: "Not a date (YYYY-MM-DD or DD/MM/YYYY)" },
      { row: 2, column: "Parent 1 phone", message: "Not a phone number with its country code (like +52 55 1234 5678)" },
      {
        row: 2,
        column: "Parent 1 relationship",
        message: "Expected one of mother, father, guardian, grandparent, other",
      },
      {
        row: 3,
        column: "Student id number",
        message: "Student S-20 is already in another family (F-20); a student is in one family",
      },
      {
        row: 4,
        column: "Parent 1 phone",
        message: `${phone(20)} is already in another family (F-20); a parent is in one family`,
      },
      { row: 5, column: "Parent 1 phone", message: "A new person: parent 1's first and last name are required" },
      { row: 6, column: "Parent 2 phone", message: "Required with parent 2's other cells" },
      // Row 6 was refused: the phone is still a new person without a name.
      { row: 7, column: "Parent 1 phone", message: "A new person: parent 1's first and last name are required" },
      { row: 8, column: "Student id number", message: "Student S-25 is already in an earlier row of the file" },
      // A level the product knows but this school does not offer (it offers elementary and middle here).
      {
        row: 10,
        column: "Level",
        message: "The school does not offer the level preschool; it offers elementary, middle",
      },
      { row: 11, column: "Birth date", message: "Must be a date from 2000-01-01 to 2099-12-31" },
    ]);
    expect((await familyOf("F-20"))?.students).toEqual([{ idNumber: "S-20", firstName: "Eva", level: null }]);
    expect((await familyOf("F-21"))?.students).toEqual([{ idNumber: "S-26", firstName: "Jo", level: null }]);
  });

  it("the school's parent limit per family holds: a parent beyond it is a row error naming the limit", async () => {
    const { process } = await runImport(
      "/api/v1/family/upload-file",
      await xlsx(FAMILY_COLUMNS, [
        ["F-30", "Treinta", "S-30", "Kai", "T", null, null, phone(30), "A", "T", null, phone(31), "B", "T", null],
        ["F-30", "Treinta", "S-31", "Lia", "T", null, null, phone(30), null, null, null, phone(32), "C", "T", null],
      ]),
    );
    expect(process).toMatchObject({ status: "completed", processedRows: 1 });
    expect(process.errors).toEqual([
      {
        row: 3,
        column: "Parent 2 phone",
        message: "This school allows at most 2 parents per family; family F-30 would have 3",
      },
    ]);
    expect((await familyOf("F-30"))?.parents.map((p) => p.phone)).toEqual([phone(30), phone(31)]);
    // Also against the parents already in the database.
    const again = await runImport(
      "/api/v1/family/upload-file",
      await xlsx(FAMILY_COLUMNS, [
        ["F-30", "Treinta", "S-32", "Max", "T", null, null, phone(33), "D", "T", null, null, null, null, null],
      ]),
    );
    expect(again.process.errors).toEqual([
      {
        row: 2,
        column: "Parent 1 phone",
        message: "This school allows at most 2 parents per family; family F-30 would have 3",
      },
    ]);
  });

  it("a deleted student's id number goes to a new student; the deleted one stays as it was, and groups get the new one", async () => {
    const made = await t.request("/api/v1/student", {
      method: "POST",
      token: north,
      school: 1,
      body: { firstName: "Gone", lastName: "Before", idNumber: "S-35" },
    });
    expect(made.status).toBe(201);
    const gone = ((await made.json()) as { id: number }).id;
    expect((await t.request(`/api/v1/student/${gone}`, { method: "DELETE", token: north, school: 1 })).status).toBe(
      204,
    );
    const audits = (await t.db.select({ id: sql<number>`max(${auditLog.id})` }).from(auditLog))[0]?.id ?? 0;

    const row: Cell[] = ["F-35", "Treinta", "S-35", "Nueva", "T", null, null, phone(35), "Ana", "T", null];
    const { process } = await runImport("/api/v1/family/upload-file", await xlsx(FAMILY_COLUMNS, [row]));
    expect(process).toMatchObject({ status: "completed", processedRows: 1, errors: [] });
    const sharing = await t.db
      .select()
      .from(students)
      .where(and(eq(students.schoolId, 1), eq(students.idNumber, "S-35")));
    const fresh = sharing.find((s) => s.id !== gone);
    expect(fresh).toMatchObject({ firstName: "Nueva", deletedAt: null });
    expect(sharing.find((s) => s.id === gone)).toMatchObject({ firstName: "Gone", familyId: null });
    expect(sharing.find((s) => s.id === gone)?.deletedAt).not.toBeNull();
    const written = await t.db
      .select({ entity: auditLog.entity, recordId: auditLog.recordId })
      .from(auditLog)
      .where(and(gt(auditLog.id, audits), inArray(auditLog.entity, ["student", "guardian"])));
    expect(written.filter((w) => w.entity === "student")).toEqual([{ entity: "student", recordId: fresh?.id }]);
    const links = await t.db.select().from(guardians).where(eq(guardians.studentId, gone));
    expect(links).toEqual([]);

    // The same row again updates the new student only.
    const renamed = await runImport(
      "/api/v1/family/upload-file",
      await xlsx(FAMILY_COLUMNS, [[...row.slice(0, 3), "Nuevísima", ...row.slice(4)]]),
    );
    expect(renamed.process).toMatchObject({ status: "completed", processedRows: 1, errors: [] });
    const [kept] = await t.db.select().from(students).where(eq(students.id, gone));
    const [updated] = await t.db
      .select()
      .from(students)
      .where(eq(students.id, fresh?.id ?? 0));
    expect([kept?.firstName, updated?.firstName]).toEqual(["Gone", "Nuevísima"]);
    const groupFile = await runImport(
      "/api/v1/group/upload-file",
      await xlsx(GROUP_COLUMNS, [["3Z", "elementary", "2026-2027", null, null, "S-35"]]),
    );
    expect(groupFile.process).toMatchObject({ status: "completed", processedRows: 1, errors: [] });
    const inGroup = await t.db
      .select({ studentId: groupStudents.studentId })
      .from(groupStudents)
      .innerJoin(groups, eq(groups.id, groupStudents.groupId))
      .where(and(eq(groups.schoolId, 1), eq(groups.name, "3Z")));
    expect(inGroup).toEqual([{ studentId: fresh?.id }]);
  });

  it("another school's document, or none, is a 404 and nothing is queued", async () => {
    const theirs = await (async () => {
      const slug = `2/documents/theirs-${++n}.xlsx`;
      const res = await t.request("/api/v1/documents", {
        method: "POST",
        token: south,
        school: 2,
        body: { name: "Theirs", slug },
      });
      return ((await res.json()) as { id: number }).id;
    })();
    const before = sent.length;
    for (const path of ["/api/v1/family/upload-file", "/api/v1/group/upload-file"]) {
      for (const documentId of [theirs, 999999]) {
        const res = await t.request(path, { method: "POST", token: north, school: 1, body: { documentId } });
        expect(res.status).toBe(404);
        expect((await problem(res)).detail).toBe(`Document ${documentId} not found`);
      }
    }
    expect(sent.length).toBe(before);
  });
});

describe("POST /api/v1/group/upload-file", () => {
  it("creates or updates groups by school year and name, with their teachers and students; row errors", async () => {
    await runImport(
      "/api/v1/family/upload-file",
      await xlsx(FAMILY_COLUMNS, [
        ["F-40", "Cuarenta", "S-40", "Nia", "C", null, null, null, null, null, null, null, null, null, null],
        ["F-40", "Cuarenta", "S-41", "Oto", "C", null, null, null, null, null, null, null, null, null, null],
      ]),
    );
    const { process } = await runImport(
      "/api/v1/group/upload-file",
      await xlsx(GROUP_COLUMNS, [
        ["4A", "primaria", "2026-2027", 4, DEMO.northTeacher.phone, "S-40, S-41"],
        ["4B", "high", "2026-2027", null, null, null],
        ["4C", "elementary", "2026-2027", null, `${DEMO.northParent.phone}`, "S-40, NOPE"],
        ["4A", "elementary", "2026-2027", null, null, null],
        ["", "elementary", "2026", 13, null, null],
      ]),
    );
    expect(process).toMatchObject({ entity: "groups", status: "completed", totalRows: 5, processedRows: 1 });
    expect(process.errors).toEqual([
      { row: 3, column: "Level", message: "The school does not offer the level high; it offers elementary, middle" },
      { row: 4, column: "Teacher phones", message: `Not teachers of this school: ${DEMO.northParent.phone}` },
      { row: 4, column: "Student id numbers", message: "No student of this school has the id number NOPE" },
      { row: 5, column: "Name", message: "Group 4A of 2026-2027 is already in an earlier row of the file" },
      { row: 6, column: "Name", message: "Required" },
      { row: 6, column: "School year", message: "Expected a school year like 2026-2027" },
      { row: 6, column: "Grade", message: "Expected a whole number from 1 to 12" },
    ]);
    const group = async () => {
      const [g] = await t.db
        .select()
        .from(groups)
        .where(and(eq(groups.schoolId, 1), eq(groups.schoolYear, "2026-2027"), eq(groups.name, "4A")));
      if (!g) return undefined;
      const ts = await t.db.select().from(groupTeachers).where(eq(groupTeachers.groupId, g.id));
      const ss = await t.db.select().from(groupStudents).where(eq(groupStudents.groupId, g.id));
      return { level: g.level, grade: g.grade, teachers: ts.length, students: ss.length };
    };
    expect(await group()).toEqual({ level: "elementary", grade: 4, teachers: 1, students: 2 });
    // Again, with a change: updated, links not duplicated.
    const again = await runImport(
      "/api/v1/group/upload-file",
      await xlsx(GROUP_COLUMNS, [["4A", "middle", "2026-2027", 5, DEMO.northTeacher.phone, "S-41"]]),
    );
    expect(again.process).toMatchObject({ status: "completed", processedRows: 1, errors: [] });
    expect(await group()).toEqual({ level: "middle", grade: 5, teachers: 1, students: 2 });
    expect((await t.db.select({ n: sql<number>`count(*)` }).from(groups).where(eq(groups.name, "4A")))[0]?.n).toBe(1);
  });
});

describe("POST /api/v1/group/upload-file: names whatever their case or accents", () => {
  it("a row names the group of the year spelt otherwise: updated, never a second group; in one file, an earlier row", async () => {
    const first = await runImport(
      "/api/v1/group/upload-file",
      await xlsx(GROUP_COLUMNS, [["Coro Música", "elementary", "2026-2027", null, null, null]]),
    );
    expect(first.process).toMatchObject({ status: "completed", processedRows: 1, errors: [] });
    const { process } = await runImport(
      "/api/v1/group/upload-file",
      await xlsx(GROUP_COLUMNS, [
        ["CORO MUSICA", "middle", "2026-2027", 2, null, null],
        ["coro música", "middle", "2026-2027", 3, null, null],
      ]),
    );
    expect(process).toMatchObject({ status: "completed", processedRows: 1 });
    expect(process.errors).toEqual([
      {
        row: 3,
        column: "Name",
        message: "Group coro música of 2026-2027 is already in an earlier row of the file",
      },
    ]);
    const coros = await t.db
      .select({ name: groups.name, level: groups.level, grade: groups.grade })
      .from(groups)
      .where(and(eq(groups.schoolId, 1), eq(groups.nameSearch, "coro musica")));
    expect(coros).toEqual([{ name: "Coro Música", level: "middle", grade: 2 }]);
  });
});

describe("5,000 families", () => {
  it("imports a file of 5,000 rows (students with two parents each) end to end", async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => [
      `FB-${Math.floor(i / 2)}`,
      `Family ${Math.floor(i / 2)}`,
      `SB-${i}`,
      `Student ${i}`,
      `Last ${Math.floor(i / 2)}`,
      i % 2 ? "elementary" : "middle",
      "2015-06-01",
      phone(100_000 + Math.floor(i / 2) * 2),
      "Mother",
      `Last ${Math.floor(i / 2)}`,
      "mother",
      phone(100_001 + Math.floor(i / 2) * 2),
      "Father",
      `Last ${Math.floor(i / 2)}`,
      "father",
    ]);
    const bytes = await xlsx(FAMILY_COLUMNS, rows);
    const started = performance.now();
    const { process } = await runImport("/api/v1/family/upload-file", bytes);
    const ms = performance.now() - started;
    console.info(`5,000-row family import: ${Math.round(ms)} ms end to end (${bytes.length} bytes of .xlsx)`);
    expect(process).toMatchObject({ status: "completed", totalRows: 5000, processedRows: 5000, errors: [] });
    const [c] = await t.db
      .select({
        families: sql<number>`(SELECT count(*) FROM family WHERE school_id = 1 AND family_number LIKE 'FB-%')`,
        students: sql<number>`(SELECT count(*) FROM student WHERE school_id = 1 AND id_number LIKE 'SB-%')`,
        parents: sql<number>`(SELECT count(*) FROM parent p JOIN family f ON f.id = p.family_id WHERE f.family_number LIKE 'FB-%')`,
        guardians: sql<number>`(SELECT count(*) FROM guardian g JOIN student s ON s.id = g.student_id WHERE s.id_number LIKE 'SB-%')`,
      })
      .from(sql`(SELECT 1)`);
    expect(c).toEqual({ families: 2500, students: 5000, parents: 5000, guardians: 10000 });
  }, 120_000);
});

describe("GET /api/v1/bulk-process/template/{families,groups}", () => {
  it.each([
    ["families", FAMILY_COLUMNS],
    ["groups", GROUP_COLUMNS],
  ])("%s: an .xlsx the reader reads, with the importer's headers", async (entity, columns) => {
    const res = await t.request(`/api/v1/bulk-process/template/${entity}`, { token: north, school: 1 });
    expect(res.status).toBe(200);
    const rows = readXlsx(new Uint8Array(await res.arrayBuffer()));
    expect(rows[0]).toEqual(columns);
    expect(rows).toHaveLength(2);
  });
});

describe("the audit rows the imports wrote", () => {
  it("are { old, new } pairs of typed values", async () => {
    const rows = await t.db.select().from(auditLog);
    expect(rows.length).toBeGreaterThan(10);
    expect(auditShapeProblems(rows)).toEqual([]);
  });
});
