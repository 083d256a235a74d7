/**
 * The route students import: `POST /api/v1/route-student/upload-file` with a real .xlsx, run by the
 * bulk consumer. Riders created with their weekday rows, row errors (unknown route, stop or student,
 * a level not served, a weekday taken by another route, named), weekdays written every way a
 * spreadsheet says them, and a file imported again updating rather than doubling.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { and, eq, gt } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog } from "../src/db/schema/audit-log";
import { routeStudentDays, routeStudents } from "../src/db/schema/transport";
import worker from "../src/index";
import { type Cell, readXlsx } from "../src/lib/xlsx";
import { consumeBulkProcess } from "../src/modules/bulk-process/consumer";
import { parseWeekdays } from "../src/modules/route-student/api";
import { auditShapeProblems } from "./audit-shape";
import { confirmedAbsence, schoolDate } from "./fixtures/modules/exit-permission";
import { makeRider, makeRoute } from "./fixtures/modules/route-student";
import { DEMO, makeTestApp, recordingBulkQueue } from "./helpers";
import { xlsx as sheet } from "./sheets";

const NORTH = 1;
const { sent, queue: recordingQueue } = recordingBulkQueue();
const t = makeTestApp({ queues: { bulk: recordingQueue } });
const admin = () => t.token(DEMO.northAdmin.id, { [NORTH]: "all" });

const COLUMNS = ["Route", "Stop", "Student id number", "Weekdays"];
const xlsx = (rows: Cell[][], columns = COLUMNS) => sheet(columns, rows, "Riders");

type Process = {
  id: number;
  status: string;
  totalRows: number;
  processedRows: number;
  errors: { row: number; column?: string; message: string }[];
};

let n = 0;
/**
 * Uploads and runs an import. The consumer runs in the Worker's own queue handler (its deps from the
 * environment, the real clock), or, `withTestClock`, with the test app's deps, for what depends on
 * the school's today as the test clock has it.
 */
async function runImport(bytes: Uint8Array, withTestClock = false): Promise<Process> {
  const token = await admin();
  const slug = `${NORTH}/documents/route-students-${++n}-${Date.now().toString(36)}.xlsx`;
  const doc = await t.request("/api/v1/documents", {
    method: "POST",
    token,
    school: NORTH,
    body: { name: "Riders", slug },
  });
  expect(doc.status).toBe(201);
  await env.DOCUMENTS.put(slug, bytes);
  const documentId = ((await doc.json()) as { id: number }).id;
  const res = await t.request("/api/v1/route-student/upload-file", {
    method: "POST",
    token,
    school: NORTH,
    body: { documentId },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const created = (await res.json()) as Process;
  const message = { id: `route-students-${created.id}`, body: sent.at(-1), timestamp: new Date(), attempts: 1 };
  if (withTestClock) {
    await consumeBulkProcess(t.deps, { ...message, ack: () => {}, retry: () => {} });
  } else {
    const batch = createMessageBatch("school-bulk", [message]);
    const ctx = createExecutionContext();
    await (worker as ExportedHandler<Env>).queue?.(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).retryMessages).toEqual([]);
  }
  const read = await t.request(`/api/v1/bulk-process/${created.id}`, { token, school: NORTH });
  return (await read.json()) as Process;
}

const ridersOf = (routeId: number) => t.db.select().from(routeStudents).where(eq(routeStudents.routeId, routeId));

describe("weekdays as a spreadsheet writes them", () => {
  it.each([
    ["Mon, Tue", [1, 2]],
    ["1,2,5", [1, 2, 5]],
    ["1", [1]],
    ["Monday-Friday", [1, 2, 3, 4, 5]],
    ["lun, mié, vie", [1, 3, 5]],
    ["Lunes a Viernes", [1, 2, 3, 4, 5]],
    ["martes y jueves", [2, 4]],
    ["Wed Mon", [1, 3]],
    ["1 - 3", [1, 2, 3]],
  ])("%s", (cell, days) => {
    expect(parseWeekdays(cell)).toEqual({ days });
  });

  it.each(["", "Funday", "8", "Fri-Mon", "0"])("refuses %j", (cell) => {
    expect(parseWeekdays(cell)).toHaveProperty("error");
  });
});

describe("POST /api/v1/route-student/upload-file", () => {
  it("imports riders, reports refused rows, and updates on a second import", async () => {
    const since = (await t.db.select({ id: auditLog.id }).from(auditLog)).reduce((m, r) => Math.max(m, r.id), 0);
    const home = await makeRoute(t, NORTH, { stops: 2 });
    const high = await makeRoute(t, NORTH, { levels: ["high"] });
    const other = await makeRoute(t, NORTH);
    const [a, b, c, d, e] = [
      await makeRider(t, NORTH),
      await makeRider(t, NORTH),
      await makeRider(t, NORTH),
      await makeRider(t, NORTH),
      await makeRider(t, NORTH),
    ];
    // d already rides another route home on Wednesdays.
    const taken = await t.request("/api/v1/route-student", {
      method: "POST",
      token: await admin(),
      school: NORTH,
      body: { routeId: other.id, studentId: d.id, stopId: other.stops[0]?.id, weekdays: [3] },
    });
    expect(taken.status).toBe(201);
    const [stop1, stop2] = home.stops;
    const rows: Cell[][] = [
      [home.name, stop1?.name ?? "", a.idNumber, "Mon, Tue"],
      [home.name.toUpperCase(), "2", b.idNumber, "lun-vie"],
      ["No such route", "x", c.idNumber, "1"],
      [home.name, "No such stop", c.idNumber, "1"],
      [home.name, stop1?.name ?? "", "NOPE-1", "1"],
      [high.name, high.stops[0]?.name ?? "", c.idNumber, "1"],
      [home.name, stop1?.name ?? "", d.idNumber, "Wed, Thu"],
      [home.name, stop1?.name ?? "", e.idNumber, "Sat"],
      [home.name, stop1?.name ?? "", a.idNumber, "Fri"],
      [home.name, stop1?.name ?? "", c.idNumber, "Funday"],
    ];
    const first = await runImport(await xlsx(rows));
    expect(first).toMatchObject({ status: "completed", totalRows: 10, processedRows: 2 });
    expect(first.errors.map((e) => [e.row, e.column])).toEqual([
      [4, "Route"],
      [5, "Stop"],
      [6, "Student id number"],
      [7, "Student id number"],
      [8, "Weekdays"],
      [9, "Weekdays"],
      [10, "Student id number"],
      [11, "Weekdays"],
    ]);
    expect(first.errors.find((e) => e.row === 8)?.message).toBe(
      `${d.firstName} Rider already rides '${other.name}' (route ${other.id}) on Wednesday`,
    );
    expect(first.errors.find((e) => e.row === 7)?.message).toMatch(/serves high/);
    const riders = await ridersOf(home.id);
    expect(riders.map((r) => [r.studentId, r.stopId, r.weekdays]).sort()).toEqual(
      [
        [a.id, stop1?.id, 0b11],
        [b.id, stop2?.id, 0b11111],
      ].sort(),
    );
    const days = await t.db.select().from(routeStudentDays).where(eq(routeStudentDays.studentId, b.id));
    expect(days.map((x) => x.weekday).sort()).toEqual([1, 2, 3, 4, 5]);

    // Again, with a's stop and b's weekdays changed: updated, not doubled.
    const again = await runImport(
      await xlsx([
        [home.name, "2", a.idNumber, "Mon, Tue"],
        [home.name, "2", b.idNumber, "Mon"],
      ]),
    );
    expect(again).toMatchObject({ status: "completed", processedRows: 2, errors: [] });
    const after = await ridersOf(home.id);
    expect(after.map((r) => [r.studentId, r.stopId, r.weekdays]).sort()).toEqual(
      [
        [a.id, stop2?.id, 0b11],
        [b.id, stop2?.id, 0b1],
      ].sort(),
    );
    const bDays = await t.db.select().from(routeStudentDays).where(eq(routeStudentDays.studentId, b.id));
    expect(bDays.map((x) => x.weekday)).toEqual([1]);

    const audit = await t.db
      .select()
      .from(auditLog)
      .where(and(gt(auditLog.id, since), eq(auditLog.entity, "route-student")));
    const imported = audit.filter((r) => r.actorType === "import");
    expect(imported.map((r) => r.action).sort()).toEqual(["create", "create", "update", "update"]);
    expect(auditShapeProblems(audit)).toEqual([]);
  });

  it("needs route-student.write besides bulk-process.write", async () => {
    const token = await t.token(DEMO.northAdmin.id, { [NORTH]: ["bulk-process.write", "document.write"] });
    const slug = `${NORTH}/documents/route-students-denied-${Date.now().toString(36)}.xlsx`;
    const doc = await t.request("/api/v1/documents", {
      method: "POST",
      token,
      school: NORTH,
      body: { name: "R", slug },
    });
    expect(doc.status).toBe(201);
    const documentId = ((await doc.json()) as { id: number }).id;
    const res = await t.request("/api/v1/route-student/upload-file", {
      method: "POST",
      token,
      school: NORTH,
      body: { documentId },
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/route-student\.write/);
  });

  it("fails a file without its columns, and offers a template", async () => {
    const failed = await runImport(await xlsx([["x", "y"]], ["Route", "Stop"]));
    expect(failed.status).toBe("failed");
    expect(failed.errors.map((e) => e.message)).toEqual([
      "Missing column Student id number",
      "Missing column Weekdays",
    ]);
    const res = await t.request("/api/v1/bulk-process/template/route-students", {
      token: await admin(),
      school: NORTH,
    });
    expect(res.status).toBe(200);
    const [header] = readXlsx(new Uint8Array(await res.arrayBuffer()));
    expect(header).toEqual(COLUMNS);
  });
});

describe("seats and printed lists", () => {
  it("refuses riders beyond the vehicle's seats, naming the weekday, and moves a printed list to its next version", async () => {
    const route = await makeRoute(t, NORTH, { seats: 2, weekdays: [1] });
    const riders = await Promise.all([1, 2, 3].map(() => makeRider(t, NORTH)));
    // A Monday far ahead: the import runs on the Worker's own clock.
    const monday = "2099-03-02";
    const list = async (query: string) =>
      t.request(`/api/v1/route-availability-student/route/${route.id}/final-status?date=${monday}&${query}`, {
        token: await admin(),
        school: NORTH,
      });
    expect(((await (await list("print=true")).json()) as { printedVersion: number }).printedVersion).toBe(1);

    const done = await runImport(await xlsx(riders.map((r) => [route.name, "1", r.idNumber, "Mon"])));
    expect(done.errors.map((e) => [e.row, e.message])).toEqual([
      [4, `Route ${route.name} has no seat left on Monday: its vehicle seats 2`],
    ]);
    expect((await ridersOf(route.id)).map((r) => r.studentId).sort()).toEqual([riders[0]?.id, riders[1]?.id].sort());
    const after = (await (await list("sinceVersion=1")).json()) as {
      version: number;
      changes: { change: string; studentId: number }[];
    };
    expect(after.version).toBe(2);
    expect(after.changes.map((c) => [c.change, c.studentId]).sort()).toEqual(
      [
        ["added", riders[0]?.id],
        ["added", riders[1]?.id],
      ].sort(),
    );

    // The same file again changes nothing: no seat is taken twice, no change is recorded.
    const again = await runImport(await xlsx(riders.slice(0, 2).map((r) => [route.name, "1", r.idNumber, "Mon"])));
    expect(again.errors).toEqual([]);
    const still = (await (await list("sinceVersion=1")).json()) as { version: number; changes: unknown[] };
    expect(still.version).toBe(2);
    expect(still.changes).toHaveLength(2);
  });
});

describe("an import that puts a child on a bus home moves their confirmed day changes with them", () => {
  it("a confirmed absence: the new bus's final list has the child away, not riding", async () => {
    const route = await makeRoute(t, NORTH);
    const child = await makeRider(t, NORTH, { level: "elementary" });
    const date = schoolDate(t);
    await confirmedAbsence(t, NORTH, await admin(), child.id, date);
    const row = [route.name, route.stops[0]?.name ?? "", child.idNumber, "Mon-Fri"];
    const done = await runImport(await xlsx([row]), true);
    expect(done.errors).toEqual([]);
    const list = await t.request(`/api/v1/route-availability-student/route/${route.id}/final-status?date=${date}`, {
      token: await admin(),
      school: NORTH,
    });
    expect(list.status).toBe(200);
    const { students } = (await list.json()) as { students: { studentId: number; status: string }[] };
    expect(students.find((s) => s.studentId === child.id)?.status).toBe("away");
  });
});
